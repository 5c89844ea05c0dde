"""Which scorecards can be compared: the same questions, the same intents, the same provenance kinds.

A paired comparison is only meaningful on questions both runs answered from the same golden set; a
difference in question ids, in which are off-topic or in which are synthetic means the golden set changed
between the evaluations, and the comparison refuses, naming the questions.
"""

from __future__ import annotations

from collections.abc import Sequence

from goldeval.errors import InputError
from goldeval.scorecard.model import Scorecard


def check_same_questions(scorecards: Sequence[Scorecard], labels: Sequence[str]) -> None:
    """Refuse to compare scorecards whose golden set or question sets differ, naming the questions."""
    first_fp = scorecards[0].golden.get("fingerprint")
    reference = _question_ids(scorecards[0])
    for label, sc in zip(labels[1:], scorecards[1:], strict=True):
        ids = _question_ids(sc)
        if ids != reference:
            only_a = sorted(reference - ids)
            only_b = sorted(ids - reference)
            parts = []
            if only_a:
                parts.append(f"only in {labels[0]}: {_few(only_a)}")
            if only_b:
                parts.append(f"only in {label}: {_few(only_b)}")
            raise InputError(
                f"{labels[0]} and {label} were evaluated on different questions ({'; '.join(parts)})",
                value=label, hint="re-run both evaluations on the same golden set",
            )
        flipped = sorted(_answerable_ids(scorecards[0]) ^ _answerable_ids(sc))
        if flipped:
            raise InputError(
                f"{labels[0]} and {label} disagree on which questions are off-topic ({_few(flipped)}): "
                "the golden set changed between the evaluations",
                value=label, hint="re-run both evaluations on the same golden set",
            )
        if moved := sorted(_headline_ids(scorecards[0]) ^ _headline_ids(sc)):
            raise InputError(f"{labels[0]} and {label} disagree on which questions are synthetic ({_few(moved)}): the "
                             "golden set's provenance changed", value=label, hint="re-run both evaluations on the same golden set")
        fp = sc.golden.get("fingerprint")
        if first_fp and fp and fp != first_fp:
            raise InputError(
                f"{labels[0]} and {label} used different golden sets (fingerprint {first_fp} vs {fp}) "
                "with the same question ids: the questions or expected answers changed",
                value=label, hint="re-run both evaluations on the same golden set",
            )
    for label, sc in zip(labels, scorecards, strict=True):
        for r in sc.retrievers[1:]:
            if {(q.id, q.off_topic, q.source) for q in r.questions} != {(q.id, q.off_topic, q.source) for q in sc.retrievers[0].questions}:
                raise InputError(f"retrievers of {label} were scored on different questions", value=r.name)


def _question_ids(sc: Scorecard) -> set[str]:
    return {q.id for r in sc.retrievers for q in r.questions}


def _answerable_ids(sc: Scorecard) -> set[str]:
    return {q.id for r in sc.retrievers for q in r.answerable}


def _headline_ids(sc: Scorecard) -> set[str]:
    return {q.id for r in sc.retrievers for q in r.headline_questions}


def _few(ids: list[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
