"""Load and write golden sets: JSONL (one question per line) or a JSON list.

Loading reports every problem at once (`InputErrors`), each naming the file, the line, the bad value
and the fix; see docs/golden.md for the format.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

from goldset.corpus.model import Corpus
from goldset.errors import InputError, InputErrors
from goldset.golden.model import GoldenSet, Question
from goldset.golden.validate import (
    corpus_problems,
    duplicate_problems,
    json_type,
    question_text_problem,
    sort_problems,
    source_problem,
    validate_golden,
)

__all__ = ["load_golden", "question_record", "validate_golden", "write_golden_jsonl"]

FIELDS = ("id", "question", "expected", "tags", "source", "notes")
"""The fields of a question record; keys starting with `_` are the user's own and are ignored."""

ALIASES = {
    "qid": "id", "query_id": "id", "question_id": "id", "_id": "id",
    "query": "question", "text": "question", "q": "question",
    "relevant": "expected", "answers": "expected", "answer": "expected", "expected_ids": "expected",
    "relevance": "expected", "qrels": "expected", "docs": "expected", "gold": "expected",
    "tag": "tags", "note": "notes", "comment": "notes",
}
"""Field names other tools use, mapped to ours, for the did-you-mean hint."""

EXAMPLE = '{"id": "q1", "question": "How do I undo a commit?", "expected": ["git/git-reset.md"]}'


def load_golden(path: str | Path, *, corpus: Corpus | Collection[str] | None = None) -> GoldenSet:
    """Read a golden set from a JSONL file or a JSON list, reporting every problem at once.

    With `corpus` (a Corpus or a collection of doc ids), also checks that every expected id is a doc
    id of the corpus or a chunk id (`doc#3`) of one of its documents, suggesting the closest ids.
    Raises InputError for an unreadable file and InputErrors listing every problem otherwise.
    """
    path = Path(path)
    text = _read_text(path)
    records = _parse_json_list(text, path) if text.lstrip().startswith("[") else _parse_jsonl(text, path)
    problems: list[InputError] = []
    notes = ""
    questions: list[Question] = []
    checkable: list[Question] = []
    for index, (line, obj) in enumerate(records):
        if isinstance(obj, InputError):
            problems.append(obj)
        elif _is_header(obj):
            if index == 0:
                notes, header_problems = _header(obj, path, line)
                problems.extend(header_problems)
            else:
                problems.append(InputError(
                    "a header object ({\"_notes\": ...}) is only allowed as the first record",
                    path=path, line=line, value=obj, hint="move it to the top of the file",
                ))
        else:
            question, partial, record_problems = _record(obj, path, line)
            problems.extend(record_problems)
            if question is not None:
                questions.append(question)
            if partial is not None:
                checkable.append(partial)
    if not questions and not problems:
        raise InputError("the golden set has no questions", path=path,
                         hint=f"add one JSON object per line, e.g. {EXAMPLE}")
    problems.extend(duplicate_problems(checkable, str(path)))
    if corpus is not None:
        problems.extend(corpus_problems(checkable, corpus, str(path)))
    if problems:
        count = f"{len(problems)} problem" + ("s" if len(problems) != 1 else "")
        raise InputErrors(sort_problems(problems), summary=f"{count} in golden set {path}")
    return GoldenSet(questions, path=str(path), notes=notes)


def write_golden_jsonl(golden: GoldenSet, path: str | Path) -> None:
    """Write `golden` as JSONL (header line first when it has notes), atomically: temp file, rename.

    `expected` is written as a list when every relevance is 1, else as an id -> grade mapping;
    `tags`, `source` and `notes` only when they differ from their defaults.
    """
    lines = [json.dumps({"_notes": golden.notes}, ensure_ascii=False)] if golden.notes else []
    lines.extend(json.dumps(question_record(q), ensure_ascii=False) for q in golden)
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def question_record(q: Question) -> dict[str, Any]:
    """The JSON object of one question, as `write_golden_jsonl` writes it."""
    record: dict[str, Any] = {"id": q.id, "question": q.question}
    if all(rel == 1 for rel in q.expected.values()):
        record["expected"] = list(q.expected)
    else:
        record["expected"] = dict(q.expected)
    if q.tags:
        record["tags"] = list(q.tags)
    if q.source != "hand":
        record["source"] = q.source
    if q.notes:
        record["notes"] = q.notes
    return record


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write text to a temp file beside `path`, then rename it over `path`: never a half-written file."""
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError("cannot write: the folder does not exist", path=path.parent,
                         hint="create the folder first or choose another output path")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --- reading ---------------------------------------------------------------------------------------

Record = tuple[int, Any]
"""(line number, parsed JSON value or the InputError that parsing it raised)."""


class _Object(dict[str, Any]):
    """A JSON object that remembers keys given twice (json keeps only the last one silently)."""

    repeated: list[str]


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    obj.repeated = [k for k in obj if sum(1 for key, _ in pairs if key == k) > 1] if len(obj) < len(pairs) else []
    return obj


def read_text(path: Path, what: str) -> str:
    """A UTF-8 text file's contents, or an InputError saying why it cannot be read as one."""
    if not path.exists():
        raise InputError(f"{what} not found", path=path, hint="check the path")
    if path.is_dir():
        raise InputError(f"expected a {what} file, found a folder", path=path, hint="give the file's path")
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise InputError(f"{what} is a binary file (or UTF-16), not text", path=path,
                         hint="save it as UTF-8 text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{what} is not UTF-8: byte {data[exc.start:exc.start + 1]!r} at offset {exc.start}",
                         path=path, line=line, hint="save the file as UTF-8") from None


