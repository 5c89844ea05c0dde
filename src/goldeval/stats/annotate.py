"""`compare`: the statistics step after `evaluate`, as ranx keeps `evaluate` and `compare` apart.

Returns a copy of the scorecard with (documented in docs/stats.md):
- `RetrieverResult.intervals[metric] = (low, high)`: percentile bootstrap over the headline questions
  (`goldeval.golden.model.headline_split`: synthetic ones are beside, never in it);
- `QuestionResult.diagnosis` for every miss at the headline k;
- `Scorecard.statistics`: how the numbers were made (method, confidence, resamples, seed, power), the
  comparison of the retrievers when there are two or more, the breakdown by tag and by source,
  off-topic separability per retriever, and the miss counts per cause.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.golden.model import GoldenSet
from goldeval.limits import check_number
from goldeval.scorecard.model import RetrieverResult, Scorecard
from goldeval.scorecard.statistics import Statistics
from goldeval.stats.bootstrap import MIN_INTERVAL_QUESTIONS, bootstrap_intervals
from goldeval.stats.breakdown import breakdown_report
from goldeval.stats.compare import compare_scorecard
from goldeval.stats.diagnosis import diagnose_scorecard
from goldeval.stats.offtopic import off_topic_report
from goldeval.stats.stored import read_stats, stats_key, write_stats

METHOD = "percentile bootstrap over the headline questions"


def compare(
    scorecard: Scorecard,
    *,
    seed: int = 0,
    resamples: int = 10_000,
    confidence: float = 0.95,
    power: float = 0.8,
    passages: Sequence[Passage] | None = None,
    kinds: Mapping[str, str] | None = None,
    golden: GoldenSet | None = None,
    workspace: str | Path | None = None,
) -> Scorecard:
    """A copy of `scorecard` with every statistic filled in (seeded, so reproducible).

    `passages` (the corpus as indexed) lets the miss diagnosis read passage texts; `kinds` maps a
    retriever name to `lexical` or `semantic` when its name does not say. With `golden` and `passages`,
    a set holding synthetic questions also gets its leakage beside the hand-written questions'.
    With `workspace`, the statistics are kept there by content (`goldeval.stats.stored`) and an
    unchanged scorecard's are read back instead of computed again: the same values.
    """
    check_settings(resamples=resamples, confidence=confidence, power=power)
    card = copy.deepcopy(scorecard)
    settings = {"seed": seed, "resamples": resamples, "confidence": confidence, "power": power,
                "kinds": dict(kinds or {})}
    key = stats_key(scorecard, settings, passages, golden) if workspace is not None else None
    if key is not None and workspace is not None and read_stats(workspace, key, card):
        return card
    _fill(card, seed=seed, resamples=resamples, confidence=confidence, power=power, passages=passages, kinds=kinds,
          golden=golden)
    if key is not None and workspace is not None:
        write_stats(workspace, key, card)
    return card


def _fill(card: Scorecard, *, seed: int, resamples: int, confidence: float, power: float,
          passages: Sequence[Passage] | None, kinds: Mapping[str, str] | None, golden: GoldenSet | None) -> None:  # fmt: skip
    fill_intervals(card, seed=seed, resamples=resamples, confidence=confidence)
    comparison = None
    if len(card.retrievers) >= 2:
        comparison = compare_scorecard(card, seed=seed, resamples=resamples, confidence=confidence, power=power)
    diagnosis = diagnose_scorecard(card, k=card.headline_k, passages=passages, kinds=kinds)
    card.statistics = Statistics(
        method=METHOD, confidence=confidence, resamples=resamples, seed=seed, power=power,
        comparison=comparison,
        breakdown=breakdown_report(card, card.headline, resamples=resamples, seed=seed, confidence=confidence),
        off_topic=off_topic_report(card),
        diagnosis_counts=diagnosis.counts, diagnosis_beside=diagnosis.beside, hubs=diagnosis.hubs, missed_by_all=diagnosis.missed_by_all,
        min_questions=MIN_INTERVAL_QUESTIONS,
        leakage=_leakage(golden, passages),
    )


def _leakage(golden: GoldenSet | None, passages: Sequence[Passage] | None) -> dict[str, Any]:
    """Leakage figures when there are synthetic questions to measure; {} otherwise."""
    if golden is None or not passages or not any(q.source == "synthetic" for q in golden.answerable):
        return {}
    from goldeval.synth.leakage import leakage_for_golden

    return leakage_for_golden(golden, passages).to_dict()


def check_settings(*, resamples: int, confidence: float, power: float) -> None:
    """Refuse settings that cannot give a meaningful interval or would exhaust memory."""
    check_number("resamples", resamples)  # bounds declared once, in goldeval.limits
    check_number("confidence", confidence)
    if not 0 < power < 1:
        raise InputError(f"power must be in (0, 1), got {power}", value=power, hint="e.g. 0.8")


def fill_intervals(scorecard: Scorecard, *, seed: int = 0, resamples: int = 10_000, confidence: float = 0.95) -> None:
    """Set `intervals[metric] = (low, high)` on every retriever (empty with fewer than
    `MIN_INTERVAL_QUESTIONS` headline questions: too few for an interval).

    All retrievers share one set of resampled questions (one matrix product), so their intervals line
    up question for question and the resampling is done once.
    """
    for r in scorecard.retrievers:
        r.intervals = {}
    groups: dict[tuple[str, ...], list[RetrieverResult]] = {}
    for r in scorecard.retrievers:
        if len(r.headline_questions) >= MIN_INTERVAL_QUESTIONS:
            groups.setdefault(tuple(q.id for q in r.headline_questions), []).append(r)
    for retrievers in groups.values():
        columns = [(r, m) for r in retrievers for m in ([m for m in scorecard.metrics if m in r.metrics] or list(r.metrics))]
        if not columns:
            continue
        n = len(retrievers[0].headline_questions)
        values = np.empty((n, len(columns)))
        for j, (r, m) in enumerate(columns):
            values[:, j] = [q.metrics.get(m, 0.0) for q in r.headline_questions]
        ci = bootstrap_intervals(values, resamples=resamples, seed=seed, confidence=confidence, stream=0)
        for j, (r, m) in enumerate(columns):
            r.intervals[m] = (float(ci[0, j]), float(ci[1, j]))
