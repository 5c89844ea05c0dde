"""BM25 indexing and search, bm25s' eager index without its per-passage loops, and without scoring
every passage for every question.

The index is bm25s' (Lù 2024): each term's precomputed BM25 contribution per passage (a CSC matrix:
`indptr` over the vocabulary, `indices`/`data` the passages and their scores), built here with numpy
over all passages at once, the same float32 values bit for bit (`Postings.build`). A question's score for a passage is the
sum over its terms, in float32 and in the question's term order, as bm25s adds them. bm25s' numpy
backend then `argpartition`s all N passages for every question, and its numba backend pushes all N
through a heap; here only the passages that share a term with the question are tried (for a question
with common terms, only those at or above a floor the k-th best score cannot be under), the top k
is kept in a heap of k, and numpy sorts each question's k at the end, so a question costs its postings
plus, at most, one vectorised pass over N.

The top k follows the one ranking rule (`goldeval.ranking`): score descending, ties by passage id
descending (`id_rank` is each passage's position in sorted id order), so cutting at k never splits
ties differently from the evaluation.

Two implementations of the same loop, tested equal:
- numba (extra `fast`): compiled once per machine and cached in the user cache (`goldeval.jit`:
  `~/.cache/goldeval/numba/`, whatever the workspace), so a second process, in any folder, loads it
  instead of compiling (numba's own cache would write next to the installed package, often read-only);
- numpy (core install): the same sums with `np.add.at` in term order, then a partition of the
  touched passages only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from goldeval import jit
from goldeval.arrays import distinct_values


@dataclass(frozen=True)
class Postings:
    """A BM25 index as arrays (CSC: term -> passages and their score), plus the passages' rank in id
    order (for ties) and its inverse."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    id_rank: np.ndarray
    by_rank: np.ndarray
    """The passages in id order: `by_rank[id_rank[d]] == d`."""

    @property
    def nbytes(self) -> int:
        arrays = (self.data, self.indices, self.indptr, self.id_rank, self.by_rank)
        return int(sum(a.nbytes for a in arrays))

    @classmethod
    def build(cls, tokens: list[list[int]], n_terms: int, ids: list[str], k1: float, b: float) -> Postings:
        """The index bm25s builds (Lucene's BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), term weight
        idf * tf / (k1 * (1 - b + b * |d| / avgdl) + tf)), with the same float32 values bit for bit:
        the same operations in the same order and precision, over all passages at once instead of a
        Python loop per passage (`bm25s.scoring._build_scores_and_indices_for_matrix`)."""
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        terms = np.fromiter(chain.from_iterable(tokens), dtype=np.int64, count=int(lengths.sum()))
        n_docs = len(tokens)
        pairs, tf = np.unique(terms * max(n_docs, 1) + np.repeat(np.arange(n_docs), lengths), return_counts=True)
        term, doc = np.divmod(pairs, max(n_docs, 1))  # sorted by term, then passage: CSC order
        df = np.bincount(term, minlength=n_terms)
        idf = np.zeros(n_terms, dtype=np.float32)
        for value in distinct_values(df[df > 0]).tolist():  # math.log, as bm25s, once per distinct df
            idf[df == value] = math.log(1 + (n_docs - value + 0.5) / (value + 0.5))
        avg = np.array(lengths).mean() if n_docs else 1.0  # bm25s: np.array([len(d) for d in docs]).mean()
        tf64 = tf.astype(np.float32).astype(np.float64)
        weight = tf64 / (k1 * ((1 - b) + b * lengths[doc] / avg) + tf64)
        data = (idf[term].astype(np.float64) * weight).astype(np.float32)
        indptr = np.concatenate(([0], np.cumsum(df)))
        by_rank = np.array(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.int32)
        id_rank = np.empty(len(ids), dtype=np.int32)
        id_rank[by_rank] = np.arange(len(ids), dtype=np.int32)
        return cls(data, doc.astype(np.int32), indptr.astype(np.int64), id_rank, by_rank)


