"""The vectorised metric engine: every metric, every question, several cut-offs in one pass.

How it works. All our metrics depend only on *where the relevant documents landed*: the rank of
each retrieved relevant document, its graded judgment, the number of relevant documents R and the
number retrieved. So instead of ranking every list, the engine looks up each question's judged
documents in its results (a handful of dict look-ups), asks `goldeval.ranking.ranks_within` for their
ranks under the one ranking rule (score desc, ties by id desc, trec_eval's rule), and keeps flat
arrays sorted by (question, rank). Each metric is then a few numpy operations over those arrays
(`np.bincount` per question), with no per-question numpy call and no JIT.

Semantics equal trec_eval 10.0 (`m_*.c` in usnistgov/trec_eval) and are tested against its test
vectors and against pytrec_eval:
- relevant means judgment >= 1; judgments <= 0 are non-relevant; negative ones are "unjudged".
- a document repeated in a ranked list counts at its first rank only; later copies are non-relevant.
- a question with no relevant document, or no results, scores 0 on every metric. The caller
  decides which questions are off-topic and leaves them out of averages (never averaged as zeros).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from goldeval.errors import InputError
from goldeval.metrics.definitions import Metric
from goldeval.ranking import ranks_within
from goldeval.types import Qrels, RunDict

RELEVANCE_LEVEL = 1
"""trec_eval's default `-l`: the smallest judgment that counts as relevant."""


@dataclass(frozen=True)
class Judged:
    """Where the judged documents landed, for `n` questions, as flat arrays.

    `q`, `rank`, `rel` describe the judged documents that were retrieved, sorted by (question,
    rank): question index, 1-based rank, judgment. `ideal_q`/`ideal_gain`/`ideal_pos` list every
    positive judgment of each question by decreasing gain (the ideal ranking of nDCG) with its
    0-based position. `num_nonrel` counts judged non-relevant documents (0 <= judgment < level),
    retrieved or not (bpref's N).
    """

    n: int
    level: int
    num_ret: np.ndarray
    num_rel: np.ndarray
    num_nonrel: np.ndarray
    q: np.ndarray
    rank: np.ndarray
    rel: np.ndarray
    ideal_q: np.ndarray
    ideal_gain: np.ndarray
    ideal_pos: np.ndarray

    def relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(question, rank, j) of each retrieved relevant document; j is 1 for a question's first."""
        return self._relevant

    @cached_property
    def _relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keep = self.rel >= self.level
        q, rank = self.q[keep], self.rank[keep]
        return q, rank, _position_in_group(q, self.n) + 1

    def count_at(self, k: np.ndarray | int) -> np.ndarray:
        """Relevant documents in the top k, per question (k may be one value per question)."""
        q, rank, _ = self.relevant()
        cut = k if np.isscalar(k) else np.asarray(k)[q]
        return np.bincount(q[rank <= cut], minlength=self.n)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small lists: its full passes over large runs cost more
    than the work itself. Restored on exit, so no global setting leaks."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _questions(qrels: Qrels, qids: Sequence[str] | None) -> Iterable[tuple[str, Mapping[str, int] | None]]:
    """(question id, its judgments) in `qids` order, or the qrels' own order without a lookup each."""
    return qrels.items() if qids is None else ((q, qrels.get(q)) for q in qids)


def judge_scores(
    qrels: Qrels,
    run: RunDict,
    qids: Sequence[str] | None = None,
    *,
    level: int = RELEVANCE_LEVEL,
    all_judged: bool = False,
) -> Judged:
    """Locate the judged documents of each question in a run of scores (ranked by `goldeval.ranking`).

    Questions are `qids` (default: the qrels' ids, in order). With `all_judged`, every judged
    document is located, non-relevant and negative ("unjudged") ones too (bpref, relstring and
    other trec measures need them); otherwise only documents with a positive judgment.
    """
    floor = -math.inf if all_judged else min(level, 1)
    judgments = _Judgments()
    rows: list[Mapping[str, float]] = []
    row_q: list[int] = []
    t_row: list[int] = []
    t_id: list[str] = []
    t_score: list[float] = []
    t_rel: list[int] = []
    num_ret: list[int] = []
    with gc_paused():
        for i, (qid, judged) in enumerate(_questions(qrels, qids)):
            judgments.add(judged)
            docs = run.get(qid)
            num_ret.append(len(docs) if docs else 0)
            if not docs or not judged:
                continue
            # Flat lists, no tuple per hit: surviving tuples would cost a GC pass over them later.
            hits = [d for d, r in judged.items() if r >= floor and d in docs]
            if hits:
                t_row.extend([len(rows)] * len(hits))
                rows.append(docs)
                row_q.append(i)
                t_id.extend(hits)
                t_score.extend(map(docs.__getitem__, hits))
                t_rel.extend(map(judged.__getitem__, hits))
        scores = np.asarray(t_score, dtype=np.float64)
        if np.isnan(scores).any():
            bad = int(np.flatnonzero(np.isnan(scores))[0])
            qid = (list(qrels) if qids is None else qids)[row_q[t_row[bad]]]
            raise InputError(
                f"question {qid!r}: document {t_id[bad]!r} has score NaN",
                value=t_id[bad],
                hint="give every result a real number as its score",
            )
        target_row = np.asarray(t_row, dtype=np.int64)
        ranks = ranks_within(rows, target_row, t_id, scores)
    t_q = np.asarray(row_q, dtype=np.int64)[target_row]
    return judgments.assemble(level, num_ret, t_q, ranks, t_rel)


