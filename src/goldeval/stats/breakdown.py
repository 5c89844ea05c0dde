"""Every metric broken down by tag and by source, hand-written and synthetic side by side.

The tags are read on the headline's questions (`RetrieverResult.headline_questions`: hand-written,
production-log and incident ones), so a tag's number is never a mix of hand-written and synthetic questions.

Hand-written and synthetic questions are never pooled into one number here. When synthetic
questions score higher than hand-written ones by more than noise (the percentile interval of the
unpaired bootstrap difference lies above zero), the breakdown carries a warning: questions written
while reading the answer reuse its words and flatter search; the hand-written number is the one to
report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from goldeval.metrics.compute import question_mean, question_means
from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import RetrieverResult, Scorecard
from goldeval.stats.bootstrap import MIN_INTERVAL_QUESTIONS, bootstrap_intervals, unpaired_diff_intervals

FLATTER = ("synthetic questions written while reading the answer flatter search; "
           "the hand-written number is the one to report")


def _matrix(retrievers: Sequence[RetrieverResult], ids: Sequence[str], metrics: Sequence[Metric]) -> np.ndarray:
    """Questions x (retriever, metric) values, every retriever's columns side by side."""
    out = np.zeros((len(ids), len(retrievers) * len(metrics)))
    for r_index, r in enumerate(retrievers):
        by_id = {q.id: q for q in r.answerable}
        for m_index, m in enumerate(metrics):
            out[:, r_index * len(metrics) + m_index] = [by_id[q].metrics.get(m, 0.0) if q in by_id else 0.0
                                                        for q in ids]
    return out


def _groups(retrievers: Sequence[RetrieverResult], ids: Sequence[str], metrics: Sequence[Metric], *, resamples: int,
            seed: int, stream: int, confidence: float) -> dict[str, dict[str, Any]]:
    """One group (a tag or a source) for every retriever: n, means and intervals, resampled once."""
    values = _matrix(retrievers, ids, metrics)
    means = question_means(values.T)  # the one mean rule: a group of every question reads the headline
    shown = len(ids) >= MIN_INTERVAL_QUESTIONS  # too few questions for an interval: none, and none computed
    ci = bootstrap_intervals(values, resamples=resamples, seed=seed, confidence=confidence, stream=stream) if shown else None
    out = {}
    for r_index, r in enumerate(retrievers):
        cols = range(r_index * len(metrics), (r_index + 1) * len(metrics))
        out[r.name] = {
            "n": len(ids),
            "metrics": {str(m): float(means[j]) for m, j in zip(metrics, cols, strict=True)},
            # too few questions in the group for an interval: none (issue 13)
            "intervals": {str(m): [float(ci[0, j]), float(ci[1, j])] for m, j in zip(metrics, cols, strict=True)}
            if ci is not None else {},
        }
    return out


def synthetic_warnings(retrievers: Sequence[RetrieverResult], metrics: Sequence[Metric], *, resamples: int = 10_000,
                       seed: int = 0, confidence: float = 0.95) -> list[dict[str, Any]]:
    """One warning per retriever and metric where synthetic questions beat hand-written ones beyond noise."""
    if not retrievers or not metrics:
        return []
    reference = retrievers[0].answerable
    hand = [q.id for q in reference if q.source == "hand"]
    synthetic = [q.id for q in reference if q.source == "synthetic"]
    if len(hand) < 2 or len(synthetic) < 2:
        return []
    h, s = _matrix(retrievers, hand, metrics), _matrix(retrievers, synthetic, metrics)
    ci = unpaired_diff_intervals(s, h, resamples=resamples, seed=seed, confidence=confidence)
    out = []
    for r_index, r in enumerate(retrievers):
        for m_index, metric in enumerate(metrics):
            j = r_index * len(metrics) + m_index
            low, high = float(ci[0, j]), float(ci[1, j])
            hand_mean, synthetic_mean = question_mean(h[:, j]), question_mean(s[:, j])
            diff = synthetic_mean - hand_mean
            if low <= 0 or metric in r.unmeasurable:  # past the list it cut short: no verdict (scorecard.depth)
                continue
            out.append({
                "retriever": r.name, "metric": str(metric), "hand": hand_mean, "synthetic": synthetic_mean,
                "n_hand": len(hand), "n_synthetic": len(synthetic), "diff": diff, "ci": [low, high],
                "text": (f"{r.name}: synthetic questions score {diff * 100:.1f} points higher than "
                         f"hand-written ones on {metric} ({round(confidence * 100)}% CI {low * 100:+.1f} to "
                         f"{high * 100:+.1f}): {FLATTER} ({hand_mean:.3f} on {len(hand)} hand-written questions)"),
            })
    return out


def breakdown_report(scorecard: Scorecard, headline: Sequence[Metric], *, resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95) -> dict[str, Any]:
    """The `breakdown` key of the scorecard JSON (documented in docs/stats.md)."""
    metrics = list(scorecard.metrics)
    retrievers = scorecard.retrievers
    reference = retrievers[0].answerable if retrievers else []
    told = retrievers[0].headline_questions if retrievers else []  # tags are read on the headline's questions
    sources = sorted({q.source for q in reference})
    tags = sorted({t for q in told for t in q.tags})
    report: dict[str, Any] = {
        "metrics": [str(m) for m in metrics],
        "mixed_sources": len(sources) > 1,
        "retrievers": {r.name: {"by_tag": {}, "by_source": {}} for r in retrievers},
        "warnings": [],
    }
    for i, tag in enumerate(tags):
        ids = [q.id for q in told if tag in q.tags]
        for name, group in _groups(retrievers, ids, metrics, stream=100 + i, resamples=resamples, seed=seed,
                                     confidence=confidence).items():
            report["retrievers"][name]["by_tag"][tag] = group
    for i, source in enumerate(sources):
        ids = [q.id for q in reference if q.source == source]
        for name, group in _groups(retrievers, ids, metrics, stream=10_000 + i, resamples=resamples, seed=seed,
                                     confidence=confidence).items():
            report["retrievers"][name]["by_source"][source] = group
    report["warnings"] = synthetic_warnings(retrievers, headline, resamples=resamples, seed=seed,
                                            confidence=confidence)
    return report
