"""trec_eval's measures, vectorised: one kernel per measure over the engine's `Judged` arrays.

Each `TrecMeasure` names a trec_eval measure (`measures.c` order), its default parameters and the
function that computes one value per topic. `goldeval.metrics.trec` parses `-m`, evaluates and prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from goldeval.errors import InputError
from goldeval.metrics import compute as engine
from goldeval.metrics.compute import Judged

MIN_GEO_MEAN = 0.00001
"""trec_eval's floor for a topic's AP before taking logs in gm_map (`trec_eval.h`)."""

Params = tuple[float, ...]
Calc = Callable[[Judged, Params], list[np.ndarray]]

_CUTS: Params = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_POINTS: Params = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


# --- the measures ---------------------------------------------------------------------------------


def _num_rel_ret(j: Judged) -> np.ndarray:
    return np.bincount(j.q[j.rel >= j.level], minlength=j.n)


def _iprec(j: Judged, points: Params) -> list[np.ndarray]:
    """iprec_at_recall (`m_iprec_at_recall.c`): interpolated precision max_{rank >= r_c} P(rank) at the
    c-th relevant document, c = lround(point * R); 0 when fewer than c relevant were retrieved."""
    q, rank, pos = j.relevant()
    prec = pos / rank
    best = _suffix_max(q, prec, j.n)  # best precision at or after each relevant document
    rel_ret = _num_rel_ret(j)
    starts = np.searchsorted(q, np.arange(j.n))
    out = []
    for point in points:
        cut = np.floor(point * j.num_rel + 0.5).astype(np.int64)  # C's lround for point >= 0
        at = np.maximum(cut, 1)
        ok = (cut <= rel_ret) & (rel_ret > 0)
        value = np.zeros(j.n)
        value[ok] = best[starts[ok] + at[ok] - 1]
        out.append(value)
    return out


def _suffix_max(q: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Max of `values` from each element to the end of its question's group (groups sorted by q).

    Exact: values are replaced by their dense rank, keyed by group in int64 so that one
    `np.maximum.accumulate` over the reversed arrays never crosses a group boundary."""
    if len(values) == 0:
        return values
    uniq, dense = np.unique(values, return_inverse=True)
    width = len(uniq)
    key = (n - q[::-1]).astype(np.int64) * width + dense[::-1]
    best = np.maximum.accumulate(key) - (n - q[::-1]).astype(np.int64) * width
    return uniq[best[::-1]]


def _bpref(j: Judged, _: Params) -> list[np.ndarray]:
    """bpref (`m_bpref.c`; Buckley & Voorhees, SIGIR 2004): (1/R) * sum over retrieved relevant r of
    1 - min(n_r, R) / min(N, R), n_r = judged non-relevant retrieved above r, N = all judged
    non-relevant; a relevant document with no judged non-relevant above it adds 1."""
    nonrel = (j.rel >= 0) & (j.rel < j.level)
    starts = np.searchsorted(j.q, np.arange(j.n))
    seen: np.ndarray = np.cumsum(nonrel) - nonrel  # judged non-relevant strictly above, counted from the start
    before_group = np.concatenate(([0], np.cumsum(nonrel)))[starts]
    above = (seen - before_group[j.q]).astype(np.float64)
    relevant = j.rel >= j.level
    q, above = j.q[relevant], above[relevant]
    r = j.num_rel[q].astype(np.float64)
    denom = np.minimum(j.num_nonrel[q], j.num_rel[q]).astype(np.float64)
    term = np.where(above > 0, 1.0 - np.minimum(above, r) / np.where(denom > 0, denom, 1.0), 1.0)
    return [engine.ratio(np.bincount(q, weights=term, minlength=j.n), j.num_rel)]


def _precision_at(j: Judged, cut: np.ndarray) -> np.ndarray:
    """|relevant in the top cut| / cut per question, 0 where cut is 0."""
    return engine.ratio(j.count_at(cut), cut)


def _rprec_mult(j: Judged, mults: Params) -> list[np.ndarray]:
    """Rprec_mult (`m_Rprec_mult.c`): precision at rank (long)(mult * R + 0.9)."""
    return [_precision_at(j, np.floor(m * j.num_rel + 0.9).astype(np.int64)) for m in mults]


