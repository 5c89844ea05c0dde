"""The common golden-set record, read in one pass: what `records.parse_record` gives it, at a fraction of the cost.

Most records of a golden set have one shape: `id` and `question` (non-blank strings, or an integer id),
`expected` (distinct non-empty ids, or an {id: integer} object) and/or `judgments` whose items are only
`doc` and `grade`, perhaps `tags` (strings), `source` (a provenance kind), `notes` (a string), an `intent`
that is the one its grades imply, and `_` fields of the user's own. `parse_record` finds no problem in such
a record; `plain_record` gives the same Question and the same grades without its general checks, a dict per
JSON object or a `Judgment` per judgment (issue 23: at 100k questions those cost four times the JSON
decoding). Anything else (a problem to report, another field, another shape) gives None, and the record
goes to `parse_record`, which owns every rule and every message; tests/test_golden_plain.py holds the two
equal on records of every shape, good and bad.

A key given twice: the JSON module's plain decoder keeps the last one silently, where the reader's hook
reports it. Every key written in a line is followed by a colon (the only colons of JSON outside a text),
and a key given twice is read once: so when the line holds exactly as many colons as the objects read
from it hold keys, no key was given twice, and the plain decoder's value is the hook's. A line with colons
in its texts (a URL, a time) is counted again with them, when no escape makes a text read otherwise than
it is written; any other line goes the general way.
"""

from __future__ import annotations

import json
from json.scanner import make_scanner
from typing import Any

from goldeval.errors import optional
from goldeval.golden.model import HAND, Provenance, Question, implied_intent
from goldeval.golden.records import ALIASES
from goldeval.golden.validate import question_text_problem, source_problem

Plain = tuple[Question, dict[str, int]]
"""A record read by `plain_record`: its question and its judged ids -> grade, in the order `parse_record`
gives its judgments (`expected` first, then `judgments`)."""

_SCAN = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # (typeshed: the C scanner takes the decoder)
"""The JSON module's C scanner without a hook: each object a dict, with no Python call. A line it does not
read whole (whitespace around the value, or no JSON) goes the other way, which says what is wrong."""
_ORJSON = optional("orjson")  # the `fast` extra; without it the scanner reads every line
_LOADS = None if _ORJSON is None else _ORJSON.loads
"""orjson's reader where the `fast` extra installs it (a third faster than the scanner at 100k questions): it
reads the same objects from valid JSON and refuses what the scanner would read otherwise (NaN, integers past
64 bits, lone surrogates, nesting past 1,024), which then goes the general way, as a line the scanner does not
take does. Only a line that is one object, nothing around it, is given to it, as the scanner takes only those."""
_FIELDS = frozenset({"id", "question", "expected", "judgments", "tags", "source", "notes", "intent"})
_JUDGMENT = frozenset({"doc", "grade"})
_STR, _INT = frozenset({str}), frozenset({int})
_ABSENT = object()


