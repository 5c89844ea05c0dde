"""Your own retriever: a Python function, `module:function` on the CLI, or a saved TREC run file.

A search function is called once per question as `search_fn(question, k)` and returns ids, or
(id, score) pairs, best first. Ids without scores get descending pseudo-scores (k, k-1, ...) so the
order they came in is the order they are ranked in. A function that raises, calls `sys.exit()`,
exceeds its time limit or returns something unreadable for one question records an error for that
question alone; the other questions keep their results (issue 9). Unreadable includes a score that
is NaN or infinite and an id returned twice: both would decide ranks silently, so they are refused,
as a run file with either is. Spec: `package.module:function[?timeout=SECONDS]`; the CLI's `--timeout`
sets the same option for every function of the run.

The time limit is on by default (`DEFAULT_TIMEOUT`, 60 s): a function that hangs must not hang the
run. In the main thread it is a SIGALRM timer, so the function runs on the thread that called it
(a sqlite connection or another thread-bound resource keeps working) and is interrupted where it
waits; elsewhere the call runs in a daemon thread that is abandoned when its time is up.
A module that cannot be imported (missing, a syntax error, an exception at import) is one InputError.
Saved TREC runs: `retrievers.runfile`.
"""

from __future__ import annotations

import importlib
import itertools
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.limits import NUMBERS
from goldeval.ranking import ranked
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.options import Option, OptionSet, split_spec
from goldeval.run import Run
from goldeval.textsafe import cut
from goldeval.types import QuestionId

SearchFn = Callable[[str, int], Iterable[Any]]
"""`search_fn(question, k)` -> ids, or (id, score) pairs, best first."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a search function may take for one question before that question is an error."""

OPTIONS = OptionSet("module:function", "package.module:function[?timeout=SECONDS]", (
    Option("timeout", "float", "time limit per question in seconds; --timeout sets it", DEFAULT_TIMEOUT,
           low=0.0, low_open=True, high=NUMBERS["timeout"].high),
))


class _TimedOut(Exception):
    """This call ran past its limit (not the function's own TimeoutError, e.g. from a socket)."""


class _Deadline(BaseException):
    """Raised inside the search function when its time is up: a BaseException, so the function's own
    `except Exception` cannot swallow it and carry on past its limit."""


class FunctionRetriever:
    """Adapts a per-question search function to the Retriever protocol."""

    def __init__(self, fn: SearchFn, *, name: str | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                 spec: str | None = None) -> None:
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", "search_fn"))
        self.timeout = timeout
        self.spec = spec

    @property
    def config(self) -> dict[str, object]:
        """Which function (`module:qualified name`) and its time limit."""
        module, qualname = getattr(self.fn, "__module__", None), getattr(self.fn, "__qualname__", None)
        target = f"{module}:{qualname}" if module and qualname else repr(self.fn)
        return {"spec": self.spec, "kind": "function", "target": target, "timeout": self.timeout,
                "options": {"timeout": self.timeout}}

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        run = Run(self.name)
        for qid, text in queries.items():
            self.record(run, qid, self.answer(text, top_k))
        return run

    def answer(self, text: str, top_k: int) -> list[tuple[str, float]] | str:
        """One question's results, or why it has none (an error of that question alone)."""
        try:
            return normalise_results(self._call(text, top_k), top_k)
        except _TimedOut:
            return f"timed out after {self.timeout:g} s (raise it with --timeout SECONDS)"
        except SystemExit as exc:  # the user's code must not end goldeval, silently, with its code
            return f"the search function called sys.exit({exc.code!r})"
        except Exception as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
            return cut(f"{type(exc).__name__}: {exc}")

    @staticmethod
    def record(run: Run, qid: QuestionId, answer: list[tuple[str, float]] | str) -> None:
        if isinstance(answer, str):
            run.errors[qid] = answer
        else:
            run.add(qid, answer)

    def _call(self, text: str, top_k: int) -> Any:
        if not self.timeout:
            return self.fn(text, top_k)
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
            return self._call_with_alarm(text, top_k)
        return self._call_in_thread(text, top_k)

    def _call_with_alarm(self, text: str, top_k: int) -> Any:
        """The call on this thread, interrupted by SIGALRM after `timeout` seconds."""
        done = False

        def expire(signum: int, frame: Any) -> None:
            if not done:
                raise _Deadline

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, float(self.timeout or 0))
        try:
            value = self.fn(text, top_k)
            done = True
            return value
        except _Deadline:
            raise _TimedOut from None
        finally:
            done = True
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def _call_in_thread(self, text: str, top_k: int) -> Any:
        # A daemon thread, not an executor worker: Python joins executor threads at exit, so one
        # call stuck forever would hold the whole command; a daemon thread is abandoned instead.
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["value"] = self.fn(text, top_k)
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
                outcome["error"] = exc

        worker = threading.Thread(target=call, name=f"goldeval-{self.name}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            raise _TimedOut
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")


def normalise_results(raw: Any, top_k: int) -> list[tuple[str, float]]:
    """Turn a search function's answer into at most `top_k` (id, score) pairs; raise ValueError on garbage.

    This is where every path of a per-question retriever meets (search functions, LangChain, LlamaIndex,
    `http:`), so the per-question cap is here: an answer is read lazily up to the `top_k` results asked for
    (`first_results`), and an endless generator costs `top_k` items, not all the memory (issue 20). A mapping
    of id -> score has no order: its best `top_k` by the one ranking rule are kept."""
    if isinstance(raw, Mapping):
        return ranked((str(k), _score(v, str(k))) for k, v in raw.items())[:top_k]
    if raw is None or isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        raise ValueError(f"expected a list of ids or (id, score) pairs, got {type(raw).__name__}: {raw!r:.80}")
    items = first_results(raw, top_k)
    out: list[tuple[str, float]] = []
    for position, item in enumerate(items):
        if isinstance(item, str):
            out.append((item, float(len(items) - position)))
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            out.append((item[0], _score(item[1], item[0])))
        else:
            raise ValueError(f"result {position + 1} is {item!r:.80}; expected an id or an (id, score) pair")
    _refuse_repeats(out)
    return out


def first_results(results: Iterable[Any], top_k: int) -> list[Any]:
    """The first `top_k` items of a retriever's answer, best first, read lazily: nothing past them is asked for
    (`list(docs)[:k]` read an endless iterable until memory ran out)."""
    return list(itertools.islice(results, max(0, top_k)))


def _score(value: Any, pid: str = "") -> float:
    try:
        score = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"score {value!r:.40} is not a number") from None
    if not math.isfinite(score):  # NaN or infinity would decide the ranking silently
        raise ValueError(f"score {score} of `{pid}` is not a finite number" if pid else f"score {score} is not a finite number")
    return score