def top_k(postings: Postings, queries: list[list[int]], k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each query (term ids), its k best passages: (passage index, score, how many) per query,
    best first. Uses numba when installed, else numpy; the results are the same."""
    lengths = np.fromiter(map(len, queries), dtype=np.int64, count=len(queries))
    token_ids = np.fromiter(chain.from_iterable(queries), dtype=np.int64, count=int(lengths.sum()))
    known = (token_ids >= 0) & (token_ids < len(postings.indptr) - 1)  # a term the index lacks: dropped
    if not known.all():
        lengths = np.bincount(np.repeat(np.arange(len(queries)), lengths)[known], minlength=len(queries))
        token_ids = token_ids[known]
    token_ptr = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    docs = np.zeros((len(queries), k), dtype=np.int32)
    scores = np.zeros((len(queries), k), dtype=np.float32)
    counts = np.zeros(len(queries), dtype=np.int64)
    if k <= 0 or not len(queries):
        return docs, scores, counts
    kernel = compiled()
    if kernel is None:
        _top_k_numpy(postings, token_ptr, token_ids, k, docs, scores, counts)
        return docs, scores, counts
    keys = np.zeros((len(queries), k), dtype=np.int64)  # 0: no passage (a kept key is >= 1 << 32)
    kernel(postings.data, postings.indices, postings.indptr, postings.id_rank, token_ptr, token_ids, k, keys, counts)
    keys.sort(axis=1)  # numpy's vectorised sort: ~0.1 ms per 1,000 queries of 100, the heap's pops took ~3
    keys = keys[:, ::-1]  # best first: score bits, then id rank, descending (the one ranking rule)
    docs[...] = np.where(keys > 0, postings.by_rank[keys & 0xFFFFFFFF], 0)
    scores.view(np.int32)[...] = keys >> 32
    return docs, scores, counts


# --- numpy --------------------------------------------------------------------------------------------


def _top_k_numpy(p: Postings, token_ptr: np.ndarray, token_ids: np.ndarray, k: int, docs: np.ndarray,
                 scores: np.ndarray, counts: np.ndarray) -> None:  # fmt: skip
    acc = np.zeros(len(p.id_rank), dtype=np.float32)
    for q in range(len(token_ptr) - 1):
        terms = token_ids[token_ptr[q] : token_ptr[q + 1]]
        if not len(terms):
            continue
        for term in terms.tolist():  # term by term, float32: the sums bm25s makes, bit for bit
            np.add.at(acc, p.indices[p.indptr[term] : p.indptr[term + 1]], p.data[p.indptr[term] : p.indptr[term + 1]])
        touched = distinct_values(np.concatenate([p.indices[p.indptr[t] : p.indptr[t + 1]] for t in terms.tolist()]))
        best, value = touched, acc[touched]
        best, value = best[value > 0], value[value > 0]  # as the numba kernel: a score of 0 is no match
        if len(best) > k:  # keep everything tied with the k-th score, then order exactly
            keep = value >= np.partition(value, len(value) - k)[len(value) - k]
            best, value = best[keep], value[keep]
        order = np.lexsort((p.id_rank[best], value))[::-1][:k]
        n = len(order)
        docs[q, :n], scores[q, :n], counts[q] = best[order], value[order], n
        acc[touched] = 0.0


# --- numba, compiled once per machine and cached in the user cache (goldeval.jit) -------------------


_KERNELS: dict[str, Any] = {}
"""The kernel per user-cache folder (None: numpy), as `goldeval.jit` compiled it; a test swaps one to
force numpy."""


def compiled() -> Any:
    """The numba kernel, its compiled code cached in the user cache's `numba/`; None without numba."""
    key = str(jit.cache_folder())
    if key not in _KERNELS:  # a race only computes the same value twice: jit.compiled is locked
        _KERNELS[key] = jit.compiled(_top_k_loop)
    return _KERNELS[key]


BLOCK = 64
"""Scores per block in a common-term query's scan: a fixed-length count that numba vectorises."""
FLOOR_STEPS = 10
"""Halvings of the floor's interval: within 0.1% of the seed's k-th best score, for about the cost
of one pass over its passages (np.partition, exact, cost ~8 ms more per 1,000 bench queries)."""


def _top_k_loop(data, indices, indptr, id_rank, token_ptr, token_ids, k, keys, counts):  # type: ignore[no-untyped-def]  # noqa: ANN001
    """The numba kernel: per query, add up its terms' postings, then try the candidates in a heap of
    the k best whose root is the worst kept, and write the heap out as it is: `top_k` sorts each query's
    k keys with numpy (a vectorised sort; the heap's pops, one sift each, cost a quarter of a query here,
    in branches the CPU cannot predict; issue 23). The heap is 4-ary: a node's children side by side, the
    smallest picked without a branch, half the levels of a binary heap (~15% less time per query).
    Term weights are > 0, so a score of 0 means "no term in common" (never returned). Candidates are
    tried only at or above a bar: a floor no top-k score is under, at most the k-th best score among the
    passages of the query's rarest term with at least k postings (k passages score that much, so the k
    best do too), then the heap's root once k are kept (a score under it cannot enter). A query with few
    postings lists the passages it touches; one with many (common terms) scans every score as bm25s
    does, but in blocks of `BLOCK` with a vectorised count of the scores at or above the bar, most blocks
    skipped after that count and reset to 0 in the same pass; the others are copied out without a branch
    (written, then counted if at or above the bar). Both bars keep ties (>=): the id rank decides at the
    root. bm25s pushes every score through its heap.
    A heap entry is one int64 key: the score's float32 bits (a score >= 0 orders as its bits) above
    its id rank, so the one ranking rule is one integer comparison, and a bar is compared as bits."""
    n_docs = id_rank.shape[0]
    acc = np.zeros(n_docs, dtype=np.float32)
    touched = np.empty(n_docs, dtype=np.int32)
    values = np.empty(n_docs, dtype=np.float32)
    floor_as_array = np.empty(1, dtype=np.float32)
    acc_bits, value_bits = acc.view(np.int32), values.view(np.int32)
    heap_k = np.empty(k, dtype=np.int64)
    for q in range(token_ptr.shape[0] - 1):
        postings, seed, seed_size = 0, -1, n_docs + 1
        for t in range(token_ptr[q], token_ptr[q + 1]):
            length = indptr[token_ids[t] + 1] - indptr[token_ids[t]]
            postings += length
            if k <= length < seed_size:
                seed, seed_size = token_ids[t], length
        sparse = postings * 8 < n_docs
        n = 0
        for t in range(token_ptr[q], token_ptr[q + 1]):
            for j in range(indptr[token_ids[t]], indptr[token_ids[t] + 1]):
                if sparse and acc[indices[j]] == 0.0:
                    touched[n] = indices[j]
                    n += 1
                acc[indices[j]] += data[j]
        floor, high = np.float32(0.0), np.float32(0.0)
        if seed >= 0:
            for j in range(seed_size):
                values[j] = acc[indices[indptr[seed] + j]]
                high = max(high, values[j])
            for _ in range(FLOOR_STEPS):  # bisect: the floor stays a score that k seed passages reach
                middle = np.float32((floor + high) / 2)
                above = 0
                for j in range(seed_size):
                    above += values[j] >= middle
                if above >= k:
                    floor = middle
                else:
                    high = middle
        floor_as_array[0] = floor
        bar = max(floor_as_array.view(np.int32)[0], np.int32(1))  # bits >= 1: a score > 0
        size = 0
        for b in range(1 if sparse else (n_docs + BLOCK - 1) // BLOCK):
            if not sparse:
                first, last = b * BLOCK, min(b * BLOCK + BLOCK, n_docs)
                if size == k:
                    bar = np.int32(heap_k[0] >> 32)  # the root's score: no score under it can enter
                if last - first == BLOCK:
                    reach = np.int32(0)
                    for i in range(BLOCK):
                        reach += np.int32(acc_bits[first + i] >= bar)
                    if reach == 0:  # most blocks, once the heap is full; reset while in cache
                        for i in range(BLOCK):
                            acc[first + i] = 0.0
                        continue
                n = 0
                for i in range(first, last):
                    touched[n] = i
                    value_bits[n] = acc_bits[i]
                    n += acc_bits[i] >= bar
                    acc[i] = 0.0
            for i in range(n):
                d = touched[i]
                bits = acc_bits[d] if sparse else value_bits[i]
                acc[d] = 0.0
                if bits < bar:
                    continue
                key = (np.int64(bits) << 32) | id_rank[d]
                if size < k:  # push, then sift up while better than its parent
                    pos = size
                    size += 1
                    while pos > 0 and key < heap_k[(pos - 1) >> 2]:
                        heap_k[pos] = heap_k[(pos - 1) >> 2]
                        pos = (pos - 1) >> 2
                    heap_k[pos] = key
                elif key > heap_k[0]:  # replace the root, sift down
                    pos = 0
                    while 4 * pos + 1 < size:
                        child = 4 * pos + 1
                        low = heap_k[child]
                        for j in range(child + 1, min(child + 4, size)):
                            smaller = heap_k[j] < low
                            child = j if smaller else child
                            low = heap_k[j] if smaller else low
                        if low >= key:
                            break
                        heap_k[pos] = low
                        pos = child
                    heap_k[pos] = key
        counts[q] = size
        keys[q, :size] = heap_k[:size]  # unsorted: top_k sorts them