def read_plain(line: str, number: int) -> Plain | None:
    """The record on `line` (file line `number`) when it has the common shape, else None (it may be any JSON,
    or none: the caller reads it again as it reads every other record)."""
    if _LOADS is not None:
        if not (line.startswith("{") and line.endswith("}")):
            return None
        try:
            return plain_record(_LOADS(line), line, number)
        except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError
            return None
    try:
        value, end = _SCAN(line, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    return plain_record(value, line, number) if end == len(line) else None


def plain_record(obj: Any, line: str, number: int) -> Plain | None:
    """`parse_record(obj)`'s question and grades when `obj` (decoded from the text `line`, line `number` of its
    file) has the common shape and no problem, else None."""
    if type(obj) is not dict:
        return None
    keys = obj.keys()
    if not keys <= _FIELDS and not all(k.startswith("_") and k not in ALIASES for k in keys - _FIELDS):
        return None
    qid, text = obj.get("id"), obj.get("question")
    if type(qid) is int:
        qid = str(qid)
    elif type(qid) is not str or not qid.strip():
        return None
    if type(text) is not str or question_text_problem(text) is not None:
        return None
    pairs = len(obj)
    expected, listed = obj.get("expected", _ABSENT), obj.get("judgments", _ABSENT)
    if expected is not _ABSENT:
        grades = _expected(expected)
        if grades is None:
            return None
        if type(expected) is dict:
            pairs += len(grades)
    elif listed is _ABSENT:
        return None
    else:
        grades = {}
    if listed is not _ABSENT:
        if type(listed) is not list or (grades := _judged(listed, grades)) is None:
            return None
        pairs += 2 * len(listed)
    intent = implied_intent(grades.values())
    if len(obj) > 2 + (expected is not _ABSENT) + (listed is not _ABSENT):  # fields beyond these: intent, tags...
        tags, provenance, notes = _tags(obj), _provenance(obj), obj.get("notes", "")
        if obj.get("intent", intent) != intent or tags is None or provenance is None or type(notes) is not str:
            return None
    else:
        tags, provenance, notes = (), HAND, ""
    if not _once(obj, line, pairs):
        return None  # a key maybe given twice
    return Question(qid, text, intent, tags, provenance, notes, number), grades


def _once(obj: dict[str, Any], line: str, pairs: int) -> bool:
    """Whether no key of `line` was given twice (see the module docstring): its colons are the `pairs` counted,
    or, in a line without an escape (where each text reads as written), the keys of every object read from it
    and the colons in their texts."""
    colons = line.count(":")
    if colons == pairs:
        return True
    if colons < pairs or "\\" in line:
        return False
    try:
        return colons == sum(_keys_and_colons(obj))
    except RecursionError:  # nested deeper than Python's stack goes: the general way says so
        return False


def _keys_and_colons(value: Any) -> tuple[int, int]:
    """(keys of every object, colons in every text) of a JSON value, nested ones included."""
    kind = type(value)
    if kind is str:
        return 0, value.count(":")
    if kind is dict:
        keys, colons = len(value), sum(k.count(":") for k in value)
        for item in value.values():
            more = _keys_and_colons(item)
            keys, colons = keys + more[0], colons + more[1]
        return keys, colons
    if kind is list:
        keys = colons = 0
        for item in value:
            more = _keys_and_colons(item)
            keys, colons = keys + more[0], colons + more[1]
        return keys, colons
    return 0, 0


def _expected(value: Any) -> dict[str, int] | None:
    """`expected` as {id: grade}: a list of distinct non-empty strings (each grade 1), or an object of integer
    grades with no empty id; None for anything else."""
    if type(value) is list:
        if not _STR.issuperset(map(type, value)) or "" in value or len(set(value)) != len(value):
            return None
        return dict.fromkeys(value, 1)
    if type(value) is dict and _INT.issuperset(map(type, value.values())) and "" not in value:
        return value
    return None


def _judged(items: list[Any], expected: dict[str, int]) -> dict[str, int] | None:
    """`expected` and then `judgments` items of only a non-empty `doc` and an integer `grade`, as one new dict;
    None at any other item, or at a document graded twice with two grades (which `parse_record` reports)."""
    grades = dict(expected)
    for item in items:
        if type(item) is not dict or item.keys() != _JUDGMENT:
            return None
        doc, grade = item["doc"], item["grade"]
        if type(doc) is not str or not doc or type(grade) is not int or grades.get(doc, grade) != grade:
            return None
        grades[doc] = grade
    return grades


def _tags(obj: dict[str, Any]) -> tuple[str, ...] | None:
    value = obj.get("tags", ())
    if value == ():
        return ()
    return tuple(value) if type(value) is list and _STR.issuperset(map(type, value)) else None


def _provenance(obj: dict[str, Any]) -> Provenance | None:
    if "source" not in obj:
        return HAND
    source = obj["source"]
    return Provenance(source) if source_problem(source) is None else None
