"""trec_eval's judging straight from TREC files read as columns (`goldeval.trecio`): no dict, no
Python string per result line.

Steps, all vectorised over the run's rows:
1. topic codes of both files mapped onto the evaluated topics (sorted ids, as trec_eval prints them);
2. each run row looked up among the qrels rows of its topic: a hash table of the qrels' doc hashes
   with one region per topic, so the look-ups of a topic's rows stay in a few cache lines; every
   hit is then checked byte for byte (a hash is only a shortcut);
3. the rank of each judged row: `goldeval.metrics.ranks` counts the scores above it in its topic;
   rows tied at its score are compared by doc id bytes, descending (trec_eval's `comp_sim_docno`);
4. `compute.assemble` builds the same `Judged` the dict path builds, so every measure is shared.
Steps 2 and 3 run compiled by numba when the reader loaded it for large files (`trec_kernels`: each
row looked up once, each judged row compared with its topic's scores), with the same results.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from goldeval import jit
from goldeval.metrics import trec_kernels
from goldeval.metrics.judge import Judged, assemble
from goldeval.metrics.ranks import above_and_tied
from goldeval.trecio import TrecTable

PAIR_BLOCK = 1 << 22
"""(target, tied row) pairs compared at once when scores tie."""
CHUNK_ROWS = 1 << 20
"""Run rows looked up at once."""
COMPARE_PER_ROW = 32
"""Comparisons per run row up to which ranks are counted by comparing each judged row with its whole
topic (numba); past that (many judged documents in long topics), by numpy's sorted blocks."""


def judge_tables(qrels: TrecTable, run: TrecTable, topics: Sequence[str], *, level: int) -> Judged:
    """Every judged document of `topics` located in the run (trec_eval's view: negative judgments too)."""
    n = len(topics)
    index = {t: i for i, t in enumerate(topics)}
    q_of_qrels = np.array([index.get(t, -1) for t in qrels.topics], dtype=np.int64)[qrels.topic]
    q_of_code = np.array([index.get(t, n) for t in run.topics], dtype=np.int64)  # n: not evaluated
    judged = np.flatnonzero(q_of_qrels >= 0)
    owner, values = q_of_qrels[judged], qrels.value[judged].astype(np.float64)
    hits, match = join_rows(qrels, judged, owner, run, q_of_code, n)
    per_code = np.bincount(run.topic, minlength=len(run.topics))
    num_ret = np.bincount(q_of_code, weights=per_code, minlength=n + 1)[:n].astype(np.int64)
    ranks = _ranks(run, hits, per_code)
    q_hits = q_of_code[run.topic[hits]]
    return assemble(n, level, num_ret, owner, values, q_hits, ranks, qrels.value[match].astype(np.float64))


# --- the join ---------------------------------------------------------------------------------------


