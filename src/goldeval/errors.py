"""Errors that say what went wrong, where, and how to fix it.

Exit codes (STYLE.md, docs/reliability.md):
0 ok; 1 the evaluation ran and a gate failed; 2 bad input, usage, or an output that cannot be written;
3 the evaluation ran but a retriever failed on some questions (they are flagged and score 0);
4 an internal error, a bug in goldeval (one line; GOLDEVAL_DEBUG=1 shows the traceback);
128 + N killed by signal N after cleaning up (130 Ctrl+C, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_RAN_WITH_ERRORS = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130


class GoldevalError(Exception):
    """Base class of every error goldeval raises on purpose; the CLI prints it and exits 2."""

    exit_code = EXIT_BAD_INPUT


class InputError(GoldevalError):
    """Bad user input: names the file, the line, the bad value and the likely fix."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        value: object = None,
        hint: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.value = value
        self.hint = hint
        self.reason = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        text = where + self.reason
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class InputErrors(InputError):
    """Several input problems found in one pass (for example every bad line of a golden set)."""

    def __init__(self, problems: list[InputError], *, summary: str) -> None:
        self.problems = problems
        body = "\n".join(f"- {p}" for p in problems)
        super().__init__(f"{summary}\n{body}")


class WriteError(InputError, OSError):
    """An output or workspace file that cannot be written: names the path and the cause (exit 2).

    Also an OSError, so code that already degrades on OSError (a cache that can live without a
    write) keeps doing so.
    """


class RetrieverError(GoldevalError):
    """A retriever failed for a specific question."""


class MissingExtraError(GoldevalError):
    """An optional dependency is not installed; the message says which extra brings it."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the Python package '{package}', which is not installed.\n"
            f"  hint: pip install 'goldeval[{extra}]'"
        )


def require(module: str, *, extra: str, purpose: str, package: str | None = None) -> ModuleType:
    """Import an optional module lazily, raising MissingExtraError with an install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(package or module, extra, purpose) from exc


def optional(module: str) -> ModuleType | None:
    """Import a module an extra may install that only makes something faster (orjson, isal: the `fast` extra),
    or None without it: the caller then takes its own way to the same result. What cannot go without its module
    uses `require`."""
    try:
        importlib.import_module(module.partition(".")[0])  # its package, switched off or absent: the module too
        return importlib.import_module(module)
    except ImportError:
        return None
