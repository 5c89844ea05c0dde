"""Read one text file safely: the checks every loader shares, in one place.

A file is usable when it is not too large, not binary (no NUL byte), valid UTF-8 and not blank.
`read_text` says why not, so a folder loader can skip a file with a warning instead of failing
halfway through a corpus; `read_input_text` raises that reason as an `InputError` instead, for the
one file a command was given (a golden set, qrels, topics, a collection file).

Only regular files are read (issue 9): a FIFO would block forever and `/dev/zero` would fill the
memory, so both are refused (skipped, in a folder) before a byte is read, and an input file past
`MAX_INPUT_BYTES` is refused with its size.

JSON inside an input file goes through `json_value` (one value) or `read_json_lines` (a JSONL file): every
way JSON can fail to be read (malformed, an integer past Python's 4,300 digits, nesting too deep to
parse, nesting past `goldeval.limits.NESTING`, a line past `LINE_CHARS`) is one `InputError` naming the file
and the line, never an internal error (issue 20); a TOML settings file (a sweep file) is read by `read_toml`
with the same checks. Every bound is declared in `goldeval.limits`.
"""

from __future__ import annotations

import json
import stat
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.limits import INPUT_BYTES, LINE_CHARS, NESTING
from goldeval.textsafe import cut

DEFAULT_MAX_BYTES = 5_000_000
"""Documents larger than this are skipped (5 MB: far above any single documentation page); the CLI's
`--max-doc-size` and `load_corpus(max_bytes=)` change it."""
MAX_INPUT_BYTES = INPUT_BYTES
"""An input file (golden set, qrels, topics) past this is refused rather than read into memory
(`goldeval.limits`, where every bound is declared)."""
SIZE_HINT = "raise the limit with --max-doc-size SIZE (max_bytes= in Python)"


@dataclass(frozen=True)
class Skipped:
    """Why a file was not used: `kind` is one of empty, binary, non-utf8, too-large, unreadable."""

    path: Path
    kind: str
    detail: str
    offset: int | None = None
    """For non-UTF-8 text: the offset of the first bad byte (to name its line)."""

    def message(self, shown: str) -> str:
        return f"skipped {shown}: {self.detail}"


