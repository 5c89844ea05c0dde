"""The numba twin of `compute.curve_means`' per-k values: every question's metric at every k from 1 to depth.

Plain Python over numpy arrays, compiled by `goldeval.jit` when the process already has numba loaded (never
called uncompiled: `compute.curve_means` makes the rows in numpy instead). numpy makes the values a block of questions at
a time, with a (question, k) cell array summed by `bincount`, a cumulative sum along k and a division, each
a pass over the block's depth x questions cells (issue 23: the largest part of a scorecard's extras at 100k
questions); compiled, a block's cells are summed and divided while they are in the CPU caches.

The same numbers bit for bit (tested against the numpy path): each cell is 0.0 plus the one weight ranked
there (a question ranks a document once), the running sum adds the cells in k order as `np.cumsum` does, and
each value is the same one division (hit: count > 0; recall: count / relevant, 0 without a relevant;
precision: count / k; ndcg: dcg / ideal dcg, 0 where the ideal is 0).
"""

from __future__ import annotations

import numpy as np

HIT, RECALL, PRECISION, NDCG = 0, 1, 2, 3
"""Which metric `curve_rows` fills (`compute.CURVES` names them)."""
BLOCK = 256
"""Questions summed at a time: their depth x BLOCK cells stay in the CPU caches."""


def curve_rows(kind: int, q: np.ndarray, rank: np.ndarray, weight: np.ndarray, ideal_q: np.ndarray,
               ideal_rank: np.ndarray, ideal_weight: np.ndarray, num_rel: np.ndarray, rows: np.ndarray) -> None:  # fmt: skip
    """Fill `rows` (depth x questions) with metric `kind` of each question at k = 1..depth. (q, rank) are the
    relevant retrieved documents (sorted by q), with `weight` their dcg terms (read only for NDCG); the ideal
    arrays are the ideal ranking's dcg terms (NDCG only); num_rel is each question's relevant count."""
    depth, n = rows.shape
    cells = np.zeros((depth, BLOCK))  # the block's weight at each (k, question), then its running sum
    ideal = np.zeros((depth, BLOCK))
    p = 0
    ip = 0
    for a in range(0, n, BLOCK):
        b = min(a + BLOCK, n)
        cells[:] = 0.0
        while p < len(q) and q[p] < b:
            if rank[p] <= depth:
                cells[rank[p] - 1, q[p] - a] += weight[p] if kind == NDCG else 1.0
            p += 1
        if kind == NDCG:
            ideal[:] = 0.0
            while ip < len(ideal_q) and ideal_q[ip] < b:
                if ideal_rank[ip] <= depth:
                    ideal[ideal_rank[ip] - 1, ideal_q[ip] - a] += ideal_weight[ip]
                ip += 1
        for k in range(depth):
            for i in range(b - a):
                if k:
                    cells[k, i] += cells[k - 1, i]
                    ideal[k, i] += ideal[k - 1, i]
                total = cells[k, i]
                if kind == HIT:
                    value = 1.0 if total > 0 else 0.0
                elif kind == RECALL:
                    value = total / num_rel[a + i] if num_rel[a + i] > 0 else 0.0
                elif kind == PRECISION:
                    value = total / (k + 1.0)
                else:
                    value = total / ideal[k, i] if ideal[k, i] > 0 else 0.0
                rows[k, a + i] = value
