"""Can a score threshold tell off-topic questions from answerable ones?

For one retriever, compare the top-1 score of answerable questions with that of off-topic ones (no
expected answer): their ranges (min, median, max), whether the ranges overlap, the ROC AUC (the
probability that a random answerable question scores higher than a random off-topic one, ties
counted half: the Mann-Whitney U statistic over n1 * n2), and the best threshold "reject when the
top-1 score is below t" with its cost: answerable questions it would wrongly reject and off-topic
ones it would let through (total errors minimised; ties go to fewer wrongly rejected answers).
Scores are only comparable within one retriever: a threshold of one model means nothing for another.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from goldset.report.scorecard import RetrieverResult, Scorecard

NOTE = ("Scores are not comparable across models: each retriever needs its own threshold, "
        "and a new model or a re-indexed corpus needs a new one.")


def roc_auc(positive: np.ndarray, negative: np.ndarray) -> float | None:
    """P(score of a positive > score of a negative), ties counted half; None if either is empty."""
    if positive.size == 0 or negative.size == 0:
        return None
    greater = np.sum(positive[:, None] > negative[None, :])
    equal = np.sum(positive[:, None] == negative[None, :])
    return float((greater + 0.5 * equal) / (positive.size * negative.size))


def best_threshold(answerable: np.ndarray, off_topic: np.ndarray) -> dict[str, Any]:
    """The threshold t (reject when top-1 < t) with the fewest errors, and what it costs."""
    candidates = np.unique(np.concatenate([answerable, off_topic]))
    # Midpoints between neighbouring scores, plus the lowest score (rejects nothing) and just above the
    # highest (rejects everything).
    cuts = np.concatenate([[candidates[0]], (candidates[:-1] + candidates[1:]) / 2,
                           [np.nextafter(candidates[-1], np.inf)]])
    rejected = np.sum(answerable[None, :] < cuts[:, None], axis=1)
    passed = np.sum(off_topic[None, :] >= cuts[:, None], axis=1)
    total = rejected + passed
    best = int(np.lexsort((rejected, total))[0])
    return {
        "threshold": float(cuts[best]),
        "rejects_answerable": int(rejected[best]),
        "passes_off_topic": int(passed[best]),
    }


def _summary(scores: np.ndarray) -> dict[str, float] | None:
    if scores.size == 0:
        return None
    return {"min": float(scores.min()), "median": float(np.median(scores)), "max": float(scores.max())}


def separability(result: RetrieverResult) -> dict[str, Any]:
    """Off-topic separability of one retriever, as plain data (documented in docs/stats.md)."""
    answerable = np.array([q.top1_score for q in result.answerable if q.top1_score is not None], dtype=float)
    off = [q for q in result.off_topic if q.top1_score is not None]
    off_scores = np.array([q.top1_score for q in off], dtype=float)
    out: dict[str, Any] = {
        "n_answerable": len(result.answerable),
        "n_off_topic": len(result.off_topic),
        "n_off_topic_empty": len(result.off_topic) - len(off),
        "answerable": _summary(answerable),
        "off_topic": _summary(off_scores),
        "overlap": None, "auc": None, "threshold": None, "rejects_answerable": None, "passes_off_topic": None,
        "highest": None,
    }
    if not result.off_topic:
        out["verdict"] = ("no off-topic questions in the golden set: add questions the corpus does not cover "
                          "to learn whether a score threshold can catch them")
        return out
    if off:
        top = max(off, key=lambda q: (q.top1_score, q.id))
        hit = top.top[0]
        out["highest"] = {"question_id": top.id, "question": top.question, "score": hit.score,
                          "passage": hit.id, "doc": hit.doc}
    if answerable.size and off_scores.size == 0:
        out["verdict"] = (f"separable: every off-topic question ({len(result.off_topic)}) returned no results, "
                          "so any threshold rejects them")
        return out
    if answerable.size == 0 or off_scores.size == 0:
        out["verdict"] = "not enough scored questions on both sides to judge a threshold"
        return out
    out["overlap"] = bool(off_scores.max() >= answerable.min())
    out["auc"] = roc_auc(answerable, off_scores)
    out.update(best_threshold(answerable, off_scores))
    out["verdict"] = _verdict(out)
    if out["n_off_topic_empty"]:
        out["verdict"] += f" ({out['n_off_topic_empty']} more off-topic question(s) returned no results at all)"
    return out


def _verdict(s: dict[str, Any]) -> str:
    t, rej, passed = s["threshold"], s["rejects_answerable"], s["passes_off_topic"]
    n_ans, n_off = s["n_answerable"], s["n_off_topic"]
    if not s["overlap"]:
        return (f"separable: a threshold at {t:.4g} rejects all {n_off} off-topic questions "
                f"and keeps every answerable one")
    auc = s["auc"]
    cost = (f"the best threshold ({t:.4g}) still wrongly rejects {rej} of {n_ans} answerable questions "
            f"and lets {passed} of {n_off} off-topic ones through")
    if auc >= 0.9:
        return f"mostly separable (AUC {auc:.2f}): {cost}"
    if auc >= 0.7:
        return f"partly separable (AUC {auc:.2f}): {cost}; a threshold alone will not do"
    return f"not separable (AUC {auc:.2f}): off-topic questions score like answerable ones; {cost}"


def off_topic_report(scorecard: Scorecard) -> dict[str, Any]:
    """`{"note": ..., "retrievers": {name: separability}}` for every retriever of the scorecard."""
    return {"note": NOTE, "retrievers": {r.name: separability(r) for r in scorecard.retrievers}}
