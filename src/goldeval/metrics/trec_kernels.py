"""numba twins of `trec_judge`'s numpy loops: the hash join and the counts above and tied.

Plain Python over numpy arrays, compiled by `goldeval.jit` when numba is installed (never called
uncompiled: the numpy code in `trec_judge` runs instead). numpy has to run these loops as rounds over
every pending row (probe, compare, keep the misses); compiled, each row is looked up once, in file
order, so a topic's small region of the table stays in the CPU caches while its rows go by.
Both compute the same values as their numpy twins (tested): a lookup finds the one qrels row with the
row's topic and doc hash (a file's repeated pairs are refused before), and counts are counts.
"""

from __future__ import annotations

import numpy as np


def hash_join(owner: np.ndarray, keys: np.ndarray, rows: np.ndarray, n: int, q_of_code: np.ndarray,
              run_topic: np.ndarray, run_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The run rows judged in the qrels, and the qrels row judging each: (hits, their qrels rows).
    A run row's topic is q_of_code[run_topic[row]] (n: not evaluated), its doc hash run_keys[row].
    The qrels rows `rows` (topic `owner` < n, doc hash `keys`) go to one region per topic, a power of
    two at least twice their number (open addressing, linear probing); topic n has an empty region.
    A qrels row judges one run row at most (repeated pairs are refused), so hits <= len(rows)."""
    counts = np.zeros(n + 1, dtype=np.int64)
    for q in owner:
        counts[q] += 1
    region, mask = np.empty(n + 1, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
    total = 0
    for q in range(n + 1):
        size = 1
        while size < 2 * counts[q]:
            size *= 2
        region[q], mask[q] = total, size - 1
        total += size
    table_row, table_key = np.full(total, -1, dtype=np.int64), np.zeros(total, dtype=np.uint64)
    for i in range(len(owner)):
        q = owner[i]
        slot = np.int64(keys[i] & np.uint64(mask[q]))
        while table_row[region[q] + slot] >= 0:
            slot = (slot + 1) & mask[q]
        table_row[region[q] + slot], table_key[region[q] + slot] = rows[i], keys[i]
    hits, matched = np.empty(len(rows), dtype=np.int64), np.empty(len(rows), dtype=np.int64)
    found = 0
    for r in range(len(run_topic)):
        q = q_of_code[run_topic[r]]
        slot = np.int64(run_keys[r] & np.uint64(mask[q]))
        while table_row[region[q] + slot] >= 0:
            if table_key[region[q] + slot] == run_keys[r] and found < len(hits):
                hits[found], matched[found] = r, table_row[region[q] + slot]
                found += 1
                break
            slot = (slot + 1) & mask[q]
    return hits[:found], matched[:found]


def above_and_tied(scores: np.ndarray, starts: np.ndarray, lengths: np.ndarray, row: np.ndarray,
                   score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`metrics.ranks.above_and_tied` by comparing each target with every score of its list: for
    target i, how many scores of list row[i] are greater than score[i], and how many equal it.
    Costs the targets' list lengths summed: the caller uses it when that is small (few judged
    documents per topic), and numpy's sorted-blocks search otherwise."""
    above, tied = np.zeros(len(row), dtype=np.int64), np.zeros(len(row), dtype=np.int64)
    for i in range(len(row)):
        s, begin = score[i], starts[row[i]]
        a, t = 0, 0
        for j in range(begin, begin + lengths[row[i]]):
            a += scores[j] > s
            t += scores[j] == s
        above[i], tied[i] = a, t
    return above, tied
