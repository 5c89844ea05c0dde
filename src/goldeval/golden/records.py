"""One golden-set record (a JSON object) to a Question and its Judgments, with every problem found.

The field rules of the format in docs/golden.md live here; `goldeval.golden.io` reads the file and
`goldeval.golden.validate` checks the set as a whole and against the corpus.

The 0.1 format stays valid: `expected` (a list of ids, or id -> grade) and `source`. The optional
`intent`, `provenance` and `judgments` fields say more. Without `intent`, a question's intent is
`goldeval.golden.model.implied_intent` of its grades (off-topic when nothing is judged relevant, as 0.1
read it).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from goldeval.errors import InputError
from goldeval.golden.model import HAND, INTENTS, Intent, Judgment, Provenance, Question, implied_intent
from goldeval.golden.validate import (
    GRADE_HINT,
    INTENT_HINT,
    intent_problems,
    json_type,
    question_text_problem,
    source_problem,
)

FIELDS = ("id", "question", "intent", "expected", "judgments", "tags", "source", "provenance", "notes")
"""The fields of a question record; keys starting with `_` are the user's own and are ignored."""

JUDGMENT_FIELDS = ("doc", "grade", "judge", "at", "note")
"""The fields of one item of `judgments`."""

ALIASES = {
    "qid": "id", "query_id": "id", "question_id": "id", "_id": "id",
    "query": "question", "text": "question", "q": "question",
    "relevant": "expected", "answers": "expected", "answer": "expected", "expected_ids": "expected",
    "relevance": "expected", "qrels": "expected", "docs": "expected", "gold": "expected",
    "judgements": "judgments", "judgment": "judgments", "judged": "judgments", "labels": "judgments",
    "off_topic": "intent", "offtopic": "intent", "type": "intent",
    "origin": "provenance", "generator": "provenance", "meta": "provenance", "metadata": "provenance",
    "tag": "tags", "note": "notes", "comment": "notes",
}
"""Field names other tools use, mapped to ours, for the did-you-mean hint."""

JUDGMENT_ALIASES = {
    "id": "doc", "doc_id": "doc", "docid": "doc", "document": "doc", "docno": "doc",
    "relevance": "grade", "rel": "grade", "score": "grade", "label": "grade",
    "by": "judge", "judged_by": "judge", "assessor": "judge", "annotator": "judge",
    "date": "at", "when": "at", "time": "at", "judged_at": "at",
    "notes": "note", "comment": "note",
}

Report = Callable[[str, object, str | None], None]
"""Records one problem of the current record: (message, bad value, hint)."""

EXAMPLE = '{"id": "q1", "question": "How do I undo a commit?", "expected": ["git/git-reset.md"]}'
JUDGMENT_EXAMPLE = '{"doc": "git/git-reset.md", "grade": 2, "judge": "ann", "at": "2026-11-03"}'


@dataclass
class Parsed:
    """What one record gave: the question (None when the record has a problem), the id and line for
    the set-level checks, the judgments, and the problems."""

    question: Question | None
    checkable: Question | None
    """Set whenever the judgments could be read, so that ids are checked even on a bad record."""
    judgments: list[Judgment] = field(default_factory=list)
    problems: list[InputError] = field(default_factory=list)


def is_header(obj: Any) -> bool:
    """A `{"_notes": ...}` golden-set header: an object whose keys all start with `_`."""
    return isinstance(obj, dict) and bool(obj) and all(k.startswith("_") and k not in ALIASES for k in obj)


def parse_header(obj: dict[str, Any], path: Path, line: int) -> tuple[str, list[InputError]]:
    """The header's notes, and its problems."""
    notes = obj.get("_notes", "")
    if isinstance(notes, str):
        return notes, []
    return "", [InputError("`_notes` must be a string", path=path, line=line, value=notes,
                           hint='write the golden set\'s notes as {"_notes": "..."}')]


