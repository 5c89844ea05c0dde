"""Ranks under the one ranking rule (`goldeval.ranking`), for many lists at once, with numpy.

The engine needs the rank of a few documents (the judged ones) in many scored lists. The rank of a
document with score s is 1 + the number of scores of its list above s + the number of documents tied
at s whose id sorts after its own (trec_eval's `comp_sim_docno`: score descending, ties by id
descending). `above_and_tied` counts the first two for every target at once: the lists are cut into
blocks of similar length, padded with -inf, sorted row by row (`np.sort`, no Python per list), and
each target is found in its sorted row by a vectorised binary search; when a block holds fewer
targets than a sort would cost (a couple per list), each target is compared with its row instead. Only the targets that share
their score with another document need ids compared; the caller does that with what it has (dicts
or TREC file bytes). Memory stays bounded by `BLOCK_CELLS` whatever the number of lists.
A caller that already holds its lists as one padded block (`padded`: the dict reader of
`goldeval.metrics.judge`, which lays out each chunk as it reads it) counts with `above_and_tied_padded`.
"""

from __future__ import annotations

import numpy as np

BLOCK_CELLS = 1 << 22
"""Padded cells (lists x longest list) sorted at once: 32 MiB of float64."""
COMPARE_CELLS = 1 << 16
"""Cells of the targets' rows gathered and compared at once: 512 KiB of float64, which stay in the CPU
caches (issue 23: 210k targets in lists of 100, 0.040 CPU s against 0.063 gathering BLOCK_CELLS at once)."""


def above_and_tied(
    scores: np.ndarray, starts: np.ndarray, lengths: np.ndarray, row: np.ndarray, score: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each target (list `row[i]`, score `score[i]`): how many scores of that list are greater than
    `score[i]`, and how many are equal to it (the target itself included).

    List r is `scores[starts[r] : starts[r] + lengths[r]]`. Targets need not be sorted.
    """
    above = np.zeros(len(row), dtype=np.int64)
    tied = np.zeros(len(row), dtype=np.int64)
    if not len(row):
        return above, tied
    # Lists of similar lengths together (little padding); when all are alike, keep them in place.
    by_length = np.arange(len(lengths)) if pads_little(lengths) else np.argsort(lengths, kind="stable")
    slot = np.empty_like(by_length)
    slot[by_length] = np.arange(len(by_length))
    target_slot = slot[row]
    order = np.argsort(target_slot, kind="stable")
    sorted_slots = target_slot[order]
    sorted_lengths = lengths[by_length]
    begin = 0
    while begin < len(by_length):
        end = _block_end(sorted_lengths, begin)
        lo, hi = np.searchsorted(sorted_slots, [begin, end])
        if hi > lo:
            lists, picked = by_length[begin:end], order[lo:hi]
            block = _block(scores, starts[lists], lengths[lists])
            above[picked], tied[picked] = above_and_tied_padded(block, lengths[lists], sorted_slots[lo:hi] - begin,
                                                                score[picked])  # fmt: skip
        begin = end
    return above, tied


def pads_little(lengths: np.ndarray) -> bool:
    """Whether the lists fit one padded block with little waste (at most a quarter more cells than
    scores, and a cell per list): then they keep their order, one list per row."""
    return int(lengths.max(initial=0)) * len(lengths) <= 1.25 * int(lengths.sum()) + len(lengths)


def padded(scores: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """Lists lying one after the other in `scores` (list r has `lengths[r]` scores) as the rows of a
    block `width` wide, each padded with -inf: a view of `scores` when every list is that long (the
    usual case: every question's top k), else a new array, the padding inserted after the few shorter."""
    short = np.flatnonzero(lengths < width)
    if len(short):
        scores = np.insert(scores, np.repeat(np.cumsum(lengths)[short], width - lengths[short]), -np.inf)
    return scores.reshape(len(lengths), width)


def above_and_tied_padded(
    block: np.ndarray, lengths: np.ndarray, row: np.ndarray, score: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`above_and_tied` on lists laid out as the rows of `block`, row r holding `lengths[r]` scores and
    -inf past them (`padded`). The block may be sorted in place. A NaN target gets counts that mean
    nothing. When the targets are few (a couple per list), each is compared with its row; otherwise the
    rows are sorted and each target found by binary search."""
    if len(row) < len(block) * block.shape[1].bit_length() // 2:  # few targets: compare, don't sort
        above, tied = _compare(block, row, score)
    else:
        block.sort(axis=1)
        left, right = _search(block, row, score)
        above, tied = block.shape[1] - right, right - left
    neg_inf = np.isneginf(score)  # -inf targets also tie with the padding
    if neg_inf.any():
        tied[neg_inf] -= block.shape[1] - lengths[row[neg_inf]]
    return above, tied


def _block_end(sorted_lengths: np.ndarray, begin: int) -> int:
    """End of the block of lists starting at `begin` (lists in length order) that fits in BLOCK_CELLS:
    the widest list of a block is its last, so the padded size grows with the end (binary search)."""

    def fits(end: int) -> bool:
        return (end - begin) * max(1, int(sorted_lengths[begin:end].max())) <= BLOCK_CELLS

    if (len(sorted_lengths) - begin) * int(sorted_lengths.max()) <= BLOCK_CELLS:
        return len(sorted_lengths)
    lo, hi = begin + 1, len(sorted_lengths)  # one list always makes a block, however long
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def _block(scores: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The lists as rows, padded with -inf to the longest one: a new array (it may be sorted)."""
    width = max(1, int(lengths.max(initial=0)))
    if len(starts) and np.array_equal(starts[1:], starts[:-1] + lengths[:-1]):  # one slice of `scores`
        block = padded(scores[int(starts[0]) : int(starts[-1] + lengths[-1])], lengths, width)
        return block.copy() if np.shares_memory(block, scores) else block
    cols = np.arange(width)
    index = np.minimum(starts[:, None] + cols, max(len(scores) - 1, 0))
    return np.where(cols < lengths[:, None], scores[index] if len(scores) else 0.0, -np.inf)


def _compare(block: np.ndarray, rows: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per target: scores of its row above and equal to its own, by comparing with the whole row."""
    above = np.empty(len(rows), dtype=np.int64)
    tied = np.empty(len(rows), dtype=np.int64)
    step = max(1, COMPARE_CELLS // block.shape[1])
    for begin in range(0, len(rows), step):
        part = slice(begin, begin + step)
        gathered, value = block[rows[part]], values[part, None]
        above[part] = np.count_nonzero(gathered > value, axis=1)
        tied[part] = np.count_nonzero(gathered == value, axis=1)
    return above, tied


def _search(block: np.ndarray, rows: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per target: positions in its sorted row of the first score >= value and the first > value."""
    width = block.shape[1]
    flat = block.ravel()
    base = rows * width
    out = []
    for right in (False, True):
        lo = np.zeros(len(rows), dtype=np.int64)
        hi = np.full(len(rows), width, dtype=np.int64)
        for _ in range(int(width).bit_length()):
            active = lo < hi
            mid = (lo + hi) >> 1
            probe = flat[base + np.minimum(mid, width - 1)]
            below = (probe <= values) if right else (probe < values)
            lo = np.where(active & below, mid + 1, lo)
            hi = np.where(active & ~below, mid, hi)
        out.append(lo)
    return out[0], out[1]
