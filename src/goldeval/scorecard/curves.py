"""Metrics at every k from 1 to the depth, flips and differences between retrievers, from the stored ranks.

hit@k, recall@k, precision@k and nDCG@k depend only on where the relevant answers landed and on
their grades (trec_eval's definitions), and a QuestionResult keeps exactly that: each expected id's
rank within the depth. So the curves are computed by the one metric engine (`goldeval.metrics.compute`)
from those ranks (`curves_of`: as a ranking holding the relevant ids at their ranks would be judged),
for new scorecards (their columns) and for files read back (their questions) alike. The page looks these
values up; it has no formula of its own.

`summarise` is the one place a retriever's means and curves are made from its questions: over the
headline questions (`goldeval.golden.model.headline_split`), with the synthetic ones beside, for new
scorecards, files read back and restricted copies alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from goldeval.metrics.compute import RELEVANCE_LEVEL, assemble, curve_means, question_mean
from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import CURVE_METRICS, Beside, QuestionResult, RetrieverResult


def metric_curves(questions: Sequence[QuestionResult], depth: int) -> dict[str, list[float]]:
    """Mean over the answerable `questions` of each curve metric at k = 1..depth; {} without any."""
    answerable = [q for q in questions if not q.off_topic]
    owner, grade, rank = [], [], []
    for i, q in enumerate(answerable):
        for doc, g in q.expected.items():
            owner.append(i)
            grade.append(g)
            rank.append(q.ranks.get(doc) or 0)
    return curves_of(len(answerable), np.asarray(owner, dtype=np.int64), np.asarray(grade, dtype=np.float64),
                     np.asarray(rank, dtype=np.int64), depth)


def curves_of(n: int, owner: np.ndarray, grade: np.ndarray, rank: np.ndarray, depth: int) -> dict[str, list[float]]:
    """Mean over n answerable questions of each curve metric at k = 1..depth, from their expected answers
    alone: answer j of question `owner[j]`, with `grade[j]`, stands at 1-based `rank[j]` (0: not within the
    depth). The one metric engine scores them (`metrics.compute`) as a ranking holding each expected answer
    at its rank and unjudged results elsewhere, as long as the deepest of them; {} without a question."""
    if not n or depth < 1:
        return {}
    found = (rank >= 1) & (rank <= depth)
    num_ret = np.zeros(n, dtype=np.int64)
    np.maximum.at(num_ret, owner[found], rank[found])
    judged = assemble(n, RELEVANCE_LEVEL, num_ret, owner, grade, owner[found], rank[found], grade[found])
    return curve_means(judged, CURVE_METRICS, depth)


def mean_values(questions: Sequence[QuestionResult], metrics: Sequence[Metric]) -> dict[Metric, float]:
    """Each metric's mean over `questions` ({} without any: nothing to average, never a zero)."""
    if not questions:
        return {}
    return {m: question_mean([q.metrics.get(m, 0.0) for q in questions]) for m in metrics}


def summarise(r: RetrieverResult, metrics: Sequence[Metric], depth: int) -> None:
    """Set `r.metrics` and `r.curves` over its headline questions and `r.synthetic` over those beside.
    A new scorecard's questions are columns (`RetrieverResult.columns`): read there, not made one by one."""
    if r.columns is not None:
        columns = r.columns
        r.metrics = columns.means(columns.headline, metrics)
        r.curves = curves_of(*columns.expected_ranks(columns.headline), depth)
        beside = columns.beside
        r.synthetic = (Beside(len(beside), columns.means(beside, metrics), curves_of(*columns.expected_ranks(beside), depth))
                       if len(beside) else Beside())  # fmt: skip
        return
    headline, beside_questions = r.headline_questions, r.synthetic_questions
    r.metrics = mean_values(headline, metrics)
    r.curves = metric_curves(headline, depth)
    r.synthetic = (Beside(len(beside_questions), mean_values(beside_questions, metrics),
                          metric_curves(beside_questions, depth)) if beside_questions else Beside())


def differences(a: RetrieverResult, b: RetrieverResult) -> dict[str, Any]:
    """B minus A on every curve at k = 1..depth (`curves`) and on every metric without a cut-off
    (`metrics`: MRR, MAP, ...), each over its own headline questions: what the page's Compare tab shows."""
    curves = {name: [float(y - x) for x, y in zip(a.curves[name], b.curves[name], strict=False)]
              for name in CURVE_METRICS if name in a.curves and name in b.curves}
    fixed = {str(m): float(b.metrics[m] - a.metrics[m]) for m in a.metrics if m.k is None and m in b.metrics}
    return {"curves": curves, "metrics": fixed}


def pair_differences(retrievers: Sequence[RetrieverResult]) -> dict[str, dict[str, Any]]:
    """`"A|B"` -> `differences(A, B)` for every ordered pair of retrievers of one scorecard."""
    return {f"{a.name}|{b.name}": differences(a, b) for a in retrievers for b in retrievers if a is not b}


def flips(retrievers: Sequence[RetrieverResult], depth: int) -> dict[str, dict[str, list[int]]]:
    """For every pair (A before B) and every k = 1..depth: headline questions A hits and B misses
    within the top k (`a_only`), and the reverse (`b_only`). Pairs scored on other questions are skipped."""
    out: dict[str, dict[str, list[int]]] = {}
    ks = np.arange(1, depth + 1)
    for i, a in enumerate(retrievers):
        for b in retrievers[i + 1 :]:
            a_ranks, b_ranks = _ranks(a), _ranks(b)
            if a_ranks.keys() != b_ranks.keys():
                continue
            ids = list(a_ranks)
            ra = np.array([a_ranks[q] for q in ids], dtype=np.int64).reshape(-1, 1)
            rb = np.array([b_ranks[q] for q in ids], dtype=np.int64).reshape(-1, 1)
            hit_a, hit_b = ra <= ks, rb <= ks
            out[f"{a.name}|{b.name}"] = {
                "a_only": [int(x) for x in (hit_a & ~hit_b).sum(axis=0)],
                "b_only": [int(x) for x in (hit_b & ~hit_a).sum(axis=0)],
            }
    return out


def _ranks(r: RetrieverResult) -> dict[str, int]:
    """Headline question -> rank of its first correct result (beyond any depth when missed)."""
    never = np.iinfo(np.int64).max
    if r.columns is not None:
        ids, ranks = r.columns.first_ranks(r.columns.headline)
        return dict(zip(ids, np.where(ranks > 0, ranks, never).tolist(), strict=True))
    return {q.id: q.rank if q.rank is not None else never for q in r.headline_questions}