def judge_ranked(
    qrels: Qrels,
    rankings: Mapping[str, Sequence[str]],
    qids: Sequence[str] | None = None,
    *,
    level: int = RELEVANCE_LEVEL,
    all_judged: bool = False,
) -> Judged:
    """Locate the judged documents of each question in lists already in rank order.

    A repeated id counts at its first position only (`list.index`); later copies are non-relevant
    but still take up a rank, as in the list the user saw.
    """
    floor = -math.inf if all_judged else min(level, 1)
    judgments = _Judgments()
    t_q: list[int] = []
    t_rank: list[int] = []
    t_rel: list[int] = []
    num_ret: list[int] = []
    with gc_paused():
        for i, (qid, judged) in enumerate(_questions(qrels, qids)):
            judgments.add(judged)
            ranking = rankings.get(qid) or ()
            num_ret.append(len(ranking))
            if not ranking or not judged:
                continue
            ids = ranking if isinstance(ranking, list) else list(ranking)
            if len(judged) > 8:  # many judgments: one position map beats a list scan per judgment
                first = dict(zip(reversed(ids), range(len(ids), 0, -1), strict=True))  # first occurrence wins
                for d, r in judged.items():
                    if r >= floor and d in first:
                        t_q.append(i)
                        t_rank.append(first[d])
                        t_rel.append(r)
                continue
            for d, r in judged.items():
                if r >= floor and d in ids:
                    t_q.append(i)
                    t_rank.append(ids.index(d) + 1)
                    t_rel.append(r)
    return judgments.assemble(level, num_ret, t_q, np.asarray(t_rank, dtype=np.int64), t_rel)


class _Judgments:
    """Every judgment value, question by question, gathered with `list.extend` (no Python per value);
    R, N and the ideal gains then come from numpy."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.lens: list[int] = []

    def add(self, judged: Mapping[str, int] | None) -> None:
        if judged:
            self.values.extend(judged.values())
            self.lens.append(len(judged))
        else:
            self.lens.append(0)

    def assemble(
        self,
        level: int,
        num_ret: list[int],
        t_q: Sequence[int] | np.ndarray,
        ranks: np.ndarray,
        t_rel: Sequence[float],
    ) -> Judged:
        n = len(self.lens)
        values = np.asarray(self.values, dtype=np.float64)
        owner = np.repeat(np.arange(n, dtype=np.int64), np.asarray(self.lens, dtype=np.int64))
        positive = values > 0
        ideal_q, ideal_gain = owner[positive], values[positive]
        ideal_order = np.lexsort((-ideal_gain, ideal_q))  # by question, then decreasing gain
        ideal_q, ideal_gain = ideal_q[ideal_order], ideal_gain[ideal_order]
        q = np.asarray(t_q, dtype=np.int64)
        order = np.lexsort((ranks, q))
        return Judged(
            n=n,
            level=level,
            num_ret=np.asarray(num_ret, dtype=np.int64),
            num_rel=np.bincount(owner[values >= level], minlength=n),
            num_nonrel=np.bincount(owner[(values >= 0) & (values < level)], minlength=n),
            q=q[order],
            rank=ranks[order],
            rel=np.asarray(t_rel, dtype=np.float64)[order],
            ideal_q=ideal_q,
            ideal_gain=ideal_gain,
            ideal_pos=_position_in_group(ideal_q, n),
        )


def _position_in_group(q: np.ndarray, n: int) -> np.ndarray:
    """0-based position of each element within its run of equal (sorted) question indices."""
    starts = np.searchsorted(q, np.arange(n))
    return np.arange(len(q)) - starts[q] if len(q) else np.zeros(0, dtype=np.int64)


def ratio(num: np.ndarray, den: np.ndarray | float) -> np.ndarray:
    """num / den, and 0 where den is 0 (trec_eval leaves such values at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


# --- the metrics (each: Judged, cut-off -> one float per question) ------------------------------


def hit(j: Judged, k: int) -> np.ndarray:
    """success_k (trec_eval `m_success.c`): 1 if a relevant document is in the top k, else 0."""
    return (j.count_at(k) > 0).astype(np.float64)


def recall(j: Judged, k: int) -> np.ndarray:
    """recall_k (`m_recall.c`): |relevant in top k| / R; 0 when R = 0."""
    return ratio(j.count_at(k), j.num_rel)


def precision(j: Judged, k: int) -> np.ndarray:
    """P_k (`m_P.c`): |relevant in top k| / k, k even when fewer than k were retrieved."""
    return j.count_at(k) / float(k)


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
    gain_mask = j.rel > 0
    q, rank, gain = j.q[gain_mask], j.rank[gain_mask], j.rel[gain_mask]
    disc = gain / np.log2(rank + 1.0)
    if k is not None:
        disc = np.where(rank <= k, disc, 0.0)
    ideal = j.ideal_gain / np.log2(j.ideal_pos + 2.0)
    if k is not None:
        ideal = np.where(j.ideal_pos < k, ideal, 0.0)
    dcg = np.bincount(q, weights=disc, minlength=j.n)
    return ratio(dcg, np.bincount(j.ideal_q, weights=ideal, minlength=j.n))


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
    qrels: Qrels,
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
    qrels: Qrels,
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
