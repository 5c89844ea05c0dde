"""Every metric broken down by tag and by source, hand-written and synthetic side by side.

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

from goldset.report.scorecard import QuestionResult, RetrieverResult, Scorecard
from goldset.stats.bootstrap import bootstrap_intervals, unpaired_diff_interval

FLATTER = ("synthetic questions written while reading the answer flatter search; "
           "the hand-written number is the one to report")


def _group(questions: Sequence[QuestionResult], metrics: Sequence[str], *, resamples: int, seed: int,
           stream: int, confidence: float) -> dict[str, Any]:
    values = np.array([[q.metrics.get(m, 0.0) for m in metrics] for q in questions], dtype=float)
    means = values.mean(axis=0)
    ci = bootstrap_intervals(values, resamples=resamples, seed=seed, confidence=confidence, stream=stream)
    return {
        "n": len(questions),
        "metrics": {m: float(means[j]) for j, m in enumerate(metrics)},
        "intervals": {m: [float(ci[0, j]), float(ci[1, j])] for j, m in enumerate(metrics)},
    }


def breakdown_retriever(result: RetrieverResult, metrics: Sequence[str], *, resamples: int = 10_000,
                        seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """`{"by_tag": {tag: group}, "by_source": {source: group}}` over answerable questions."""
    answerable = result.answerable
    tags = sorted({t for q in answerable for t in q.tags})
    sources = sorted({q.source for q in answerable})
    by_tag = {
        tag: _group([q for q in answerable if tag in q.tags], metrics, resamples=resamples, seed=seed,
                    stream=100 + i, confidence=confidence)
        for i, tag in enumerate(tags)
    }
    by_source = {
        source: _group([q for q in answerable if q.source == source], metrics, resamples=resamples, seed=seed,
                       stream=10_000 + i, confidence=confidence)
        for i, source in enumerate(sources)
    }
    return {"by_tag": by_tag, "by_source": by_source}


def synthetic_warnings(result: RetrieverResult, metrics: Sequence[str], *, resamples: int = 10_000,
                       seed: int = 0, confidence: float = 0.95) -> list[dict[str, Any]]:
    """One warning per metric where synthetic questions beat hand-written ones beyond noise."""
    hand = [q for q in result.answerable if q.source == "hand"]
    synthetic = [q for q in result.answerable if q.source == "synthetic"]
    if len(hand) < 2 or len(synthetic) < 2:
        return []
    out = []
    for metric in metrics:
        h = np.array([q.metrics.get(metric, 0.0) for q in hand])
        s = np.array([q.metrics.get(metric, 0.0) for q in synthetic])
        low, high = unpaired_diff_interval(s, h, resamples=resamples, seed=seed, confidence=confidence)
        diff = float(s.mean() - h.mean())
        if low > 0:
            out.append({
                "retriever": result.name, "metric": metric, "hand": float(h.mean()), "synthetic": float(s.mean()),
                "n_hand": len(hand), "n_synthetic": len(synthetic), "diff": diff, "ci": [low, high],
                "text": (f"{result.name}: synthetic questions score {diff * 100:.1f} points higher than "
                         f"hand-written ones on {metric} ({round(confidence * 100)}% CI {low * 100:+.1f} to "
                         f"{high * 100:+.1f}): {FLATTER} ({h.mean():.3f} on {len(hand)} hand-written questions)"),
            })
    return out


def breakdown_report(scorecard: Scorecard, headline: Sequence[str], *, resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95) -> dict[str, Any]:
    """The `breakdown` key of the scorecard JSON (documented in docs/stats.md)."""
    metrics = list(scorecard.metrics)
    sources = {q.source for r in scorecard.retrievers for q in r.answerable}
    report: dict[str, Any] = {
        "metrics": metrics,
        "mixed_sources": {"hand", "synthetic"} <= sources,
        "retrievers": {},
        "warnings": [],
    }
    for r in scorecard.retrievers:
        report["retrievers"][r.name] = breakdown_retriever(r, metrics, resamples=resamples, seed=seed,
                                                           confidence=confidence)
        report["warnings"].extend(synthetic_warnings(r, headline, resamples=resamples, seed=seed,
                                                     confidence=confidence))
    return report