def _relative_p(j: Judged, cuts: Params) -> list[np.ndarray]:
    """relative_P (`m_rel_P.c`): |relevant in the top k| / min(k, R)."""
    return [engine.ratio(j.count_at(int(k)), np.minimum(int(k), j.num_rel)) for k in cuts]


def _set_measures(j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rel_ret = _num_rel_ret(j).astype(np.float64)
    return rel_ret, j.num_ret.astype(np.float64), j.num_rel.astype(np.float64)


def _set_f(j: Judged, params: Params) -> list[np.ndarray]:
    """set_F (`m_set_F.c`): (beta + 1) P R / (beta P + R) over the whole retrieved set; beta = 1."""
    beta = params[0]
    rel_ret, ret, rel = _set_measures(j)
    p, r = engine.ratio(rel_ret, ret), engine.ratio(rel_ret, rel)
    return [engine.ratio((beta + 1.0) * p * r, beta * p + r)]


def _utility(j: Judged, p: Params) -> list[np.ndarray]:
    """utility (`m_utility.c`): p1 * rel_ret + p2 * nonrel_ret + p3 * rel_not_ret (+ p4 * the rest of
    a collection of unknown size, taken as 0 as trec_eval does without -N); defaults 1, -1, 0, 0."""
    if len(p) != 4:
        raise InputError("utility takes 4 coefficients", value=p, hint="like -m utility.1,-1,0,0")
    rel_ret, ret, rel = _set_measures(j)
    return [p[0] * rel_ret + p[1] * (ret - rel_ret) + p[2] * (rel - rel_ret) + p[3] * (rel_ret - ret - rel)]


def _relstring(j: Judged, p: Params) -> list[np.ndarray]:
    """relstring (`m_relstring.c`): the judgments of the first N (10) results as characters: the digit
    for 0-9, '>' above 9, '.' for a negative ("unjudged") judgment, '-' for a document not judged."""
    width = int(p[0])
    chars = np.full((j.n, max(width, 1)), ord("-"), dtype=np.uint8)
    top = j.rank <= width
    rel = j.rel[top]
    codes = np.where(rel > 9, ord(">"), np.where(rel >= 0, ord("0") + np.clip(rel, 0, 9), ord(".")))
    chars[j.q[top], j.rank[top] - 1] = codes.astype(np.uint8)
    lengths = np.minimum(j.num_ret, width)
    return [np.array([row[:n].tobytes().decode() for row, n in zip(chars, lengths, strict=True)], dtype=object)]


INFAP_EPSILON = 0.00001
"""trec_eval's smoothing constant in infAP (`trec_eval.h`)."""
RBP_PERSISTENCE = 0.9
"""trec_eval's default persistence p of rank-biased precision (`m_rbp.c`)."""


def _before(j: Judged, mask: np.ndarray) -> np.ndarray:
    """For each located document, how many documents of `mask` rank above it in its question."""
    starts = np.searchsorted(j.q, np.arange(j.n))
    counts = np.cumsum(mask)
    before_group = np.concatenate(([0], counts))[starts]
    return (counts - mask - before_group[j.q]).astype(np.float64)


def _infap(j: Judged, _: Params) -> list[np.ndarray]:
    """infAP (`m_infap.c`; Yilmaz & Aslam, CIKM 2006): AP estimated from a judged sample of the pool.
    At the relevant document at 0-based position i with r relevant, n non-relevant and u unjudged
    (negative judgment) documents above it: 1 if i = 0, else
    1/(i+1) + i/(i+1) * (r+n+u)/i * (r+eps)/(r+n+2 eps); summed, divided by R."""
    relevant = j.rel >= j.level
    r = _before(j, relevant)[relevant]
    n = _before(j, (j.rel >= 0) & ~relevant)[relevant]
    u = _before(j, j.rel < 0)[relevant]
    i = (j.rank[relevant] - 1).astype(np.float64)
    safe_i = np.where(i > 0, i, 1.0)
    later = 1 / (i + 1) + (i / (i + 1)) * ((r + n + u) / safe_i) * ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON))
    term = np.where(i == 0, 1.0, later)
    return [engine.ratio(np.bincount(j.q[relevant], weights=term, minlength=j.n), j.num_rel)]


def _bin_g(j: Judged, _: Params) -> list[np.ndarray]:
    """binG (`m_binG.c`): (1/R) * sum over retrieved relevant documents of 1 / log2(2 + non-relevant
    documents ranked above it)."""
    q, rank, pos = j.relevant()
    return [engine.ratio(np.bincount(q, weights=1 / np.log2(2.0 + rank - pos), minlength=j.n), j.num_rel)]


