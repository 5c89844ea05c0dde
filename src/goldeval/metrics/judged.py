"""How much of what a retriever returned anyone has judged, and what the unjudged could change.

A golden set lists the answers someone knew of; a retriever may return a passage that also answers and
that nobody looked at. It then scores as a miss, and a conclusion may rest on what nobody judged.
Two numbers make that visible (the TREC pooling literature's "judged@k" and best/worst-case bounds,
e.g. Sakai, "Alternatives to bpref", SIGIR 2007; Buckley & Voorhees, SIGIR 2004):

- judged@k: the share of a retriever's top k that carries a judgment (relevant or not), averaged over
  the answerable questions. A list shorter than k counts what was returned; an empty list is fully
  judged (nothing unjudged can change it).
- the range of each metric: its mean if every unjudged passage in the top k were relevant (grade 1)
  and if every one were not. k is the metric's own cut-off, or the pool depth (the scorecard's largest
  k) for metrics without one (MRR, MAP, R-precision). A range is shown only where it brackets the
  metric: bpref gets none (`has_range`), since it skips unjudged passages by definition, so completing
  the judgments either way is another bpref, not a bound on this one (issue 18: a "range" of 0.796 to
  0.933 beside a bpref of 0.944).

Both come from the one metric engine (`goldeval.metrics.compute`) on the rankings the
evaluation scored: a range is the engine run on the same lists with completed judgments, never a
second formula.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from goldeval.arrays import distinct_values
from goldeval.metrics.compute import compute
from goldeval.metrics.definitions import Metric
from goldeval.metrics.judge import Located, locate_ranked

Grades = Mapping[str, Mapping[str, int]]
"""Question id -> judged id -> grade (relevant and judged not relevant; absent means unjudged)."""


def is_placeholder(key: str) -> bool:
    """A ranking key the evaluation puts for a repeated document (`\\x00repeat:N`): it never counts
    as relevant, so it is settled, as a judged passage is."""
    return key.startswith("\x00")


def judged_curve(
    grades: Grades, rankings: Mapping[str, Sequence[str]], qids: Sequence[str], depth: int,
    *, settled: Callable[[str], bool] = is_placeholder,
) -> list[float]:
    """judged@k for k = 1..depth: mean over `qids` of the judged share of each top k."""
    if not qids or depth < 1:
        return []
    lengths, t_q, t_rank = [], [], []
    for row, qid in enumerate(qids):
        known = grades.get(qid, {})
        top = list(rankings.get(qid, ()))[:depth]
        lengths.append(len(top))
        for rank, key in enumerate(top, start=1):
            if key in known or settled(key):
                t_q.append(row)
                t_rank.append(rank)
    return judged_share(len(qids), np.asarray(lengths, dtype=np.int64), np.asarray(t_q, dtype=np.int64),
                        np.asarray(t_rank, dtype=np.int64), depth)


def judged_share(n: int, lengths: np.ndarray, q: np.ndarray, rank: np.ndarray, depth: int) -> list[float]:
    """judged@k for k = 1..depth over n questions, question i having returned `lengths[i]` results, of which
    the one at (question `q[j]`, 1-based rank `rank[j]`) is judged or settled: the mean over the questions of
    the judged share of each top k (a top k shorter than k counts what was returned; an empty one is 1).

    Summed from the judged results rather than a question x rank table (issue 23: at 100k questions x 100
    the table and its running sums were 320 MB and 0.2 s): a judged result at rank r of a question that
    returned L adds 1/k to every k from r to L and 1/L to every k past L; a question that returned nothing
    adds 1 everywhere."""
    if not n or depth < 1:
        return []
    near = rank <= depth
    key = distinct_values(q[near] * (depth + 1) + rank[near])  # a place counts once
    q, rank = key // (depth + 1), key % (depth + 1)
    size = np.asarray(lengths, dtype=np.int64)[q]
    inside = rank <= size  # adds 1/k from rank to min(L, depth)
    over_k = np.bincount(rank[inside], minlength=depth + 2) - np.bincount(
        np.minimum(size[inside], depth) + 1, minlength=depth + 2)
    past = size < depth  # adds 1/L past L
    over_size = np.bincount(np.maximum(rank[past], size[past] + 1), weights=1.0 / np.maximum(size[past], 1),
                            minlength=depth + 2)
    over_size[1] += int(np.count_nonzero(np.asarray(lengths) == 0))
    k = np.arange(1, depth + 1)
    share = (np.cumsum(over_k)[1 : depth + 1] / k + np.cumsum(over_size)[1 : depth + 1]) / n
    return [round(float(v), 6) for v in share]


NO_RANGE = frozenset({"bpref"})
"""Metrics given no range: the judged-only measures (bpref, Buckley & Voorhees, SIGIR 2004)."""


def has_range(metric: Metric) -> bool:
    """Whether `metric` gets a best/worst-case range: every metric that reads an unjudged passage as not
    relevant (its value is then the low end), none that skips unjudged passages."""
    return metric.name not in NO_RANGE


def metric_ranges(
    grades: Grades, rankings: Mapping[str, Sequence[str]], qids: Sequence[str], metrics: Sequence[Metric],
    pool_depth: int, *, settled: Callable[[str], bool] = is_placeholder,
) -> dict[Metric, tuple[float, float]]:
    """Metric -> (low, high): its mean over `qids` with every unjudged passage of the top k judged
    not relevant, and judged relevant (grade 1); low <= high whichever scenario gives which. Metrics
    without a range (`has_range`) are left out.

    The engine runs on the rankings with the judgments so completed: the lists are searched once
    (`locate_ranked`) and each completion adds its judgments where the unjudged ids stand
    (`Located.adding`), as judging the completed qrels from scratch would place them (issue 23: six
    searches of every list cost more than the rest of the scoring)."""
    if not qids:
        return {}
    deepest = range_depth(metrics, pool_depth)
    if deepest is None:
        return {}
    located = locate_ranked({q: grades.get(q, {}) for q in qids}, rankings, qids)  # no bpref here: all_judged off
    q, rank = _unjudged(grades, rankings, qids, deepest, settled)
    return ranges_from(located, q, rank, metrics, pool_depth)


def _by_cut(metrics: Sequence[Metric], pool_depth: int) -> dict[int, list[Metric]]:
    """The metrics that get a range (`has_range`), by the cut-off their range completes: their own k, or
    the pool depth for a metric without one."""
    by_cut: dict[int, list[Metric]] = {}
    for m in (m for m in dict.fromkeys(metrics) if has_range(m)):
        by_cut.setdefault(m.k if m.k is not None else pool_depth, []).append(m)
    return by_cut


def range_depth(metrics: Sequence[Metric], pool_depth: int) -> int | None:
    """The deepest rank a range completes judgments to (None: no metric gets a range)."""
    return max(_by_cut(metrics, pool_depth), default=None)


RANGE_BLOCK = 1 << 14
"""Questions whose completed judgments are scored at once (`ranges_from`): the completions of 100k
questions x 10 results held at once were 170 MB (issue 23)."""


def ranges_from(located: Located, q: np.ndarray, rank: np.ndarray, metrics: Sequence[Metric],
                pool_depth: int, *, low: Mapping[Metric, np.ndarray] | None = None) -> dict[Metric, tuple[float, float]]:  # fmt: skip
    """`metric_ranges` from the lists' judged keys already located (`located`, relevant ones, as
    `locate_ranked` finds them) and the (question, first rank) of each unjudged, unsettled key down to
    `range_depth`: each completion adds its judgments where those keys stand (`Located.adding`), a block
    of questions at a time (the means are the blocks' sums over all the questions).

    `low`: each metric's values on the same questions in order, as scored already, when the caller has them.
    A metric with a range reads an unjudged passage as not relevant (`has_range`), so the completion with
    every unjudged passage judged not relevant gives exactly these values: they are summed instead of made
    again (half the work: 0.1 CPU s at 100k questions, issue 23)."""
    groups = _by_cut(metrics, pool_depth)
    sums = {m: [0.0, 0.0] for group in groups.values() for m in group}
    located, order = _by_question(located), np.argsort(q, kind="stable")
    q, rank = q[order], rank[order]
    for a in range(0, located.n, RANGE_BLOCK):
        b = min(a + RANGE_BLOCK, located.n)
        part, (lo, hi) = _block(located, a, b), np.searchsorted(q, [a, b])
        part_q, part_rank = q[lo:hi] - a, rank[lo:hi]
        for cut, group in groups.items():
            pick = part_rank <= cut
            for scenario, grade in enumerate((0, 1)):
                if grade == 0 and low is not None:
                    for m in group:
                        sums[m][0] += float(low[m][a:b].sum())
                    continue
                values = compute(part.adding(part_q[pick], part_rank[pick], grade), group)
                for m in group:
                    sums[m][scenario] += float(values[m].sum())
    out = {}
    for m, (not_relevant, relevant) in sums.items():
        x, y = not_relevant / located.n, relevant / located.n
        out[m] = (round(min(x, y), 6), round(max(x, y), 6))
    return {m: out[m] for m in metrics if m in out}


def _by_question(located: Located) -> Located:
    """`located` with its judgments and located keys in question order (so a block of questions is a slice)."""
    owner, found = np.argsort(located.owner, kind="stable"), np.argsort(located.t_q, kind="stable")
    return Located(located.n, located.level, located.floor, located.num_ret, located.owner[owner],
                   located.values[owner], located.t_q[found], located.t_rank[found], located.t_rel[found])


def _block(located: Located, a: int, b: int) -> Located:
    """The questions a..b-1 of `located` (in question order, `_by_question`), numbered from 0."""
    i, j = np.searchsorted(located.owner, [a, b])
    k, m = np.searchsorted(located.t_q, [a, b])
    return Located(b - a, located.level, located.floor, located.num_ret[a:b], located.owner[i:j] - a,
                   located.values[i:j], located.t_q[k:m] - a, located.t_rank[k:m], located.t_rel[k:m])


def _unjudged(grades: Grades, rankings: Mapping[str, Sequence[str]], qids: Sequence[str], cut: int,
              settled: Callable[[str], bool]) -> tuple[np.ndarray, np.ndarray]:
    """(question index, 1-based rank) of the first place of each unjudged, unsettled id in each top `cut`."""
    t_q: list[int] = []
    t_rank: list[int] = []
    for i, qid in enumerate(qids):
        known = grades.get(qid, {})
        seen: set[str] = set()
        for position, key in enumerate(list(rankings.get(qid, ()))[:cut], start=1):
            if key not in known and key not in seen and not settled(key):
                seen.add(key)
                t_q.append(i)
                t_rank.append(position)
    return np.asarray(t_q, dtype=np.int64), np.asarray(t_rank, dtype=np.int64)
