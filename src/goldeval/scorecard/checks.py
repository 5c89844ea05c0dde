"""Consistency checks of a results file as read: a file that says something the numbers inside it
do not support is refused, naming the first field that is wrong by its JSON path (issue 9, class 4).

`scorecard.io` checks each field's type and recomputes every aggregate from the per-question values;
these checks go on from there, on the parsed Scorecard:

- the run's shape: `level` is doc or chunk, `k` and `depth` are positive, `headline` metrics are
  metrics of the file, the `golden` and `corpus` fields renderers show are text or counts, and each
  snippet is an object of strings;
- each retriever: a mean for every metric of `metric_names` and no other, a value for every one of
  them on every answerable question, every value within [0, 1] (every goldeval metric is a share), intervals within [0, 1]
  with low <= high, the same questions (ids, once each) as the first retriever, so pairing is sound;
- each answerable question: `rank` is the best of its `ranks`, and its hit@k and MRR agree with
  that rank (an edit of a value and of its mean together is still caught).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import QuestionResult, RetrieverResult, Scorecard

TOLERANCE = 1e-6


class BadField(Exception):
    """A field of a results file that is wrong: `where` is its JSON path."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")


def check_scorecard(card: Scorecard) -> None:
    """Raise BadField naming the first inconsistency of a scorecard read from a file."""
    _check_run(card)
    first_ids: list[str] | None = None
    for i, r in enumerate(card.retrievers):
        where = f"retrievers[{i}]"
        ids = [q.id for q in r.questions]
        if len(set(ids)) < len(ids):
            repeated = next(qid for qid in ids if ids.count(qid) > 1)
            raise BadField(f"{where}.questions", f"question {repeated!r} is listed twice")
        if first_ids is None:
            first_ids = ids
        elif sorted(ids) != sorted(first_ids):
            raise BadField(f"{where}.questions", "holds other questions than retrievers[0]; every retriever of a "
                           "file answers the same golden set")
        _check_retriever(r, card.metrics, where)


def _check_run(card: Scorecard) -> None:
    if card.level not in ("doc", "chunk"):
        raise BadField("level", f"must be doc or chunk, not {card.level!r}")
    if any(k < 1 for k in card.k):
        raise BadField("k", "cut-offs must be positive")
    if card.depth < 0:
        raise BadField("depth", "must not be negative")
    unknown = [str(m) for m in card.headline if card.metrics and m not in card.metrics]
    if unknown:
        raise BadField("headline", f"{', '.join(unknown)} is not in metric_names")
    for section, fields in (("golden", ("path", "fingerprint")), ("corpus", ("path", "name", "fingerprint"))):
        _strings(getattr(card, section), fields, section)
    for pid, snippet in card.snippets.items():
        if not isinstance(snippet, Mapping) or not all(isinstance(v, str) for v in snippet.values()):
            raise BadField(f"snippets.{pid}", "must be an object of strings (doc, title, text)")


def _strings(data: Mapping[str, Any], fields: tuple[str, ...], where: str) -> None:
    for key in fields:
        if key in data and data[key] is not None and not isinstance(data[key], str):
            raise BadField(f"{where}.{key}", f"must be a string, not {type(data[key]).__name__}")


def _check_retriever(r: RetrieverResult, metrics: list[Metric], where: str) -> None:
    known = set(metrics)
    absent = [str(m) for m in metrics if m not in r.metrics]
    if r.answerable and absent:
        raise BadField(f"{where}.metrics", f"has no value for {', '.join(absent)}")
    for metric, value in r.metrics.items():
        if known and metric not in known:
            raise BadField(f"{where}.metrics.{metric}", "is not in metric_names")
        _share(value, f"{where}.metrics.{metric}")
    for metric, (low, high) in r.intervals.items():
        _share(low, f"{where}.intervals.{metric}")
        _share(high, f"{where}.intervals.{metric}")
        if low > high:
            raise BadField(f"{where}.intervals.{metric}", f"low {low:g} is above high {high:g}")
    wanted = [m for m in metrics if m in r.metrics] if r.metrics else []
    for j, q in enumerate(r.questions):
        at = f"{where}.questions[{j}]"
        for metric, value in q.metrics.items():
            _share(value, f"{at}.metrics.{metric}")
        if q.off_topic:
            continue
        missing = [str(m) for m in wanted if m not in q.metrics]
        if missing:
            raise BadField(f"{at}.metrics", f"has no value for {', '.join(missing)}")
        _check_rank(q, at)


def _check_rank(q: QuestionResult, at: str) -> None:
    found = [r for e, r in q.ranks.items() if r is not None and e in q.expected]
    best = min(found) if found else None
    if q.ranks and q.rank != best:
        raise BadField(f"{at}.rank", f"is {q.rank} but the best of its ranks is {best}")
    for metric, value in q.metrics.items():
        expected = _from_rank(metric, q.rank)
        if expected is not None and abs(expected - value) > TOLERANCE:
            raise BadField(f"{at}.metrics.{metric}", f"is {value:g} but rank {q.rank} gives {expected:g}")


def _from_rank(metric: Metric, rank: int | None) -> float | None:
    """hit@k and MRR follow from the rank of the first correct result alone; other metrics do not."""
    within = rank is not None and (metric.k is None or rank <= metric.k)
    if metric.name == "hit":
        return 1.0 if within else 0.0
    if metric.name == "mrr":
        return 1.0 / rank if within and rank is not None else 0.0
    return None


def _share(value: float, where: str) -> None:
    if not 0.0 - TOLERANCE <= value <= 1.0 + TOLERANCE:
        raise BadField(where, f"is {value:g}, outside [0, 1], where every goldeval metric lies")
