"""The one ranking rule every metric, fusion and report uses.

trec_eval orders a topic's results by score descending, and breaks ties by document id descending
(`comp_sim_docno` in trec_eval's `form_res_rels.c`: `strcmp(docno2, docno1)`). Python's `str`
ordering equals `strcmp` on UTF-8 bytes, so sorting on `(-score, id)` reversed gives the same order.
MTEB had to fix a tie-break bug twice because it had two rules; we keep one, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain

import numpy as np


def ranked(scores: Mapping[str, float] | Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """Return (id, score) pairs in rank order: score descending, ties by id descending."""
    items = list(scores.items()) if isinstance(scores, Mapping) else list(scores)
    return sorted(items, key=_rank_key, reverse=True)


def _rank_key(item: tuple[str, float]) -> tuple[float, str]:
    return (item[1], item[0])


# Vectorised form of the same rule, for the metric engine: instead of sorting every row, count for
# each target document how many documents of its row come before it. Only the rows that contain a
# tie at a target's score go back to Python for the id comparison, so the common case (distinct
# scores) never touches a string.
_CHUNK_CELLS = 1 << 22
"""Padded cells (rows x longest row) compared at once; bounds memory to a few tens of MiB."""


def ranks_within(
    rows: Sequence[Mapping[str, float]],
    target_row: np.ndarray,
    target_id: Sequence[str],
    target_score: np.ndarray,
) -> np.ndarray:
    """1-based rank of each target document inside its row, by the ranking rule above.

    Target `i` is the document `target_id[i]` with score `target_score[i]` in `rows[target_row[i]]`.
    Its rank is 1 + the number of documents of that row with a higher score, or with the same score
    and a greater id (`ranked()`'s order, trec_eval's `comp_sim_docno`).
    """
    n_targets = len(target_id)
    ranks = np.zeros(n_targets, dtype=np.int64)
    if n_targets == 0:
        return ranks
    lens = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    total = int(lens.sum())
    scores = np.fromiter(chain.from_iterable(row.values() for row in rows), dtype=np.float64, count=total)
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    # Rows sorted by length, so each chunk pads to nearly its own width.
    order = np.argsort(lens, kind="stable")
    slot = np.empty_like(order)
    slot[order] = np.arange(len(order))
    by_slot = np.argsort(slot[target_row], kind="stable")
    target_slot = slot[target_row][by_slot]
    begin = 0
    while begin < len(order):
        end = min(len(order), begin + max(1, _CHUNK_CELLS // max(1, int(lens[order[begin]]))))
        width = int(lens[order[end - 1]])
        if (end - begin) * width > _CHUNK_CELLS:  # longer rows at the end of this chunk: shrink it
            end = begin + max(1, _CHUNK_CELLS // max(1, width))
            width = int(lens[order[end - 1]])
        chunk_rows = order[begin:end]
        lo, hi = np.searchsorted(target_slot, [begin, end])
        if hi > lo:
            cols = np.arange(width)
            inside = cols < lens[chunk_rows][:, None]
            index = np.minimum(starts[chunk_rows][:, None] + cols, len(scores) - 1)
            padded = np.where(inside, scores[index], -np.inf)
            step = max(1, _CHUNK_CELLS // max(1, width))
            for sub in range(lo, hi, step):  # bound the gathered block, however many targets a row has
                picked = by_slot[sub : min(hi, sub + step)]
                gathered = padded[target_slot[sub : min(hi, sub + step)] - begin]
                score = target_score[picked][:, None]
                ranks[picked] = (gathered > score).sum(axis=1) + 1
                tied = (gathered == score).sum(axis=1) > 1
                for t in picked[tied]:
                    ranks[t] += _ties_above(rows[target_row[t]], target_id[t], float(target_score[t]))
        begin = end
    return ranks


def _ties_above(row: Mapping[str, float], doc: str, score: float) -> int:
    """Documents with exactly `score` whose id sorts after `doc` (they rank first: ties by id desc)."""
    return sum(1 for other, s in row.items() if s == score and other > doc)
