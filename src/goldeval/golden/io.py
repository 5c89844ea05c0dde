"""Load and write golden sets: JSONL (one question per line) or a JSON list.

Loading reports every problem at once (`InputErrors`), each naming the file, the line, the bad value
and the fix; see docs/golden.md for the format. Hostile files are problems too, never tracebacks
(issue 9): a FIFO or a device is refused before it is read (`read_input_text`), JSON nested too deeply
for the parser is a problem of its line, and so is a string holding a lone surrogate (`"\\ud800"`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from goldeval.corpus.files import read_input_text
from goldeval.corpus.model import Corpus
from goldeval.errors import InputError, InputErrors
from goldeval.golden.changelog import golden_changes
from goldeval.golden.model import GoldenSet, Judgment, Qrels, Question, implied_intent
from goldeval.golden.plain import read_plain
from goldeval.golden.records import EXAMPLE, clip, is_header, parse_header, parse_record
from goldeval.golden.validate import (
    corpus_problems,
    duplicate_problems,
    nothing_relevant_warning,
    sort_problems,
    validate_golden,
)
from goldeval.golden.versions import frozen_version
from goldeval.memory import gc_paused
from goldeval.store.atomic import write_atomic
from goldeval.textsafe import lone_surrogate, may_hold_surrogate

__all__ = ["edited_text", "load_golden", "question_record", "validate_golden", "write_golden_jsonl"]


def load_golden(path: str | Path, *, corpus: Corpus | Collection[str] | None = None) -> GoldenSet:
    """Read a golden set from a JSONL file or a JSON list, reporting every problem at once.

    With `corpus` (a Corpus or a collection of doc ids), also checks that every judged id is a doc
    id of the corpus or a chunk id (`doc#3`) of one of its documents, suggesting the closest ids.
    Raises InputError for an unreadable file and InputErrors listing every problem otherwise.
    A folder holding a test collection's questions is read in that collection's format: Cranfield
    (`cran.qry` + `cranqrel`) or BEIR (`queries.jsonl` + `qrels/test.tsv`).
    """
    path = Path(path)
    collection = _load_collection(path)
    if collection is not None:
        if corpus is not None:
            found = validate_golden(collection, corpus)
            if found:
                raise InputErrors(found, summary=f"{path}: {len(found)} problem(s)")
        return collection
    text = read_input_text(path, "golden set", empty_hint=f"add one JSON object per line, e.g. {EXAMPLE}")
    surrogates = may_hold_surrogate(text)
    records = (_parse_json_list(text, path) if text.lstrip().startswith("[")
               else _parse_jsonl(text, path, plain=not surrogates))  # fmt: skip
    with gc_paused():  # 100k questions: the GC's passes over what is read cost more than reading it (issue 23)
        notes, questions, judged, checkable, problems = _read_records(records, path, surrogates)
        qrels = _qrels(judged) if questions and not problems else None
    if not questions and not problems:
        raise InputError("the golden set has no questions", path=path,
                         hint=f"add one JSON object per line, e.g. {EXAMPLE}")
    problems.extend(duplicate_problems([q for q, _ in checkable], str(path)))
    if corpus is not None:
        problems.extend(corpus_problems(checkable, corpus, str(path)))
    if problems:
        count = f"{len(problems)} problem" + ("s" if len(problems) != 1 else "")
        raise InputErrors(sort_problems(problems), summary=f"{count} in golden set {path}")
    qrels = qrels if qrels is not None else _qrels(judged)
    warnings = nothing_relevant_warning(questions, qrels, str(path))
    golden = GoldenSet(questions, qrels, path=str(path), notes=notes, warnings=warnings)
    golden.version = frozen_version(golden)  # the frozen version it equals (golden.versions.jsonl), or None
    golden.changelog = golden_changes(golden.path, golden.version)  # loaded whole: versions and changes
    return golden


Judged = tuple[str, dict[str, int] | list[Judgment]]
"""A question's judgments as read: its grades (a record `golden.plain` read) or its `Judgment`s."""


