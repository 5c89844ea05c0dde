"""Fill a Scorecard's statistics in place: intervals, diagnoses, and the stats keys of `extras`.

Keys written (documented in docs/stats.md):
- `RetrieverResult.intervals[metric] = [low, high]`: percentile bootstrap over answerable questions.
- `QuestionResult.diagnosis` for every miss.
- `extras["stats"]`: how the numbers were made (method, confidence, resamples, seed, power).
- `extras["comparison"]`: `Comparison.to_dict()`, when the scorecard has two or more retrievers.
- `extras["breakdown"]`: by tag and by source, with the synthetic-vs-hand warnings.
- `extras["off_topic"]`: off-topic separability per retriever.
- `extras["diagnosis_counts"]`: retriever -> cause -> number of misses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from goldeval.corpus.model import Passage
from goldeval.report.scorecard import RetrieverResult, Scorecard
from goldeval.stats.bootstrap import bootstrap_intervals
from goldeval.stats.breakdown import breakdown_report
from goldeval.stats.compare import compare_scorecard, headline_metrics
from goldeval.stats.diagnosis import diagnose_scorecard
from goldeval.stats.offtopic import off_topic_report

METHOD = "percentile bootstrap over answerable questions"


def annotate_scorecard(
    scorecard: Scorecard,
    *,
    seed: int = 0,
    resamples: int = 10_000,
    corpus_passages: Sequence[Passage] | None = None,
    confidence: float = 0.95,
    power: float = 0.8,
    kinds: Mapping[str, str] | None = None,
) -> None:
    """Compute every statistic of issue 4 and store it on the scorecard (seeded, reproducible)."""
    fill_intervals(scorecard, seed=seed, resamples=resamples, confidence=confidence)
    headline = headline_metrics(scorecard.metrics, scorecard.k)
    scorecard.extras["stats"] = {
        "method": METHOD,
        "confidence": confidence,
        "resamples": resamples,
        "seed": seed,
        "power": power,
        "headline_metrics": headline,
        "k": max(scorecard.k) if scorecard.k else None,
    }
    if len(scorecard.retrievers) >= 2:
        comparison = compare_scorecard(scorecard, seed=seed, resamples=resamples, confidence=confidence, power=power)
        scorecard.extras["comparison"] = comparison.to_dict()
    else:
        scorecard.extras.pop("comparison", None)
    scorecard.extras["breakdown"] = breakdown_report(scorecard, headline, resamples=resamples, seed=seed,
                                                     confidence=confidence)
    scorecard.extras["off_topic"] = off_topic_report(scorecard)
    scorecard.extras["diagnosis_counts"] = diagnose_scorecard(scorecard, passages=corpus_passages, kinds=kinds)


def fill_intervals(scorecard: Scorecard, *, seed: int = 0, resamples: int = 10_000, confidence: float = 0.95) -> None:
    """Set `intervals[metric] = [low, high]` on every retriever (empty when it has no answerable question).

    All retrievers share one set of resampled questions (one matrix product), so their intervals line
    up question for question and the resampling is done once.
    """
    for r in scorecard.retrievers:
        r.intervals = {}
    groups: dict[tuple[str, ...], list[RetrieverResult]] = {}
    for r in scorecard.retrievers:
        if r.answerable:
            groups.setdefault(tuple(q.id for q in r.answerable), []).append(r)
    for retrievers in groups.values():
        columns: list[tuple[RetrieverResult, str]] = [
            (r, m) for r in retrievers for m in ([m for m in scorecard.metrics if m in r.metrics] or list(r.metrics))
        ]
        if not columns:
            continue
        n = len(retrievers[0].answerable)
        values = np.empty((n, len(columns)))
        for j, (r, m) in enumerate(columns):
            values[:, j] = [q.metrics.get(m, 0.0) for q in r.answerable]
        ci = bootstrap_intervals(values, resamples=resamples, seed=seed, confidence=confidence, stream=0)
        for j, (r, m) in enumerate(columns):
            r.intervals[m] = [float(ci[0, j]), float(ci[1, j])]
