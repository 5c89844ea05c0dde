"""The vectorised metric engine: every metric, every question, several cut-offs in one pass.

How it works. All our metrics depend only on *where the judged documents landed*; `goldeval.metrics.judge`
locates them (`Judged`: flat arrays sorted by question and rank). Each metric is then a few numpy
operations over those arrays (`np.bincount` per question), with no per-question numpy call and no
JIT, so the first call costs what the later ones do (only the curves at every k use numba's twin,
`curve_kernels`, when the process has loaded numba already).

Semantics equal trec_eval 10.0 (`m_*.c` in usnistgov/trec_eval) and are tested against its test
vectors and against pytrec_eval:
- relevant means judgment >= 1; judgments <= 0 are non-relevant; negative ones are "unjudged".
- a document repeated in a ranked list counts at its first rank only; later copies are non-relevant.
- a question with no relevant document, or no results, scores 0 on every metric. The caller
  decides which questions are off-topic and leaves them out of averages (never averaged as zeros).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from goldeval import jit, memory
from goldeval.metrics import curve_kernels
from goldeval.metrics.definitions import Metric
from goldeval.metrics.judge import RELEVANCE_LEVEL, Judged, assemble, gc_paused, judge_ranked, judge_scores
from goldeval.types import QrelsDict, RunDict

__all__ = ["RELEVANCE_LEVEL", "Judged", "assemble", "compute", "curve_means", "evaluate_ranked", "evaluate_scores",
           "gc_paused", "judge_ranked", "judge_scores", "ratio"]  # fmt: skip


def ratio(num: np.ndarray, den: np.ndarray | float) -> np.ndarray:
    """num / den, and 0 where den is 0 (trec_eval leaves such values at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


# --- the metrics (each: Judged, cut-off -> one float per question) ------------------------------


def hit(j: Judged, k: int) -> np.ndarray:
    """success_k (trec_eval `m_success.c`): 1 if a relevant document is in the top k, else 0."""
    return _hit(j.count_at(k))


def recall(j: Judged, k: int) -> np.ndarray:
    """recall_k (`m_recall.c`): |relevant in top k| / R; 0 when R = 0."""
    return ratio(j.count_at(k), j.num_rel)


def precision(j: Judged, k: int) -> np.ndarray:
    """P_k (`m_P.c`): |relevant in top k| / k, k even when fewer than k were retrieved."""
    return _precision(j.count_at(k), k)


def _hit(count: np.ndarray) -> np.ndarray:
    return (count > 0).astype(np.float64)


def _precision(count: np.ndarray, k: int | np.ndarray) -> np.ndarray:
    return count / (float(k) if isinstance(k, int) else np.asarray(k, dtype=np.float64))


def reciprocal_rank(j: Judged, k: int | None = None) -> np.ndarray:
    """recip_rank (`m_recip_rank.c`): 1 / rank of the first relevant document; 0 if none (in the top k)."""
    q, rank, pos = j.relevant()
    first = pos == 1
    if k is not None:
        first &= rank <= k
    out = np.zeros(j.n)
    out[q[first]] = 1.0 / rank[first]
    return out


def average_precision(j: Judged, k: int | None = None) -> np.ndarray:
    """map / map_cut_k (`m_map.c`, `m_map_cut.c`): sum over relevant retrieved documents (in the top k)
    of precision at their rank, divided by R: AP = (1/R) * sum_i i / rank_i."""
    q, rank, pos = j.relevant()
    prec = pos / rank
    if k is not None:
        prec = np.where(rank <= k, prec, 0.0)
    return ratio(np.bincount(q, weights=prec, minlength=j.n), j.num_rel)


def ndcg(j: Judged, k: int | None = None) -> np.ndarray:
    """ndcg_cut_k (`m_ndcg_cut.c`; Järvelin & Kekäläinen 2002): DCG@k / ideal DCG@k, with
    DCG@k = sum over the top k of gain / log2(rank + 1), gain = the judgment when it is positive
    (trec_eval's default gains; zero and negative judgments add nothing), and the ideal ranking
    sorting every positive judgment of the question by decreasing gain. k None: the whole list."""
    q, rank, disc = _dcg_terms(j)
    ideal_q, ideal_rank, ideal = _ideal_terms(j)
    if k is not None:
        disc = np.where(rank <= k, disc, 0.0)
        ideal = np.where(ideal_rank <= k, ideal, 0.0)
    dcg = np.bincount(q, weights=disc, minlength=j.n)
    return ratio(dcg, np.bincount(ideal_q, weights=ideal, minlength=j.n))


def _dcg_terms(j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(question, rank, gain / log2(rank + 1)) of each retrieved document with a positive judgment."""
    gain_mask = j.rel > 0
    rank = j.rank[gain_mask]
    return j.q[gain_mask], rank, j.rel[gain_mask] / np.log2(rank + 1.0)


def _ideal_terms(j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(question, rank, gain / log2(rank + 1)) of each positive judgment in the ideal ranking."""
    return j.ideal_q, j.ideal_pos + 1, j.ideal_gain / np.log2(j.ideal_pos + 2.0)


def r_precision(j: Judged, k: int | None = None) -> np.ndarray:
    """Rprec (`m_Rprec.c`): |relevant in the top R| / R, R = number of relevant documents."""
    return ratio(j.count_at(j.num_rel), j.num_rel)


def bpref(j: Judged, k: int | None = None) -> np.ndarray:
    """bpref (`m_bpref.c`): the one kernel lives with trec_eval's measures; it needs the judged
    non-relevant documents located too (`all_judged`, see `needs_all_judged`)."""
    from goldeval.metrics.trec_measures import _bpref  # lazy: trec_measures imports this module

    return _bpref(j, ())[0]


def needs_all_judged(metrics: Sequence[Metric]) -> bool:
    """bpref counts judged non-relevant documents above each relevant one: locate every judgment."""
    return any(m.name == "bpref" for m in metrics)


_KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "hit": hit,
    "recall": recall,
    "precision": precision,
    "mrr": reciprocal_rank,
    "ndcg": ndcg,
    "map": average_precision,
    "rprec": r_precision,
    "bpref": bpref,
}


def compute(j: Judged, metrics: Sequence[Metric]) -> dict[Metric, np.ndarray]:
    """Every metric of `metrics` for every question of `j` (float64, aligned with its questions)."""
    out: dict[Metric, np.ndarray] = {}
    for metric in metrics:
        if metric not in out:
            out[metric] = _KERNELS[metric.name](j, metric.k)
    return out


def evaluate_ranked(
    qrels: QrelsDict,
    rankings: Mapping[str, Sequence[str]],
    metrics: Sequence[Metric],
    *,
    qids: Sequence[str] | None = None,
) -> dict[Metric, np.ndarray]:
    """Score lists already in rank order: one float64 array per metric, aligned with `qids`.

    `qids` defaults to the qrels' question ids in order. A question missing from `rankings`, or with
    no relevant document, scores 0; nothing is dropped.
    """
    return compute(judge_ranked(qrels, rankings, qids, all_judged=needs_all_judged(metrics)), metrics)


def evaluate_scores(
    qrels: QrelsDict,
    run: RunDict,
    metrics: Sequence[Metric],
    *,
    qids: Sequence[str] | None = None,
) -> dict[Metric, np.ndarray]:
    """Score a run of {question: {doc: score}}, ranked by score desc and ties by id desc (trec_eval).

    One float64 array per metric, aligned with `qids` (default: the qrels' question ids in order).
    A question missing from `run`, or with no relevant document, scores 0; nothing is dropped.
    """
    return compute(judge_scores(qrels, run, qids, all_judged=needs_all_judged(metrics)), metrics)


CURVES = {"hit": curve_kernels.HIT, "recall": curve_kernels.RECALL, "precision": curve_kernels.PRECISION,
          "ndcg": curve_kernels.NDCG}
"""The metrics `curve_means` draws at every k, and their code in `curve_kernels`."""
CURVE_CELLS = 1 << 20
"""(question, k) cells summed at once by `curve_means`: 8 MiB of float64 per array (small enough to be
reused from one block to the next rather than mapped afresh)."""


def question_means(rows: np.ndarray) -> np.ndarray:
    """The one mean over questions: each row of `rows` (one row per metric or per k, one column per question,
    in question order) averaged by numpy's pairwise sum over a contiguous row. Every mean a scorecard shows
    goes through here (`question_mean`), so the curve at k and the metric's own mean are the same number to
    the last bit, whichever path made them (a sum in another order differs in its last bits)."""
    return np.mean(np.ascontiguousarray(rows, dtype=np.float64), axis=1)


def question_mean(values: np.ndarray | Sequence[float]) -> float:
    """The mean of one metric's values over questions, by `question_means`' rule."""
    return float(question_means(np.asarray(values, dtype=np.float64)[None, :])[0])


def curve_means(j: Judged, names: Sequence[str], depth: int) -> dict[str, list[float]]:
    """The mean over the questions of each of `names` (`hit`, `recall`, `precision`, `ndcg`) at every k from 1
    to depth: the kernels' formulas above, on the counts and gains within the top k made for every k at once
    (a cumulative sum over the ranks, a block of questions at a time), where calling each kernel once per k
    passes over every question depth times (issue 23: 400 passes over 100k questions for a scorecard's
    curves). Each k's values are laid out as a row and averaged by `question_means`, so the curve at k is the
    kernel's mean at k, bit for bit (tested). When the process has numba loaded (the TREC reader loads it for
    a large run), `curve_kernels.curve_rows` makes each row instead, the same numbers (tested)."""
    if not j.n or depth < 1:
        return {}
    rel_q, rel_rank, _ = j.relevant()
    dcg_q, dcg_rank, disc = _dcg_terms(j)
    ideal_q, ideal_rank, ideal = _ideal_terms(j)
    kernel = jit.compiled(curve_kernels.curve_rows, nbytes=0)  # numba if the process has it loaded already
    ks = np.arange(1, depth + 1, dtype=np.float64)
    step = max(1, CURVE_CELLS // depth)
    rows = memory.empty((depth, j.n))  # one metric at a time: depth x questions float64 (80 MB at 100k), reused
    out: dict[str, list[float]] = {}
    for name in names:
        if kernel is not None:
            terms = (dcg_q, dcg_rank, disc) if name == "ndcg" else (rel_q, rel_rank, disc[:0])
            kernel(CURVES[name], *terms, ideal_q, ideal_rank, ideal, j.num_rel, rows)
            out[name] = question_means(rows).tolist()
            continue
        for a in range(0, j.n, step):
            b = min(a + step, j.n)
            if name == "ndcg":
                values = ratio(_within(dcg_q, dcg_rank, disc, a, b, depth), _within(ideal_q, ideal_rank, ideal, a, b, depth))
            else:
                count = _within(rel_q, rel_rank, None, a, b, depth)
                values = (_hit(count) if name == "hit" else ratio(count, j.num_rel[a:b, None]) if name == "recall"
                          else _precision(count, ks))
            rows[:, a:b] = values.T
        out[name] = question_means(rows).tolist()
    return out


def _within(q: np.ndarray, rank: np.ndarray, weights: np.ndarray | None, a: int, b: int, depth: int) -> np.ndarray:
    """For questions a..b-1 (`q` sorted) and k = 1..depth: the sum of `weights` (1 each when None) of their
    entries ranked within the top k, as a (b - a, depth) array."""
    lo, hi = np.searchsorted(q, [a, b])
    q, rank = q[lo:hi], rank[lo:hi]
    inside = rank <= depth
    cells = (q[inside] - a) * depth + (rank[inside] - 1)
    w = None if weights is None else weights[lo:hi][inside]
    return np.cumsum(np.bincount(cells, weights=w, minlength=depth * (b - a)).reshape(b - a, depth), axis=1)