def parse_record(obj: Any, path: Path, line: int) -> Parsed:
    """One question record: its Question and Judgments, or every problem of its fields."""
    problems: list[InputError] = []

    def problem(message: str, value: object, hint: str | None) -> None:
        problems.append(InputError(message, path=path, line=line, value=value, hint=hint))

    if not isinstance(obj, dict):
        problem(f"expected a JSON object, found a JSON {json_type(obj)}", clip(json.dumps(obj)),
                f"each record is an object, e.g. {EXAMPLE}")
        return Parsed(None, None, [], problems)
    _check_keys(obj, FIELDS, ALIASES, "", problem)
    qid = _id(obj, problem)
    label = f"question `{qid}`: " if qid else ""
    text = obj.get("question")
    if "question" not in obj:
        problem(f"{label}missing field `question`", None, "add the question as a user would ask it")
    elif (why := question_text_problem(text)) is not None:
        problem(label + why, text, "write the question as a user would ask it")
    judgments = _judgments(obj, qid or "", label, problem)
    intent = _intent(obj, judgments, label, problem)
    tags = _tags(obj.get("tags", []), label, problem)
    provenance = _provenance(obj, label, problem)
    notes = obj.get("notes", "")
    if not isinstance(notes, str):
        problem(f"{label}`notes` must be a string, found {json_type(notes)}", notes, "write notes as text")
    if judgments is None:
        return Parsed(None, None, [], problems)
    if problems or qid is None or not isinstance(text, str):
        checkable = Question(qid or "", text if isinstance(text, str) else "", intent, line=line)
        return Parsed(None, checkable, judgments, problems)
    question = Question(qid, text, intent, tags, provenance, notes, line)
    return Parsed(question, question, judgments, problems)  # its id, text, intent and line are the ones checked


def _check_keys(obj: dict[str, Any], fields: tuple[str, ...], aliases: dict[str, str], label: str,
                problem: Report) -> None:
    """Keys given twice, and unknown keys (typo protection); `_` keys are the user's own."""
    for key in getattr(obj, "repeated", []):
        problem(f"{label}field `{key}` is given twice in this object (only the last one would count)", key,
                "keep one")
    for key in obj:
        if key not in fields and (not key.startswith("_") or key in aliases):
            problem(f"{label}unknown field `{key}`", key, _field_hint(key, fields, aliases))


def _id(obj: dict[str, Any], problem: Report) -> str | None:
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


def _judgments(obj: dict[str, Any], qid: str, label: str, problem: Report) -> list[Judgment] | None:
    """`expected` and `judgments` merged, in that order; None when neither could be read.

    A document in both must have one grade: its `judgments` entry (which says who judged) is kept.
    """
    if "expected" not in obj and "judgments" not in obj:
        if "intent" in obj:
            return []
        problem(f"{label}missing field `expected`", None,
                'list every doc or chunk id that answers it; use "expected": [] (or "intent": "off_topic") '
                "for a question the corpus does not cover")
        return None
    expected = _expected(obj["expected"], label, problem) if "expected" in obj else {}
    listed = _judgment_list(obj["judgments"], qid, label, problem) if "judgments" in obj else []
    if expected is None or listed is None:
        return None
    merged = {doc: Judgment(qid, doc, grade) for doc, grade in expected.items()}
    listed_docs: set[str] = set()
    for j in listed:
        before = merged.get(j.doc_id)
        if before is not None and before.grade != j.grade and j.doc_id in listed_docs:
            problem(f"{label}`{j.doc_id}` is judged twice in `judgments`, with grades {before.grade} and "
                    f"{j.grade}", j.doc_id, "keep one judgment per document (the golden set holds one verdict "
                    "per question and document)")
        elif before is not None and before.grade != j.grade:
            problem(f"{label}`{j.doc_id}` has grade {before.grade} in `expected` but {j.grade} in `judgments`",
                    j.doc_id, "give it one grade: drop it from `expected` (the judgment says who judged it) or "
                    "make the two grades agree")
        merged[j.doc_id] = j
        listed_docs.add(j.doc_id)
    return list(merged.values())