def _refuse_repeats(pairs: list[tuple[str, float]]) -> None:
    """An id twice in one answer would take two ranks: refused, as a run file with a repeated id is."""
    first: dict[str, int] = {}
    for position, (pid, _) in enumerate(pairs, start=1):
        if pid in first:
            raise ValueError(f"id `{pid:.80}` is returned twice (results {first[pid]} and {position}); "
                             "each id may appear once")
        first[pid] = position


def build(spec: str, ctx: BuildContext) -> FunctionRetriever:
    """Factory for `package.module:function[?timeout=S]` (the module is imported from the current
    directory too); `module:object` naming a LangChain or LlamaIndex retriever is adapted as it is."""
    target, own = split_spec(spec)
    values = OPTIONS.resolve(own, ctx.options, spec=spec)
    module_name, _, attr = target.partition(":")
    found = import_attribute(module_name, attr, spec, what="retriever",
                             hint="run from the folder that holds the module, or install it; built-in names: bm25, dense:MODEL")
    from goldeval.retrievers.adapters import adapt

    adapted = adapt(found, name=attr, timeout=values.number("timeout"), spec=spec)
    if adapted is not None:  # a LangChain or LlamaIndex retriever object (issue 13)
        return adapted
    if not callable(found):
        raise InputError(f"retriever {spec!r}: {module_name} has no function {attr!r} (it is a {type(found).__name__}, "
                         "not a LangChain or LlamaIndex retriever either)", value=spec,
                         hint="expected module:function, or a LangChain or LlamaIndex retriever object")
    return FunctionRetriever(found, name=attr, timeout=values.number("timeout"), spec=spec)


def import_function(module_name: str, attr: str, spec: str, *, what: str, hint: str) -> Callable[..., Any]:
    """`module:function` of the user's, imported from the current folder too; anything that goes wrong
    (not found, a syntax error, an exception or sys.exit() at import, no such function) is one InputError."""
    fn = import_attribute(module_name, attr, spec, what=what, hint=hint)
    if not callable(fn):
        raise InputError(f"{what} {spec!r}: {module_name} has no function {attr!r}", value=spec,
                         hint="expected module:function naming a function of that module")
    return fn  # type: ignore[no-any-return]


def import_attribute(module_name: str, attr: str, spec: str, *, what: str, hint: str) -> Any:
    """`module:name` of the user's, any object, imported from the current folder too (as `import_function`)."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import {what} function {spec!r}: {exc}", value=spec, hint=hint) from None
    except SyntaxError as exc:
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else module_name
        raise InputError(f"module {module_name!r} for {what} {spec!r} has a syntax error at {where}: {exc.msg}",
                         value=spec, hint="fix the module; `python -m py_compile FILE` shows the same error") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's module failed while importing
        raise InputError(f"importing module {module_name!r} for {what} {spec!r} failed: "
                         f"{type(exc).__name__}: {cut(str(exc), 300)}", value=spec,
                         hint="the module raises when imported; run `python -c 'import "
                         f"{module_name}'` to see why") from None
    if not hasattr(module, attr):
        raise InputError(f"{what} {spec!r}: {module_name} has no function {attr!r}", value=spec,
                         hint="expected module:function naming a function of that module")
    return getattr(module, attr)