def _judged_at(j: Judged, k: int) -> np.ndarray:
    """Retrieved documents in the top k with a judgment >= 0, per question."""
    return np.bincount(j.q[(j.rank <= k) & (j.rel >= 0)], minlength=j.n)


def _unjudged(j: Judged, cuts: Params) -> list[np.ndarray]:
    """unj_k (`m_unjudged.c`): share of the top k that is unjudged (not in the qrels, or negative)."""
    return [(np.minimum(j.num_ret, int(k)) - _judged_at(j, int(k))) / float(k) for k in cuts]


def _rbp(j: Judged, _: Params) -> list[np.ndarray]:
    """rbp (`m_rbp.c`; Moffat & Zobel, TOIS 2008): (1 - p) * sum of gain * p^(rank-1), p = 0.9, gains
    the judgments scaled into [0, 1] by the question's largest judgment when it exceeds 1."""
    first = j.ideal_pos == 0
    top = np.ones(j.n)
    top[j.ideal_q[first]] = np.maximum(j.ideal_gain[first], 1.0)
    keep = j.rel > 0
    weight = (j.rel[keep] / top[j.q[keep]]) * RBP_PERSISTENCE ** (j.rank[keep] - 1.0)
    return [(1 - RBP_PERSISTENCE) * np.bincount(j.q[keep], weights=weight, minlength=j.n)]


def _rbp_resid(j: Judged, _: Params) -> list[np.ndarray]:
    """rbp_resid (`m_rbp_resid.c`): the most RBP could still grow if every unjudged document retrieved
    were relevant: p^num_ret + (1 - p) * sum over unjudged of p^(rank-1); 0 when none is unjudged."""
    p = RBP_PERSISTENCE
    judged = j.rel >= 0
    judged_mass = np.bincount(j.q[judged], weights=p ** (j.rank[judged] - 1.0), minlength=j.n)
    unjudged_mass = (1 - p ** j.num_ret) / (1 - p) - judged_mass
    any_unjudged = j.num_ret - np.bincount(j.q[judged], minlength=j.n) > 0
    return [np.where(any_unjudged, p**j.num_ret + (1 - p) * unjudged_mass, 0.0)]


# --- trec_eval's experimental gain measures (G, ndcg_rel, Rndcg): default gains = the judgment ----