def _expected(value: Any, label: str, problem: Report) -> dict[str, int] | None:
    """The expected ids with their grades; None when the field is not a list or object."""
    if isinstance(value, list):
        return _expected_list(value, label, problem)
    if isinstance(value, dict):
        return _expected_graded(value, label, problem)
    hint = f'wrap it in a list: "expected": [{json.dumps(value)}]' if isinstance(value, str) else (
        'a list of ids, e.g. ["a.md", "b.md"], or ids with graded relevance, e.g. {"a.md": 2, "b.md": 1}')
    problem(f"{label}`expected` must be a list of ids or an id -> relevance object, found "
            f"{json_type(value)}", value, hint)
    return None


def _expected_list(value: list[Any], label: str, problem: Report) -> dict[str, int]:
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


def _expected_graded(value: dict[str, Any], label: str, problem: Report) -> dict[str, int]:
    expected: dict[str, int] = {}
    for key in getattr(value, "repeated", []):
        problem(f"{label}expected id `{key}` is given twice", key, "keep one grade per id")
    for pid, rel in value.items():
        if not pid:
            problem(f"{label}expected id is empty", pid, "remove it or fill in the id")
        elif isinstance(rel, bool) or not isinstance(rel, int):
            problem(f"{label}relevance of `{pid}` must be an integer, found {json.dumps(rel)}", rel, GRADE_HINT)
        else:
            expected[pid] = rel
    return expected


def _judgment_list(value: Any, qid: str, label: str, problem: Report) -> list[Judgment] | None:
    """The items of `judgments` that are well formed (the others are reported)."""
    if not isinstance(value, list):
        problem(f"{label}`judgments` must be a list of objects, found {json_type(value)}", clip(json.dumps(value)),
                f"e.g. \"judgments\": [{JUDGMENT_EXAMPLE}]")
        return None
    out = []
    for n, item in enumerate(value, 1):
        where = f"{label}judgment {n}: "
        if not isinstance(item, dict):
            problem(f"{where}expected an object, found {json_type(item)}", clip(json.dumps(item)),
                    f"each judgment is an object, e.g. {JUDGMENT_EXAMPLE}")
            continue
        judgment = _judgment(item, qid, where, problem)
        if judgment is not None:
            out.append(judgment)
    return out


def _judgment(item: dict[str, Any], qid: str, where: str, problem: Report) -> Judgment | None:
    if len(item) == 2 and not getattr(item, "repeated", None):  # {"doc": ..., "grade": ...}, the common item
        doc, grade = item.get("doc"), item.get("grade")
        if type(doc) is str and doc and type(grade) is int:  # what the checks below let through, nothing else
            return Judgment(qid, doc, grade)
    count = _Counter(problem)
    _check_keys(item, JUDGMENT_FIELDS, JUDGMENT_ALIASES, where, count)
    doc = item.get("doc")
    if isinstance(doc, int) and not isinstance(doc, bool):
        doc = str(doc)
    if not isinstance(doc, str) or not doc:
        count(f"{where}`doc` must be a non-empty doc or chunk id", doc,
              f"e.g. {JUDGMENT_EXAMPLE}" if "doc" not in item else "write the id as a string")
    grade = item.get("grade")
    if isinstance(grade, bool) or not isinstance(grade, int):
        count(f"{where}`grade` must be an integer, found {json.dumps(grade) if 'grade' in item else 'none'}",
              grade, GRADE_HINT)
    texts = {}
    for name in ("judge", "at", "note"):
        texts[name] = item.get(name, "")
        if not isinstance(texts[name], str):
            count(f"{where}`{name}` must be a string, found {json_type(texts[name])}", texts[name], None)
    if isinstance(texts["at"], str) and texts["at"] and not _is_iso_time(texts["at"]):
        count(f"{where}`at` is not an ISO 8601 date or time", texts["at"],
              'write when it was judged as e.g. "2026-11-03" or "2026-11-03T14:05:00Z"')
    if count.n:
        return None
    return Judgment(qid, cast(str, doc), cast(int, grade), texts["judge"], texts["at"], texts["note"])