def _read_text(path: Path) -> str:
    text = read_text(path, "golden set")
    if not text.strip():
        raise InputError("the golden set file is empty", path=path,
                         hint=f"add one JSON object per line, e.g. {EXAMPLE}")
    return text


def _parse_jsonl(text: str, path: Path) -> list[Record]:
    """One record per line; blank lines and lines starting with `#` or `//` are skipped."""
    records: list[Record] = []
    parsed = 0
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        try:
            records.append((lineno, json.loads(line, object_pairs_hook=_object)))
            parsed += 1
        except json.JSONDecodeError as exc:
            records.append((lineno, InputError(
                f"malformed JSON: {exc.msg} (column {exc.colno}, near `{_near(line, exc.pos)}`)",
                path=path, line=lineno, value=_clip(line), hint=_json_hint(stripped, exc),
            )))
    if not parsed and records:
        first = records[0][1]
        raise InputError(f"not a JSONL or JSON golden set: no line is valid JSON (line {records[0][0]}: "
                         f"{first.reason})", path=path,
                         hint=f"a golden set has one JSON object per line, e.g. {EXAMPLE}")
    return records


def _json_hint(line: str, exc: json.JSONDecodeError) -> str:
    if line in ("{", "[") or (line.startswith("{") and exc.msg.startswith("Expecting") and exc.pos >= len(line)):
        return ("each question must be a complete JSON object on one line (JSONL); for a "
                "pretty-printed file use a JSON list: [{...}, {...}]")
    if "double quotes" in exc.msg or line.count("'") >= 2:
        return "JSON needs double quotes around keys and strings, and no trailing commas"
    return f"each line must be one JSON object, e.g. {EXAMPLE}"


def _parse_json_list(text: str, path: Path) -> list[Record]:
    """A JSON list of objects, with the line where each element starts.

    Unlike JSONL, parsing cannot resume after a syntax error, so the first one is raised at once.
    """
    decoder = json.JSONDecoder(object_pairs_hook=_object)
    records: list[Record] = []
    pos = _skip_ws(text, text.index("[") + 1)
    line, line_pos = 1, 0

    def line_of(at: int) -> int:
        nonlocal line, line_pos
        line += text.count("\n", line_pos, at)
        line_pos = at
        return line

    if pos < len(text) and text[pos] == "]":
        return _end_of_list(text, pos, path, line_of)
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise _list_error(f"malformed JSON: {exc.msg} (column {exc.colno})", exc.lineno, path,
                              text) from None
        records.append((line_of(pos), value))
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            _end_of_list(text, pos, path, line_of)
            return records
        found = repr(text[pos]) if pos < len(text) else "the end of the file"
        raise _list_error(f"malformed JSON list: expected `,` or `]` after an element, found {found}",
                          line_of(min(pos, len(text))), path, text)


def _end_of_list(text: str, pos: int, path: Path, line_of: Any) -> list[Record]:
    rest = _skip_ws(text, pos + 1)
    if rest < len(text):
        raise _list_error("extra data after the closing `]` of the JSON list", line_of(rest), path, text)
    return []


def _list_error(message: str, line: int, path: Path, text: str) -> InputError:
    lines = text.split("\n")
    value = _clip(lines[line - 1]) if 0 < line <= len(lines) else None
    return InputError(message, path=path, line=line, value=value,
                      hint="fix this line; a JSON list stops at its first syntax error (JSONL files "
                           "report every bad line)")


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _near(line: str, pos: int) -> str:
    """The text around a JSON error position, to show where it is."""
    start = max(0, pos - 15)
    return ("..." if start else "") + line[start:pos + 15].strip() + ("..." if pos + 15 < len(line) else "")