def join_rows(qrels: TrecTable, judged: np.ndarray, owner: np.ndarray, run: TrecTable, q_of_code: np.ndarray,
              n: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The run rows whose (topic, doc) the qrels judge, in file order, and the qrels row judging each;
    by numba when installed. Every match is then checked byte for byte (a hash is only a shortcut).
    The qrels rows `judged` belong to topics `owner` (< n); a run row's topic is `q_of_code[run.topic[row]]`
    (n: not evaluated). A (topic, doc) pair must be once in each table (both readers refuse a repeat), and
    a topic of the run must be one of the qrels' once. `goldeval eval` joins its run and golden set here too
    (`goldeval.scorecard.placing`)."""
    join = jit.compiled(trec_kernels.hash_join, nbytes=0)  # numba if the reader loaded it
    if join is not None:
        hits, match = join(owner, qrels.doc_hash[judged], judged, n, q_of_code, run.topic, run.doc_hash)
    else:
        match = _probe(qrels, judged, owner, run, q_of_code[run.topic], n)
        hits = np.flatnonzero(match >= 0)
        match = match[hits]
    for begin in range(0, len(hits), CHUNK_ROWS // 16):  # hits are in file order: a slice of the file each
        part = slice(begin, begin + CHUNK_ROWS // 16)
        if not run.same_docs(hits[part], qrels, match[part]).all():  # pragma: no cover - a 64-bit hash collision
            raise RuntimeError("doc id hash collision between the run and the qrels; please report it")
        run.drop_pages()  # the hits are spread over the whole file: do not keep it all resident
    return hits, match


def _probe(qrels: TrecTable, judged: np.ndarray, owner: np.ndarray, run: TrecTable, q_of_run: np.ndarray,
           n: int) -> np.ndarray:  # fmt: skip
    """The hash join in numpy: for each run row, the qrels row judging it or -1. A table with one region
    per topic (load <= 1/2), probed by every run row at once, round after round. Topic n (the run's topics that are not evaluated) gets an empty region,
    so every row is looked up without filtering."""
    counts = np.bincount(owner, minlength=n + 1)
    size = np.left_shift(1, np.ceil(np.log2(np.maximum(2 * counts, 1))).astype(np.int64))  # load <= 1/2
    mask, region = (size - 1).astype(np.uint64), np.cumsum(size) - size
    table_row = np.full(int(size.sum()), -1, dtype=np.int64)
    table_key = np.zeros(len(table_row), dtype=np.uint64)
    _insert(table_row, table_key, region, mask, owner, qrels.doc_hash[judged], judged)
    match = np.full(len(run), -1, dtype=np.int64)
    for begin in range(0, len(run), CHUNK_ROWS):  # in chunks: bounded temporaries
        rows = np.arange(begin, min(begin + CHUNK_ROWS, len(run)))
        q, keys = q_of_run[rows], run.doc_hash[rows]  # the doc hash is the key within a topic's region
        slot = region[q] + (keys & mask[q]).astype(np.int64)
        while len(rows):
            stored = table_row[slot]
            occupied = stored >= 0
            same = occupied & (table_key[slot] == keys)
            match[rows[same]] = stored[same]
            more = np.flatnonzero(occupied & ~same)  # an occupied slot with another key: probe the next one
            rows, q, keys, slot = rows[more], q[more], keys[more], slot[more]
            slot = region[q] + ((slot - region[q] + 1) & mask[q].astype(np.int64))
    return match


def _insert(table_row: np.ndarray, table_key: np.ndarray, region: np.ndarray, mask: np.ndarray,
            owner: np.ndarray, keys: np.ndarray, rows: np.ndarray) -> None:  # fmt: skip
    """Open addressing with linear probing inside each topic's region, all keys at once per round."""
    pending = np.arange(len(rows))
    slot = region[owner] + (keys & mask[owner]).astype(np.int64)
    while len(pending):
        free = table_row[slot[pending]] < 0
        candidates = pending[free]
        _, first = np.unique(slot[candidates], return_index=True)  # one winner per free slot
        winners = candidates[first]
        table_row[slot[winners]] = rows[winners]
        table_key[slot[winners]] = keys[winners]
        placed = np.zeros(len(rows), dtype=bool)
        placed[winners] = True
        pending = pending[~placed[pending]]
        q = owner[pending]
        slot[pending] = region[q] + ((slot[pending] - region[q] + 1) & mask[q].astype(np.int64))


# --- ranks ------------------------------------------------------------------------------------------


def _ranks(run: TrecTable, targets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """1-based rank of each target row within its run topic (`lengths`: rows per topic code): score
    descending, ties by doc id descending."""
    if not len(targets):
        return np.zeros(0, dtype=np.int64)
    topic = run.topic
    grouped = bool(np.all(topic[1:] >= topic[:-1]))  # each topic's rows together, in code order
    order = None if grouped else np.argsort(topic, kind="stable")
    starts = np.cumsum(lengths) - lengths
    scores = run.value if order is None else run.value[order]
    above, tied = _above_and_tied(scores, starts, lengths, topic[targets], run.value[targets])
    ranks = above + 1
    tied_targets = np.flatnonzero(tied > 1)
    if len(tied_targets):
        ranks[tied_targets] += _ids_above(run, order, starts, lengths, targets[tied_targets])
    return ranks


def _above_and_tied(scores: np.ndarray, starts: np.ndarray, lengths: np.ndarray, row: np.ndarray,
                    score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`ranks.above_and_tied`, by numba comparing each target with its whole topic when that costs at
    most COMPARE_PER_ROW comparisons per run row (a few judged documents per topic), else by numpy."""
    count = jit.compiled(trec_kernels.above_and_tied, nbytes=0)  # numba if the reader loaded it
    if count is not None and int(lengths[row].sum()) <= COMPARE_PER_ROW * max(len(scores), 1 << 16):
        return count(scores, starts, lengths, row, score)  # type: ignore[no-any-return]
    return above_and_tied(scores, starts, lengths, row, score)


def _ids_above(run: TrecTable, order: np.ndarray | None, starts: np.ndarray, lengths: np.ndarray,
               targets: np.ndarray) -> np.ndarray:  # fmt: skip
    """For each target: rows of its topic with the same score and a greater doc id (bytes, as strcmp)."""
    out = np.zeros(len(targets), dtype=np.int64)
    topic = run.topic[targets]
    span = lengths[topic]
    ends = np.cumsum(span)
    begin = 0
    while begin < len(targets):  # pairs in blocks: bounded memory when many scores tie
        end = max(begin + 1, int(np.searchsorted(ends, ends[begin] - span[begin] + PAIR_BLOCK, side="right")))
        part = np.arange(begin, min(end, len(targets)))
        pair_target = np.repeat(part, span[part])
        offset = np.arange(len(pair_target)) - np.repeat(np.cumsum(span[part]) - span[part], span[part])
        other = starts[topic[pair_target]] + offset
        other = other if order is None else order[other]
        same = (run.value[other] == run.value[targets[pair_target]]) & (other != targets[pair_target])
        pair_target, other = pair_target[same], other[same]
        if len(other):
            out += np.bincount(pair_target[_greater(run, other, targets[pair_target])], minlength=len(targets))
        begin = int(part[-1]) + 1
    return out


def _greater(run: TrecTable, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether doc id a > doc id b, byte by byte (strcmp; a prefix sorts first)."""
    width = int(max((run.doc_stop[a] - run.doc_start[a]).max(), (run.doc_stop[b] - run.doc_start[b]).max()))
    x, y = run.doc_bytes(a, width), run.doc_bytes(b, width)
    differ = x != y
    first = differ.argmax(axis=1)
    rows = np.arange(len(a))
    return differ.any(axis=1) & (x[rows, first] > y[rows, first])