class _Counter:
    """A Report that counts what it passes on, to tell whether an item had a problem."""

    def __init__(self, report: Report) -> None:
        self.report, self.n = report, 0

    def __call__(self, message: str, value: object, hint: str | None) -> None:
        self.n += 1
        self.report(message, value, hint)


def _is_iso_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        return False
    return True


def _intent(obj: dict[str, Any], judgments: list[Judgment] | None, label: str, problem: Report) -> Intent:
    """The explicit intent, checked against the judgments; without one, `implied_intent` of the grades."""
    inferred = implied_intent(j.grade for j in judgments or [])
    if "intent" not in obj:
        return inferred
    value = obj["intent"]
    if value not in INTENTS:
        close = difflib.get_close_matches(str(value).lower().replace("-", "_"), INTENTS, n=1, cutoff=0.5)
        problem(f"{label}unknown intent {json.dumps(value)}", value,
                (f"did you mean `{close[0]}`? " if close else "") + INTENT_HINT)
        return inferred
    intent = cast(Intent, value)
    if judgments is not None:
        for message, bad, hint in intent_problems(label, intent, judgments):
            problem(message, bad, hint)
    return intent


def _provenance(obj: dict[str, Any], label: str, problem: Report) -> Provenance:
    """`provenance` (kind + open details), with `source` accepted as a shorthand for its kind."""
    source = obj.get("source")
    if "source" in obj and (bad := source_problem(source)) is not None:
        problem(label + bad[0], source, bad[1])
        source = None
    if "provenance" not in obj:
        return Provenance(source) if isinstance(source, str) else HAND
    value = obj["provenance"]
    if not isinstance(value, dict):
        problem(f"{label}`provenance` must be an object with a `kind`, found {json_type(value)}",
                clip(json.dumps(value)), 'e.g. "provenance": {"kind": "synthetic", "model": "...", '
                '"prompt_hash": "..."}')
        return HAND
    for key in getattr(value, "repeated", []):
        problem(f"{label}`provenance` field `{key}` is given twice", key, "keep one")
    kind = value.get("kind", source)
    if kind is None:
        problem(f"{label}`provenance` has no `kind`", clip(json.dumps(value)),
                'add "kind": "hand", "synthetic", "log" or "incident"')
        return HAND
    if (bad := source_problem(kind, "provenance kind")) is not None:
        problem(label + bad[0], kind, bad[1])
        return HAND
    if isinstance(source, str) and source != kind:
        problem(f"{label}`source` is {json.dumps(source)} but `provenance.kind` is {json.dumps(kind)}", source,
                "they say the same thing: keep `provenance` and drop `source`, or make them agree")
    return Provenance(kind, {k: v for k, v in value.items() if k != "kind"})


def _tags(value: Any, label: str, problem: Report) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return tuple(value)
    hint = f'wrap it in a list: "tags": [{json.dumps(value)}]' if isinstance(value, str) else (
        'e.g. "tags": ["install", "hard"]')
    problem(f"{label}`tags` must be a list of strings", value, hint)
    return ()


def _field_hint(key: str, fields: tuple[str, ...] = FIELDS, aliases: dict[str, str] = ALIASES) -> str:
    known = ", ".join(f"`{f}`" for f in fields)
    guess = aliases.get(key.lower()) or next(iter(difflib.get_close_matches(key.lower(), fields, n=1)), None)
    start = f"did you mean `{guess}`? " if guess else ""
    return f"{start}known fields: {known}; fields starting with `_` are ignored"


def clip(text: str, width: int = 120) -> str:
    """Text cut to `width` characters, for error messages."""
    return text if len(text) <= width else text[: width - 3] + "..."
