"""Can a score threshold tell off-topic questions from answerable ones?

For one retriever, compare the top-1 score of answerable questions with that of off-topic ones (no
expected answer): their ranges (min, median, max), whether the ranges overlap, the ROC AUC (the
probability that a random answerable question scores higher than a random off-topic one, ties
counted half: the Mann-Whitney U statistic over n1 * n2), and the best threshold "reject when the
top-1 score is below t" with its cost: answerable questions it would wrongly reject and off-topic
ones it would let through (Youden's J maximised, so both error rates weigh the same; ties go to fewer
wrongly rejected answers). Questions whose retriever errored are left out; questions that returned
nothing are refused at every threshold. A rank-based score (a reciprocal-rank-fusion hybrid, as its config
records) is flagged: its threshold is no cut on a confidence. The answerable side is the headline's
questions (`goldeval.golden.model.headline_split`): synthetic ones, beside the headline, are left out and
counted (`n_beside`), as every other headline number leaves them out.
Scores are only comparable within one retriever: a threshold of one model means nothing for another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from goldeval.arrays import distinct_values
from goldeval.golden.model import headline_split
from goldeval.retrievers.fusion import RANK_FUSIONS
from goldeval.scorecard.model import QuestionResult, RetrieverResult, Scorecard

NOTE = ("Scores are not comparable across models: each retriever needs its own threshold, "
        "and a new model or a re-indexed corpus needs a new one.")


def roc_auc(positive: np.ndarray, negative: np.ndarray) -> float | None:
    """P(score of a positive > score of a negative), ties counted half; None if either is empty."""
    if positive.size == 0 or negative.size == 0:
        return None
    greater = np.sum(positive[:, None] > negative[None, :])
    equal = np.sum(positive[:, None] == negative[None, :])
    return float((greater + 0.5 * equal) / (positive.size * negative.size))


def best_threshold(
    answerable: np.ndarray, off_topic: np.ndarray, *, answerable_empty: int = 0, off_topic_empty: int = 0
) -> dict[str, Any]:
    """The threshold t (reject when top-1 < t) with the highest Youden's J, and what it costs.

    J = (off-topic rejected / off-topic) - (answerable rejected / answerable): both error rates
    weigh the same however many questions each side has. Minimising the total errors instead, 130
    answerable against 10 off-topic questions nearly always picks "reject nothing" (Youden 1950,
    "Index for rating diagnostic tests"). Candidate cuts are the midpoints between neighbouring
    observed scores, plus the lowest score (accepts every question with results) and just above the
    highest (rejects everything); ties go to fewer wrongly rejected answers. Questions that returned
    nothing (`*_empty`) show no score, so every threshold refuses them: they count on both sides.
    `threshold` is None when no cut has a higher J than accepting every question.
    """
    candidates = distinct_values(np.concatenate([answerable, off_topic]))
    cuts = np.concatenate([[candidates[0]], (candidates[:-1] + candidates[1:]) / 2,
                           [np.nextafter(candidates[-1], np.inf)]])
    rejected = answerable_empty + np.sum(answerable[None, :] < cuts[:, None], axis=1)
    caught = off_topic_empty + np.sum(off_topic[None, :] < cuts[:, None], axis=1)
    n_answerable, n_off = answerable.size + answerable_empty, off_topic.size + off_topic_empty
    youden = caught / n_off - rejected / n_answerable
    best = int(np.lexsort((rejected, -youden))[0])
    if youden[best] <= youden[0] + 1e-12:  # no cut beats accepting everything (cut 0 rejects no score)
        best = 0
    return {
        "threshold": float(cuts[best]) if best else None,
        "rejects_answerable": int(rejected[best]),
        "passes_off_topic": int(n_off - caught[best]),
        "youden_j": float(youden[best]),
        "roc": {  # every candidate cut, ascending: the page's threshold slider looks these up
            "n_answerable": int(n_answerable), "n_off_topic": int(n_off),  # the counts' denominators
            "thresholds": [float(c) for c in cuts],
            "rejects_answerable": [int(x) for x in rejected],
            "passes_off_topic": [int(n_off - x) for x in caught],
            "tpr": [float(x) for x in caught / n_off],
            "fpr": [float(x) for x in rejected / n_answerable],
        },
    }


def rank_based(config: Mapping[str, Any]) -> bool:
    """Whether a retriever's top-1 score is rank-based (reciprocal rank fusion: a sum of w / (k + rank)),
    not a confidence: decided by what the retriever is, as its config records it (`score: rank`, written
    by `goldeval.retrievers.fusion.score_scale`), never by counting distinct values. Counting failed both
    ways: 15 distinct RRF values over 30 questions passed a sqrt(n) rule (issue 18), and a share-of-n
    rule called BM25 rank-based on 100,000 short questions (issue 9). A results file written before the
    config said so is read by its fusion `method`. A reranker over a hybrid scores with its own model."""
    if "score" in config:
        return config["score"] == "rank"
    return config.get("kind") == "hybrid" and config.get("method") in RANK_FUSIONS


def _summary(scores: np.ndarray) -> dict[str, float] | None:
    if scores.size == 0:
        return None
    return {"min": float(scores.min()), "median": float(np.median(scores)), "max": float(scores.max())}


def _scores(questions: list[QuestionResult]) -> np.ndarray:
    return np.array([q.top1_score for q in questions if q.top1_score is not None], dtype=float)


def separability(result: RetrieverResult) -> dict[str, Any]:
    """Off-topic separability of one retriever, as plain data (documented in docs/stats.md).

    Questions whose retriever errored are left out (they say nothing about scores) and counted in
    `n_errors`; questions that returned nothing count as refused at every threshold. The answerable
    questions are the headline's; the synthetic ones beside it are left out and counted in `n_beside`.
    """
    headline, beside = headline_split(result.questions)
    ans_ok = [q for q in headline if not q.error]
    off_ok = [q for q in result.off_topic if not q.error]
    answerable, off_scores = _scores(ans_ok), _scores(off_ok)
    off = [q for q in off_ok if q.top1_score is not None]
    out: dict[str, Any] = {
        "n_answerable": len(headline),
        "n_beside": len(beside),
        "n_off_topic": len(result.off_topic),
        "n_off_topic_empty": len(off_ok) - off_scores.size,
        "n_answerable_empty": len(ans_ok) - answerable.size,
        "n_errors": len(headline) - len(ans_ok) + len(result.off_topic) - len(off_ok),
        "answerable": _summary(answerable),
        "off_topic": _summary(off_scores),
        "overlap": None, "auc": None, "threshold": None, "rejects_answerable": None, "passes_off_topic": None,
        "youden_j": None, "roc": None, "rank_based": False, "highest": None,
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
    if answerable.size and off_ok and off_scores.size == 0:
        out["verdict"] = (f"separable: every off-topic question ({len(off_ok)}) returned no results, "
                          "so any threshold rejects them")
    elif answerable.size == 0 or off_scores.size == 0:
        out["verdict"] = "not enough scored questions on both sides to judge a threshold"
    else:
        out["overlap"] = bool(off_scores.max() >= answerable.min())
        out["auc"] = roc_auc(answerable, off_scores)
        out.update(best_threshold(answerable, off_scores, answerable_empty=out["n_answerable_empty"],
                                  off_topic_empty=out["n_off_topic_empty"]))
        out["rank_based"] = rank_based(result.config)
        out["verdict"] = _verdict(out, len(ans_ok), len(off_ok))
    asides = []
    if out["n_answerable_empty"] and out["auc"] is not None:
        asides.append(f"{_count(out['n_answerable_empty'], 'answerable question')} returned nothing: "
                      "refused at any threshold")
    if out["n_off_topic_empty"] and out["auc"] is not None:
        asides.append(f"{out['n_off_topic_empty']} of the off-topic questions returned no results at all")
    if out["n_errors"]:
        asides.append(f"{_count(out['n_errors'], 'question')} whose retriever errored left out")
    if beside:
        asides.append(f"{_count(len(beside), 'synthetic question')} beside the headline left out")
    if asides:
        out["verdict"] += f" ({'; '.join(asides)})"
    if out["rank_based"]:
        n_values, n_scored = distinct_values(np.concatenate([answerable, off_scores])).size, answerable.size + off_scores.size
        out["verdict"] += (f". The top-1 score is a rank-based score (reciprocal rank fusion: {n_values} distinct "
                           f"values over {n_scored} questions), not a confidence, so a threshold on it says little")
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _verdict(s: dict[str, Any], n_ans: int, n_off: int) -> str:
    t, rej, passed = s["threshold"], s["rejects_answerable"], s["passes_off_topic"]
    empty = s["n_answerable_empty"]
    if not s["overlap"] and t is not None:
        kept = "every answerable one that returned results" if empty else "every answerable one"
        return f"separable: a threshold at {t:.4g} rejects all {_count(n_off, 'off-topic question')} and keeps {kept}"
    auc = s["auc"]
    if t is None:
        cost = (f"no threshold does better than accepting every question, which lets {passed} of {n_off} "
                f"off-topic ones through")
    else:
        cost = (f"the best threshold ({t:.4g}, weighing both error rates equally) still wrongly rejects {rej} of "
                f"{_count(n_ans, 'answerable question')} and lets {passed} of {n_off} off-topic ones through")
    if auc >= 0.9:
        return f"mostly separable (AUC {auc:.2f}): {cost}"
    if auc >= 0.7:
        return f"partly separable (AUC {auc:.2f}): {cost}; a threshold alone will not do"
    return f"not separable (AUC {auc:.2f}): off-topic questions score like answerable ones; {cost}"


def off_topic_report(scorecard: Scorecard) -> dict[str, Any]:
    """`{"note": ..., "retrievers": {name: separability}}` for every retriever of the scorecard."""
    return {"note": NOTE, "retrievers": {r.name: separability(r) for r in scorecard.retrievers}}