def _read_records(records: Iterable[Record], path: Path, surrogates: bool = True) -> tuple[
    str, list[Question], list[Judged], list[tuple[Question, Collection[str]]], list[InputError]
]:
    """(header notes, valid questions, their judgments, every record's question and judged ids, problems).
    Without `surrogates` (the file's text holds no surrogate escape) no value is walked for one."""
    problems: list[InputError] = []
    notes = ""
    questions: list[Question] = []
    judged: list[Judged] = []
    checkable: list[tuple[Question, Collection[str]]] = []
    for index, (line, obj) in enumerate(records):
        if type(obj) is tuple:  # `golden.plain.read_plain`'s: a question and its grades, nothing to report
            question, grades = obj
            questions.append(question)
            judged.append((question.id, grades))
            checkable.append(obj)
        elif isinstance(obj, InputError):
            problems.append(obj)
        elif surrogates and (surrogate := lone_surrogate(obj)) is not None:
            problems.append(InputError(f"{surrogate}: a lone surrogate escape, which is not text", path=path,
                                       line=line, hint="write the character itself, or remove the escape"))
        elif is_header(obj):
            if index == 0:
                notes, header_problems = parse_header(obj, path, line)
                problems.extend(header_problems)
            else:
                problems.append(InputError(
                    "a header object ({\"_notes\": ...}) is only allowed as the first record",
                    path=path, line=line, value=obj, hint="move it to the top of the file",
                ))
        else:
            parsed = parse_record(obj, path, line)
            problems.extend(parsed.problems)
            if parsed.question is not None:
                questions.append(parsed.question)
                judged.append((parsed.question.id, parsed.judgments))
            if parsed.checkable is not None:
                checkable.append((parsed.checkable, [j.doc_id for j in parsed.judgments]))
    return notes, questions, judged, checkable, problems


def _qrels(judged: Iterable[Judged]) -> Qrels:
    """The golden set's Qrels, question by question in file order."""
    qrels = Qrels()
    for qid, judgments in judged:
        if isinstance(judgments, dict):
            qrels.add_grades(qid, judgments)
        else:
            for j in judgments:
                qrels.add(j)
    return qrels


def write_golden_jsonl(golden: GoldenSet, path: str | Path) -> None:
    """Write `golden` as JSONL (header line first when it has notes), atomically: temp file, rename.

    Each line is `question_record` of a question and its judgments: a set that says no more than
    the 0.1 format could is written in the 0.1 format, line for line.
    """
    lines = [json.dumps({"_notes": golden.notes}, ensure_ascii=False)] if golden.notes else []
    lines.extend(json.dumps(question_record(q, golden.qrels.judgments(q.id)), ensure_ascii=False) for q in golden)
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def edited_text(text: str, golden: GoldenSet, changed: Collection[str]) -> str:
    """The golden-set file `text` after an edit of the questions `changed` (ids), as written by hand:
    every other line (comments, blank lines, the header, other questions) byte for byte; a changed
    question's line replaced by its `question_record`, keeping its own `_` fields; a new question (no
    line yet) appended. A JSON-list file has no lines of its own to keep: it is written as JSONL, each
    record keeping its `_` fields."""
    if text.lstrip().startswith("["):
        own = {str(r.get("id")): r for r in json.loads(text) if isinstance(r, dict)}
        lines = [json.dumps({"_notes": golden.notes}, ensure_ascii=False)] if golden.notes else []
        lines.extend(json.dumps(_with_own_fields(question_record(q, golden.qrels.judgments(q.id)), own.get(q.id)),
                                ensure_ascii=False) for q in golden)
        return "".join(line + "\n" for line in lines)
    parts = text.split("\n")  # the reader's line numbers (`Question.line`) count "\n" only
    added = []
    for q in golden:
        if q.id not in changed:
            continue
        record = question_record(q, golden.qrels.judgments(q.id))
        if q.line is None or not 0 < q.line <= len(parts):
            added.append(json.dumps(record, ensure_ascii=False))
            continue
        raw = parts[q.line - 1]
        ending = "\r" if raw.endswith("\r") else ""
        parts[q.line - 1] = json.dumps(_with_own_fields(record, json.loads(raw)), ensure_ascii=False) + ending
    out = "\n".join(parts)
    if added:
        out += ("" if not out or out.endswith("\n") else "\n") + "".join(line + "\n" for line in added)
    return out


def _with_own_fields(record: dict[str, Any], original: Any) -> dict[str, Any]:
    """`record` with the `_` fields (the user's own, which the reader ignores) of the record it replaces."""
    if not isinstance(original, dict):
        return record
    return {**record, **{k: v for k, v in original.items() if k.startswith("_") and k not in record}}


