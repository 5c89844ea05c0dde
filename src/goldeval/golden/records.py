"""One golden-set record (a JSON object) to a Question, with every problem of its fields.

The field rules of the format in docs/golden.md live here; `goldeval.golden.io` reads the file and
`goldeval.golden.validate` checks the set as a whole and against the corpus.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.golden.model import Question
from goldeval.golden.validate import json_type, question_text_problem, source_problem

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

Report = Callable[[str, object, str | None], None]
"""Records one problem of the current record: (message, bad value, hint)."""

EXAMPLE = '{"id": "q1", "question": "How do I undo a commit?", "expected": ["git/git-reset.md"]}'


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


def parse_record(obj: Any, path: Path, line: int) -> tuple[Question | None, Question | None, list[InputError]]:
    """(the question if the record is valid, a partial question for the id checks, the problems)."""
    def problem(message: str, value: object, hint: str | None) -> None:
        problems.append(InputError(message, path=path, line=line, value=value, hint=hint))

    problems: list[InputError] = []
    if not isinstance(obj, dict):
        problem(f"expected a JSON object, found a JSON {json_type(obj)}", clip(json.dumps(obj)),
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


def _expected(obj: dict[str, Any], label: str, problem: Report) -> dict[str, int] | None:
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
            problem(f"{label}relevance of `{pid}` must be an integer, found {json.dumps(rel)}", rel,
                    "graded relevance is an integer: 1 relevant, 2 or more more relevant, 0 judged "
                    "not relevant")
        else:
            expected[pid] = rel
    return expected


def _tags(value: Any, label: str, problem: Report) -> tuple[str, ...]:
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


def clip(text: str, width: int = 120) -> str:
    """Text cut to `width` characters, for error messages."""
    return text if len(text) <= width else text[: width - 3] + "..."
