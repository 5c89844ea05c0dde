"""Golden sets for tests, written as rows: `make_golden([("q1", "where is a", {"a.md": 1}), ...])`.

A row is `(id, question, grades)` with optional `tags` and `source` (the provenance kind) after it.
The grades are the question's judgments (`>= 1` relevant, `<= 0` judged not relevant). A row with no
grades at all is an off-topic question; a row whose grades are all `<= 0` stays answerable (a TREC
topic nobody found a relevant document for), because intent is explicit and never read off grades.

Import it as `from golden_factory import make_golden` (tests/ is on sys.path under pytest).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from goldeval.golden.model import GoldenSet, Judgment, Provenance, Qrels, Question

Row = Sequence[Any]
"""(id, question, {doc: grade}) [, tags [, source]]"""


def make_question(row: Row) -> tuple[Question, list[Judgment]]:
    qid, text, grades = row[0], row[1], row[2]
    tags = tuple(row[3]) if len(row) > 3 else ()
    source = str(row[4]) if len(row) > 4 else "hand"
    if not isinstance(grades, Mapping):
        raise TypeError(f"row {qid!r}: grades must be a {{doc: grade}} dict, not {type(grades).__name__}")
    question = Question(qid, text, intent="answerable" if grades else "off_topic", tags=tags,
                        provenance=Provenance(source))
    return question, [Judgment(qid, doc, int(grade)) for doc, grade in grades.items()]


def make_golden(rows: Iterable[Row], *, path: str = "", version: int | None = None) -> GoldenSet:
    """A GoldenSet (questions in row order) and its Qrels from rows."""
    questions: list[Question] = []
    judgments: list[Judgment] = []
    for row in rows:
        question, judged = make_question(row)
        questions.append(question)
        judgments.extend(judged)
    return GoldenSet(questions, qrels=Qrels(judgments), path=path, version=version)
