"""Load a JSONL corpus: one JSON object a line with `id`, `text` and an optional `title`.

Every problem is reported at once (malformed JSON, a missing or wrong-typed field, duplicate
ids), each with the file, the line and the bad value. Blank lines are ignored; a record whose text
is empty is skipped with a warning, as an empty file in a folder is.

Hostile lines (issue 9): a record past the size limit (`max_bytes`, the CLI's `--max-doc-size`) is
skipped with a warning without being read into memory whole; JSON nested too deeply for the parser
and strings holding a lone surrogate (`"\\ud800"`, not Unicode) are problems of their line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from goldeval.corpus.files import DEFAULT_MAX_BYTES, SIZE_HINT, check_input_file, normalise_newlines
from goldeval.corpus.model import Corpus, Document
from goldeval.errors import InputError, InputErrors
from goldeval.textsafe import lone_surrogate

MAX_LISTED = 20
"""At most this many problems are spelled out; the summary gives the total."""


def iter_json_lines(path: Path, problems: list[InputError], *, max_bytes: int | None = None,
                    oversized: list[str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each JSON object line; bad lines go to `problems`, lines longer
    than `max_bytes` are skipped (described in `oversized`) without being held in memory."""
    check_input_file(path, "JSONL file")
    with path.open("rb") as handle:
        for lineno, raw in enumerate(_lines(handle, max_bytes), 1):
            if isinstance(raw, int):
                if oversized is not None:
                    oversized.append(f"skipped the record on line {lineno}: {raw:,} bytes is over the "
                                     f"{max_bytes:,}-byte limit ({SIZE_HINT})")
                continue
            if b"\x00" in raw:
                problems.append(InputError("binary data (NUL bytes) on this line", path=path, line=lineno,
                                           hint="a JSONL corpus is UTF-8 text, one JSON object a line"))
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(InputError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                                           path=path, line=lineno, hint="re-save the file as UTF-8"))
                continue
            if lineno == 1:
                line = line.removeprefix("\ufeff")
            if not line.strip():
                continue
            try:
                obj = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                problems.append(InputError(f"malformed JSON ({exc.msg} at column {exc.colno})", path=path,
                                           line=lineno, value=_snippet(line),
                                           hint=f"the line reads {_snippet(line)!r}"))
                continue
            except RecursionError:
                problems.append(InputError("JSON nested too deeply to read", path=path, line=lineno,
                                           hint="a record is one flat JSON object"))
                continue
            except ValueError as exc:  # an integer of more than 4,300 digits
                problems.append(InputError(f"a value that cannot be read ({str(exc)[:100]})", path=path,
                                           line=lineno, hint="a record is one flat JSON object"))
                continue
            surrogate = lone_surrogate(obj)
            if surrogate:
                problems.append(InputError(f"{surrogate}: a lone surrogate escape, which is not text", path=path,
                                           line=lineno, hint="write the character itself, or remove the escape"))
                continue
            if not isinstance(obj, dict):
                problems.append(InputError(f"expected a JSON object, got {type(obj).__name__}", path=path,
                                           line=lineno, value=obj, hint=f"the line reads {_snippet(line)!r}"))
                continue
            yield lineno, obj


def load_jsonl(path: Path, *, id_key: str = "id", title_key: str = "title", text_key: str = "text",
               name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Corpus:
    """Read a JSONL corpus (BEIR's corpus.jsonl is the same with `id_key="_id"`); records longer than
    `max_bytes` are skipped with a warning."""
    problems: list[InputError] = []
    corpus = Corpus({}, name=name or path.stem, path=str(path))
    first_line: dict[str, int] = {}
    duplicates: dict[str, list[int]] = {}
    empty: list[str] = []
    oversized: list[str] = []
    for lineno, obj in iter_json_lines(path, problems, max_bytes=max_bytes, oversized=oversized):
        doc = _document(obj, path, lineno, (id_key, title_key, text_key), problems)
        if doc is None:
            continue
        if doc.id in first_line:
            duplicates.setdefault(doc.id, [first_line[doc.id]]).append(lineno)
            continue
        first_line[doc.id] = lineno
        if not doc.text.strip():
            empty.append(f"{doc.id} (line {lineno})")
            continue
        corpus.documents[doc.id] = doc
    for doc_id, lines in duplicates.items():
        problems.append(InputError(f"duplicate id {doc_id!r} on lines {', '.join(map(str, lines))}",
                                   path=path, line=lines[1], value=doc_id,
                                   hint="every document needs its own id"))
    if problems:
        shown = problems[:MAX_LISTED]
        more = f" (first {MAX_LISTED} shown)" if len(problems) > MAX_LISTED else ""
        raise InputErrors(shown, summary=f"{path}: {len(problems)} problems in the corpus file{more}")
    if empty:
        corpus.warnings.append(f"skipped {len(empty)} of {len(empty) + len(corpus)} records: {len(empty)} empty")
        corpus.warnings.extend(f"skipped {item}: empty text" for item in empty)
    corpus.warnings.extend(oversized)
    if not corpus.documents:
        what = f"all {len(empty)} records have empty text" if empty else "the file has no usable records"
        what += f" ({len(oversized)} over the size limit)" if oversized else ""
        raise InputError(f"no usable documents: {what}", path=path,
                         hint=f"each line must be a JSON object with {id_key!r} and a non-empty {text_key!r}")
    return corpus


def _document(obj: dict[str, Any], path: Path, lineno: int, keys: tuple[str, str, str],
              problems: list[InputError]) -> Document | None:
    id_key, title_key, text_key = keys
    found = len(problems)
    doc_id = obj.get(id_key)
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if not isinstance(doc_id, str) or not doc_id.strip():
        problems.append(_field_problem(obj, id_key, "a non-empty string", path, lineno))
    text = obj.get(text_key)
    if not isinstance(text, str):
        problems.append(_field_problem(obj, text_key, "a string", path, lineno))
    title = obj.get(title_key, "")
    if title is None:
        title = ""
    if not isinstance(title, str):
        problems.append(_field_problem(obj, title_key, "a string", path, lineno))
    if len(problems) > found or not (isinstance(doc_id, str) and isinstance(text, str) and isinstance(title, str)):
        return None
    return Document(id=doc_id, text=normalise_newlines(text), title=title.strip(), source=f"{path}:{lineno}")


def _field_problem(obj: dict[str, Any], key: str, wanted: str, path: Path, lineno: int) -> InputError:
    if key not in obj:
        keys = ", ".join(repr(k) for k in list(obj)[:8]) or "none"
        return InputError(f"missing field {key!r}", path=path, line=lineno, value=obj,
                          hint=f"the object has keys {keys}")
    value = obj[key]
    return InputError(f"field {key!r} must be {wanted}, got {_snippet(json.dumps(value))}", path=path,
                      line=lineno, value=value)


def _lines(handle: IO[bytes], max_bytes: int | None) -> Iterator[bytes | int]:
    """Each line's bytes, or, for a line longer than `max_bytes`, its length (read in pieces, never whole)."""
    if max_bytes is None:
        yield from handle
        return
    while True:
        raw = handle.readline(max_bytes + 2)  # the limit, plus `\r\n`
        if not raw:
            return
        if len(raw) <= max_bytes or raw.endswith(b"\n") and len(raw.rstrip(b"\r\n")) <= max_bytes:
            yield raw
            continue
        size = len(raw)
        while not raw.endswith(b"\n"):
            raw = handle.readline(1 << 20)
            if not raw:
                break
            size += len(raw)
        yield size


def _snippet(text: str, limit: int = 80) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