def _clip(text: str, width: int = 120) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _is_header(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(k.startswith("_") and k not in ALIASES for k in obj)


def _header(obj: dict[str, Any], path: Path, line: int) -> tuple[str, list[InputError]]:
    notes = obj.get("_notes", "")
    if isinstance(notes, str):
        return notes, []
    return "", [InputError("`_notes` must be a string", path=path, line=line, value=notes,
                           hint='write the golden set\'s notes as {"_notes": "..."}')]


# --- one question record ---------------------------------------------------------------------------


def _record(obj: Any, path: Path, line: int) -> tuple[Question | None, Question | None, list[InputError]]:
    """(the question if the record is valid, a partial question for the id checks, the problems)."""
    def problem(message: str, value: object = None, hint: str | None = None) -> None:
        problems.append(InputError(message, path=path, line=line, value=value, hint=hint))

    problems: list[InputError] = []
    if not isinstance(obj, dict):
        problem(f"expected a JSON object, found a JSON {json_type(obj)}", _clip(json.dumps(obj)),
                f"each record is an object, e.g. {EXAMPLE}")
        return None, None, problems
    for key in getattr(obj, "repeated", []):
        problem(f"field `{key}` is given twice in this object (only the last one would count)", key,
                "keep one")
    for key in obj:
        if key not in FIELDS and (not key.startswith("_") or key in ALIASES):
            problem(f"unknown field `{key}`", key, _field_hint(key))
    qid = _id(obj, problem)
    label = f"question `{qid}`: " if qid else ""
    text = obj.get("question")
    if "question" not in obj:
        problem(f"{label}missing field `question`", None, "add the question as a user would ask it")
    elif (why := question_text_problem(text)) is not None:
        problem(label + why, text, "write the question as a user would ask it")
    expected = _expected(obj, label, problem)
    tags = _tags(obj.get("tags", []), label, problem)
    source = obj.get("source", "hand")
    if (bad := source_problem(source)) is not None:
        problem(label + bad[0], source, bad[1])
    notes = obj.get("notes", "")
    if not isinstance(notes, str):
        problem(f"{label}`notes` must be a string, found {json_type(notes)}", notes, "write notes as text")
    partial = None
    if expected is not None:
        partial = Question(qid or "", text if isinstance(text, str) else "", expected, line=line)
    if problems or qid is None or expected is None or not isinstance(text, str):
        return None, partial, problems
    return Question(qid, text, expected, tags, source, notes, line), partial, problems


def _id(obj: dict[str, Any], problem: Any) -> str | None:
    if "id" not in obj:
        problem("missing field `id`", None, 'give every question a unique id, e.g. "id": "q1"')
        return None
    value = obj["id"]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, str):
        problem("question id is empty", value, 'give every question a unique id, e.g. "id": "q1"')
    else:
        problem(f"question id must be a string or an integer, found {json_type(value)}", value,
                'e.g. "id": "q1"')
    return None


def _expected(obj: dict[str, Any], label: str, problem: Any) -> dict[str, int] | None:
    """The expected ids with their grades; None when the field is missing or not a list or object."""
    if "expected" not in obj:
        problem(f"{label}missing field `expected`", None,
                'list every doc or chunk id that answers it; use "expected": [] for a question the '
                "corpus does not cover (off-topic)")
        return None
    value = obj["expected"]
    if isinstance(value, list):
        return _expected_list(value, label, problem)
    if isinstance(value, dict):
        return _expected_graded(value, label, problem)
    hint = f'wrap it in a list: "expected": [{json.dumps(value)}]' if isinstance(value, str) else (
        'a list of ids, e.g. ["a.md", "b.md"], or ids with graded relevance, e.g. {"a.md": 2, "b.md": 1}')
    problem(f"{label}`expected` must be a list of ids or an id -> relevance object, found "
            f"{json_type(value)}", value, hint)
    return None


def _expected_list(value: list[Any], label: str, problem: Any) -> dict[str, int]:
    expected: dict[str, int] = {}
    for item in value:
        if isinstance(item, int) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str) or not item:
            problem(f"{label}expected id {json.dumps(item)} is not a non-empty string", item,
                    "expected ids are doc ids (e.g. `guide/install.md`) or chunk ids (`guide/install.md#2`)")
        elif item in expected:
            problem(f"{label}expected id `{item}` is listed twice", item, "remove the repeat")
        else:
            expected[item] = 1
    return expected


def _expected_graded(value: dict[str, Any], label: str, problem: Any) -> dict[str, int]:
    expected: dict[str, int] = {}
    for key in getattr(value, "repeated", []):
        problem(f"{label}expected id `{key}` is given twice", key, "keep one grade per id")
    for pid, rel in value.items():
        if not pid:
            problem(f"{label}expected id is empty", pid, "remove it or fill in the id")
        elif isinstance(rel, bool) or not isinstance(rel, int):
            problem(f"{label}relevance of `{pid}` must be an integer, found {json.dumps(rel)}", rel,
                    "graded relevance is an integer: 1 relevant, 2 or more more relevant, 0 judged "
                    "not relevant")
        else:
            expected[pid] = rel
    return expected


def _tags(value: Any, label: str, problem: Any) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return tuple(value)
    hint = f'wrap it in a list: "tags": [{json.dumps(value)}]' if isinstance(value, str) else (
        'e.g. "tags": ["install", "hard"]')
    problem(f"{label}`tags` must be a list of strings", value, hint)
    return ()


def _field_hint(key: str) -> str:
    known = ", ".join(f"`{f}`" for f in FIELDS)
    guess = ALIASES.get(key.lower()) or next(iter(difflib.get_close_matches(key.lower(), FIELDS, n=1)), None)
    start = f"did you mean `{guess}`? " if guess else ""
    return f"{start}known fields: {known}; fields starting with `_` are ignored"