def question_record(q: Question, judgments: Iterable[Judgment] = ()) -> dict[str, Any]:
    """The JSON object of one question and its judgments, as `write_golden_jsonl` writes it.

    Fields are written only when they carry information: `intent` when it differs from
    `implied_intent` of the grades (what the reader gives a record without one); judgments with only a grade go to `expected` (a
    list when every grade is 1, else an id -> grade object), those saying who judged, when or why
    go to `judgments`; `provenance` when it has details, else `source` when not `hand`; `tags` and
    `notes` when not empty.
    """
    judged = list(judgments)
    rich = [j for j in judged if j.judge or j.at or j.note]
    plain = [j for j in judged if not (j.judge or j.at or j.note)]
    record: dict[str, Any] = {"id": q.id, "question": q.question}
    if q.intent != implied_intent(j.grade for j in judged):
        record["intent"] = q.intent
    if plain or not rich:
        if all(j.grade == 1 for j in plain):
            record["expected"] = [j.doc_id for j in plain]
        else:
            record["expected"] = {j.doc_id: j.grade for j in plain}
    if rich:
        record["judgments"] = [j.to_dict() for j in rich]
    if q.tags:
        record["tags"] = list(q.tags)
    if q.provenance.details:
        record["provenance"] = q.provenance.to_dict()
    elif q.source != "hand":
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
    write_atomic(path, text, create_folder=False)


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


_DECODER = json.JSONDecoder(object_pairs_hook=_object)
"""One decoder for every line (`json.loads` makes one per call when given a hook)."""


def _parse_jsonl(text: str, path: Path, *, plain: bool = False) -> Iterator[Record]:
    """One record per line, each parsed as it is read (the records never all exist at once); blank lines and
    lines starting with `#` or `//` are skipped. With `plain`, a record of the common shape is read by
    `golden.plain.read_plain` (its question and grades, as a tuple), any other as below."""
    first: Record | None = None
    parsed = 0
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        if plain and (read := read_plain(line, lineno)) is not None:
            parsed += 1
            yield lineno, read
            continue
        try:
            value = _DECODER.decode(line) if not line.startswith("\ufeff") else json.loads(line, object_pairs_hook=_object)
            record: Record = (lineno, value)  # json.loads names a byte-order mark; the decoder does not
            parsed += 1
        except json.JSONDecodeError as exc:
            record = (lineno, InputError(
                f"malformed JSON: {exc.msg} (column {exc.colno}, near `{_near(line, exc.pos)}`)",
                path=path, line=lineno, value=clip(line), hint=_json_hint(stripped, exc),
            ))
        except RecursionError:
            record = (lineno, InputError("JSON nested too deeply to read", path=path, line=lineno,
                                         hint="a question is one flat JSON object"))
        except ValueError as exc:  # an integer of more than 4,300 digits
            record = (lineno, InputError(f"a value that cannot be read ({str(exc)[:100]})", path=path,
                                         line=lineno, hint="a question is one flat JSON object"))
        first = first or record
        yield record
    if not parsed and first is not None:
        error = first[1]
        raise InputError(f"not a JSONL or JSON golden set: no line is valid JSON (line {first[0]}: "
                         f"{error.reason})", path=path,
                         hint=f"a golden set has one JSON object per line, e.g. {EXAMPLE}")


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
        except RecursionError:
            raise _list_error("JSON nested too deeply to read", line_of(pos), path, text) from None
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


def _end_of_list(text: str, pos: int, path: Path, line_of: Callable[[int], int]) -> list[Record]:
    rest = _skip_ws(text, pos + 1)
    if rest < len(text):
        raise _list_error("extra data after the closing `]` of the JSON list", line_of(rest), path, text)
    return []


def _list_error(message: str, line: int, path: Path, text: str) -> InputError:
    lines = text.split("\n")
    value = clip(lines[line - 1]) if 0 < line <= len(lines) else None
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


def _load_collection(path: Path) -> GoldenSet | None:
    """The golden set of a Cranfield or BEIR folder, or None for an ordinary golden-set file."""
    if not path.is_dir():
        return None
    if (path / "cran.qry").exists():
        from goldeval.golden.cranfield import load_cranfield_golden

        return load_cranfield_golden(path)
    if (path / "queries.jsonl").exists():
        from goldeval.golden.beir import load_beir_golden

        return load_beir_golden(path)
    return None