def read_text(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> str | Skipped:
    """Return the file's text (UTF-8, newlines normalised to `\\n`, BOM removed), or why not."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return Skipped(path, "unreadable", "not a regular file (a FIFO, socket or device)")
        if info.st_size > max_bytes:
            return Skipped(path, "too-large", f"{info.st_size:,} bytes is over the {max_bytes:,}-byte limit "
                           f"({SIZE_HINT})")
        data = path.read_bytes()
    except OSError as exc:
        return Skipped(path, "unreadable", f"cannot be read ({exc.strerror or exc})")
    return decode_text(path, data)


def read_input_text(path: Path, what: str, *, empty_hint: str | None = None,
                    max_bytes: int = MAX_INPUT_BYTES, empty_ok: bool = False) -> str:
    """A whole input file as text (UTF-8, BOM removed, newlines normalised), or an InputError.

    `what` names the file in messages ("golden set", "qrels file"). The size limit is generous: qrels
    of a test collection run to hundreds of megabytes. Blank text is an error; `empty_hint` says what
    to write (`empty_ok=True`: blank text is ""). A FIFO, a socket or a device is refused before it is
    opened.
    """
    check_input_file(path, what, max_bytes=max_bytes)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{what} cannot be read ({exc.strerror or exc})", path=path,
                         hint="check the file's permissions") from None
    text = decode_text(path, data)
    if not isinstance(text, Skipped):
        return text
    if text.kind == "empty" and empty_ok:
        return ""
    line = data.count(b"\n", 0, text.offset) + 1 if text.offset is not None else None
    hint = empty_hint if text.kind == "empty" and empty_hint else "save the file as UTF-8 text"
    raise InputError(f"{what}: {text.detail.removesuffix('; re-save it as UTF-8')}", path=path, line=line,
                     hint=hint)


def json_value(text: str, *, path: Path, line: int | None, what: str, hint: str,
               shown: Callable[[str], str] | None = None) -> Any:
    """One JSON value of an input file (a line of a JSONL file, or a whole file), or one InputError naming the
    file and the line: malformed JSON with its column, a number Python will not read, nesting too deep.
    `shown` makes the text quoted in the error safe to show (a search log's is masked first)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise InputError(f"{what}: malformed JSON ({exc.msg} at column {exc.colno})", path=path, line=where,
                         value=(shown or _quoted)(text), hint=hint) from None
    except RecursionError:
        raise InputError(f"{what}: JSON nested too deeply to read", path=path, line=line, hint=hint) from None
    except ValueError as exc:  # an integer of more than 4,300 digits (CPython's int_max_str_digits)
        raise InputError(f"{what}: a value that cannot be read ({str(exc)[:100]})", path=path, line=line,
                         hint=hint) from None
    _check_nesting(value, path=path, line=line, what=what)
    return value


def _check_nesting(value: Any, *, path: Path, line: int | None, what: str) -> None:
    """InputError when `value` nests lists and objects deeper than `NESTING` levels (a walk without recursion)."""
    level: list[tuple[Any, int]] = [(value, 1)]
    while level:
        item, depth = level.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if children and depth > NESTING:
            raise InputError(f"{what}: nested more than {NESTING} levels deep", path=path, line=line,
                             hint="goldeval's files need a few levels; is this the right file?")
        level.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def read_json_lines(path: Path, what: str, *, hint: str, max_bytes: int = MAX_INPUT_BYTES) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSONL input file. The file is checked first (a
    regular file, at most `max_bytes`, UTF-8 text without NUL bytes; blank is no lines) and the first line
    that is not JSON is one InputError naming it."""
    text = read_input_text(path, what, max_bytes=max_bytes, empty_ok=True)
    for lineno, line in enumerate(text.split("\n"), start=1):
        if len(line) > LINE_CHARS:
            raise InputError(f"{what}: line of {len(line):,} characters, over the {LINE_CHARS:,}-character limit",
                             path=path, line=lineno, hint=hint)
        if line.strip():
            yield lineno, json_value(line, path=path, line=lineno, what=what, hint=hint)


def read_toml(path: Path, what: str, *, hint: str, max_bytes: int) -> dict[str, Any]:
    """A TOML settings file (a sweep file) as a table, read through the same checks (a regular file, at most
    `max_bytes`, UTF-8: a Latin-1 byte names its line), or one InputError naming the file and the line:
    not TOML, or nested past `NESTING` (tomllib recurses, so 60 KB of `[` exhausted the stack)."""
    text = read_input_text(path, what, max_bytes=max_bytes, empty_ok=True)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = getattr(exc, "lineno", None)  # Python 3.14 names the line; before, the message does
        raise InputError(f"{what} is not valid TOML: {exc}", path=path, line=where, hint=hint) from None
    except RecursionError:
        raise InputError(f"{what}: nested too deeply to read", path=path, hint=hint) from None
    _check_nesting(data, path=path, line=None, what=what)
    return data


def _quoted(text: str) -> str:
    """The start of a bad line, as an error quotes it (`textsafe.cut`: the one rule for cutting messages)."""
    return cut(text, 80)


def check_input_file(path: Path, what: str, *, max_bytes: int = MAX_INPUT_BYTES) -> None:
    """InputError unless `path` is a regular file of at most `max_bytes` (checked without reading it)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=path, hint="check the path") from None
    except OSError as exc:
        raise InputError(f"{what} cannot be read ({exc.strerror or exc})", path=path,
                         hint="check the path and its permissions") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{what} is a folder, not a file", path=path, hint="give the file's path")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{what} is not a regular file (a FIFO, socket or device)", path=path,
                         hint="save the input to a file and give its path")
    if info.st_size > max_bytes:
        raise InputError(f"{what} is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit", path=path,
                         hint="is this the right file?")


def decode_text(path: Path, data: bytes) -> str | Skipped:
    """Decode bytes as a text document, or say why they are not one."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return Skipped(path, "non-utf8", "UTF-16 text; re-save it as UTF-8")
    if b"\x00" in data:
        return Skipped(path, "binary", "binary file (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped(path, "non-utf8", f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                       f"{exc.start}); re-save it as UTF-8", offset=exc.start)
    text = normalise_newlines(text.removeprefix("\ufeff"))
    if not text.strip():
        return Skipped(path, "empty", "empty file")
    return text


def normalise_newlines(text: str) -> str:
    """`\\r\\n` and lone `\\r` become `\\n`, so offsets do not depend on the platform that wrote it."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def summarise(skipped: list[Skipped], total: int) -> str:
    """One counted line: `skipped 3 of 20 files: 1 empty, 2 binary`."""
    counts: dict[str, int] = {}
    for item in skipped:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    parts = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    return f"skipped {len(skipped)} of {total} files: {parts}"