@dataclass(frozen=True)
class _Gains:
    """Per-question cumulative sums over the ideal ranking and over the retrieved documents with a
    positive gain, so a value "at rank k" is one index away."""

    j: Judged
    ideal_count: np.ndarray  # P: positive judgments per question
    ideal_start: np.ndarray

    @classmethod
    def of(cls, j: Judged) -> _Gains:
        return cls(j, np.bincount(j.ideal_q, minlength=j.n), np.searchsorted(j.ideal_q, np.arange(j.n)))

    def ideal_at(self, weights: np.ndarray, q: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Sum of `weights` (one per ideal position) over a question's first min(k, P) ideal positions."""
        if len(weights) == 0:
            return np.zeros(len(q))
        cum = _group_cumsum(self.j.ideal_q, weights, self.ideal_start)
        kk = np.minimum(k, self.ideal_count[q])
        return np.where(kk > 0, cum[np.maximum(self.ideal_start[q] + kk - 1, 0)], 0.0)

    def hits(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keep = self.j.rel > 0
        return self.j.q[keep], self.j.rank[keep], self.j.rel[keep]


def _group_cumsum(q: np.ndarray, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Inclusive running sum of `values` within each question's (contiguous, sorted) group."""
    cum = np.cumsum(values)
    return cum - np.concatenate(([0.0], cum))[starts][q]


def _ndcg_rel(j: Judged, _: Params) -> list[np.ndarray]:
    """ndcg_rel (`m_ndcg_rel.c`): nDCG averaged over the P positively judged documents: at each
    retrieved one, DCG so far / ideal DCG at min(rank, P); each one not retrieved adds the final DCG
    / the full ideal DCG."""
    g = _Gains.of(j)
    q, rank, gain = g.hits()
    disc = gain / np.log2(rank + 1.0)
    dcg_so_far = _group_cumsum(q, disc, np.searchsorted(q, np.arange(j.n)))
    ideal_disc = j.ideal_gain / np.log2(j.ideal_pos + 2.0)
    at_hit = dcg_so_far / g.ideal_at(ideal_disc, q, rank)
    topics = np.arange(j.n)
    full_ideal = g.ideal_at(ideal_disc, topics, g.ideal_count)
    missing = g.ideal_count - np.bincount(q, minlength=j.n)
    total = np.bincount(q, weights=at_hit, minlength=j.n)
    total += missing * engine.ratio(np.bincount(q, weights=disc, minlength=j.n), full_ideal)
    return [np.where(total > 0, engine.ratio(total, g.ideal_count), 0.0)]


def _rndcg(j: Judged, _: Params) -> list[np.ndarray]:
    """Rndcg (`m_Rndcg.c`): nDCG averaged at the R levels, the ranks where the ideal gain drops
    (after the documents of each positive judgment level), plus the whole list when more than P + 1
    documents were retrieved."""
    g = _Gains.of(j)
    q, rank, gain = g.hits()
    disc = gain / np.log2(rank + 1.0)
    ideal_disc = j.ideal_gain / np.log2(j.ideal_pos + 2.0)
    ends = np.r_[j.ideal_q[1:] != j.ideal_q[:-1], True] if len(j.ideal_q) else np.zeros(0, bool)
    drop = ends | np.r_[j.ideal_gain[1:] != j.ideal_gain[:-1], True][: len(ends)]
    bq, bk = j.ideal_q[drop], j.ideal_pos[drop] + 1
    width = int(max(rank.max(initial=0), bk.max(initial=0))) + 1
    cum = np.concatenate(([0.0], np.cumsum(disc)))
    key = q * width + rank
    dcg_at = lambda t, k: cum[np.searchsorted(key, t * width + k, side="right")] - cum[np.searchsorted(key, t * width)]  # noqa: E731
    points = np.bincount(bq, weights=dcg_at(bq, bk) / g.ideal_at(ideal_disc, bq, bk), minlength=j.n)
    count = np.bincount(bq, minlength=j.n).astype(np.float64)
    topics = np.arange(j.n)
    tail = (j.num_ret > g.ideal_count + 1) & (g.ideal_count > 0)
    full = engine.ratio(np.bincount(q, weights=disc, minlength=j.n), g.ideal_at(ideal_disc, topics, g.ideal_count))
    points += np.where(tail, full, 0.0)
    count += tail
    return [np.where(j.num_rel > 0, engine.ratio(points, count), 0.0)]


def _g(j: Judged, _: Params) -> list[np.ndarray]:
    """G (`m_G.c`): sum over retrieved documents of gain / log2(2 + cost so far - gain so far), cost
    being the ideal gain at each rank (at least 1, and 1 past the ideal list), over the total gain."""
    g = _Gains.of(j)
    q, rank, gain = g.hits()
    so_far = _group_cumsum(q, gain, np.searchsorted(q, np.arange(j.n)))
    cost = g.ideal_at(np.maximum(j.ideal_gain, 1.0), q, rank) + np.maximum(rank - g.ideal_count[q], 0)
    terms = gain / np.log2(2.0 + cost - so_far)
    topics = np.arange(j.n)
    return [engine.ratio(np.bincount(q, weights=terms, minlength=j.n), g.ideal_at(j.ideal_gain, topics, g.ideal_count))]


def _gm_bpref(j: Judged, p: Params) -> list[np.ndarray]:
    return [np.log(np.maximum(_bpref(j, p)[0], MIN_GEO_MEAN))]


def _cuts(kernel: Callable[[Judged, int], np.ndarray]) -> Calc:
    return lambda j, cuts: [kernel(j, int(k)) for k in cuts]


def _single(kernel: Callable[[Judged], np.ndarray]) -> Calc:
    return lambda j, _: [kernel(j)]


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: its name, default parameters and how to compute and print it."""

    name: str
    calc: Calc
    params: Params | None = None
    """Default cut-offs (P, ndcg_cut, ...) or recall points; None for a measure without them."""
    integer_params: bool = True
    value: str = "float"
    """`float` (printed %6.4f), `long` (printed %ld, summed over topics), `gm` (geometric mean, summary
    only), `string` (relstring: per topic only)."""
    single_value: bool = False
    """Parameters feed one value (11pt_avg, set_F) instead of one value per parameter."""

    def names(self, params: Params | None, explicit: bool) -> list[str]:
        if params is None:
            return [self.name]
        if self.single_value:
            return [f"{self.name}_{','.join(_fmt_param(p) for p in params)}" if explicit else self.name]
        if self.integer_params:
            return [f"{self.name}_{int(p)}" for p in params]
        return [f"{self.name}_{p:3.2f}" for p in params]


def _fmt_param(p: float) -> str:
    return str(int(p)) if float(p).is_integer() else repr(p)


def _ap(j: Judged) -> np.ndarray:
    return engine.average_precision(j)


def _gm_log(j: Judged) -> np.ndarray:
    return np.log(np.maximum(engine.average_precision(j), MIN_GEO_MEAN))


def _11pt(j: Judged, points: Params) -> list[np.ndarray]:
    return [np.mean(_iprec(j, points), axis=0)]


MEASURES: dict[str, TrecMeasure] = {
    m.name: m
    for m in [
        TrecMeasure("num_ret", _single(lambda j: j.num_ret.astype(np.float64)), value="long"),
        TrecMeasure("num_rel", _single(lambda j: j.num_rel.astype(np.float64)), value="long"),
        TrecMeasure("num_rel_ret", _single(lambda j: _num_rel_ret(j).astype(np.float64)), value="long"),
        TrecMeasure("map", _single(_ap)),
        TrecMeasure("gm_map", _single(_gm_log), value="gm"),
        TrecMeasure("Rprec", _single(engine.r_precision)),
        TrecMeasure("bpref", _bpref),
        TrecMeasure("recip_rank", _single(engine.reciprocal_rank)),
        TrecMeasure("iprec_at_recall", _iprec, _RECALL_POINTS, integer_params=False),
        TrecMeasure("P", _cuts(engine.precision), _CUTS),
        TrecMeasure("relstring", _relstring, (10.0,), integer_params=False, value="string", single_value=True),
        TrecMeasure("recall", _cuts(engine.recall), _CUTS),
        TrecMeasure("infAP", _infap),
        TrecMeasure("gm_bpref", _gm_bpref, value="gm"),
        TrecMeasure("Rprec_mult", _rprec_mult, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), integer_params=False),
        TrecMeasure("utility", _utility, (1.0, -1.0, 0.0, 0.0), integer_params=False, single_value=True),
        TrecMeasure("11pt_avg", _11pt, _RECALL_POINTS, integer_params=False, single_value=True),
        TrecMeasure("binG", _bin_g),
        TrecMeasure("G", _g),
        TrecMeasure("ndcg", _single(engine.ndcg)),
        TrecMeasure("ndcg_rel", _ndcg_rel),
        TrecMeasure("Rndcg", _rndcg),
        TrecMeasure("ndcg_cut", _cuts(engine.ndcg), _CUTS),
        TrecMeasure("map_cut", _cuts(engine.average_precision), _CUTS),
        TrecMeasure("relative_P", _relative_p, _CUTS),
        TrecMeasure("success", _cuts(engine.hit), (1, 5, 10)),
        TrecMeasure("set_P", _single(lambda j: engine.ratio(*_set_measures(j)[:2]))),
        TrecMeasure("set_relative_P", _single(lambda j: _set_rel_p(*_set_measures(j)))),
        TrecMeasure("set_recall", _single(lambda j: engine.ratio(*_set_measures(j)[::2]))),
        TrecMeasure("set_map", _single(lambda j: _set_map(*_set_measures(j)))),
        TrecMeasure("set_F", _set_f, (1.0,), integer_params=False, single_value=True),
        TrecMeasure(
            "num_nonrel_judged_ret",
            _single(lambda j: np.bincount(j.q[(j.rel >= 0) & (j.rel < j.level)], minlength=j.n).astype(float)),
            value="long",
        ),
        TrecMeasure("rbp", _rbp),
        TrecMeasure("rbp_resid", _rbp_resid),
        TrecMeasure("unj", _unjudged, (5, 10, 20)),
    ]
}
"""The trec_eval measures goldeval computes, in trec_eval's print order (`measures.c`)."""


def _set_rel_p(rel_ret: np.ndarray, ret: np.ndarray, rel: np.ndarray) -> np.ndarray:
    return engine.ratio(rel_ret, np.minimum(ret, rel))


def _set_map(rel_ret: np.ndarray, ret: np.ndarray, rel: np.ndarray) -> np.ndarray:
    return engine.ratio(rel_ret * rel_ret, ret * rel)
