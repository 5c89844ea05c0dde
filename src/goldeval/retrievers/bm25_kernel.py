"""BM25 search over bm25s' eager index, without scoring every passage for every question.

bm25s stores each term's precomputed BM25 contribution per passage (a CSC matrix: `indptr` over the
vocabulary, `indices`/`data` the passages and their scores). A question's score for a passage is the
sum over its terms, in float32 and in the question's term order, as bm25s adds them. bm25s' numpy
backend then `argpartition`s all N passages for every question; here only the passages that share a
term with the question are touched, and the top k is kept in a heap of k, so a question costs its
postings, not the collection.

The top k follows the one ranking rule (`goldeval.ranking`): score descending, ties by passage id
descending (`id_rank` is each passage's position in sorted id order), so cutting at k never splits
ties differently from the evaluation.

Two implementations of the same loop, tested equal:
- numba (extra `fast`): compiled once per machine and cached in the workspace (`<workspace>/numba/`),
  so a second process loads it instead of compiling (numba's own cache would write next to the
  installed package, often read-only);
- numpy (core install): the same sums with `np.add.at` in term order, then a partition of the
  touched passages only.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Postings:
    """bm25s' index as arrays, plus the passages' rank in id order (for ties)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    id_rank: np.ndarray

    @classmethod
    def of(cls, scores: dict[str, Any], ids: list[str]) -> Postings:
        id_rank = np.empty(len(ids), dtype=np.int32)
        id_rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids), dtype=np.int32)
        return cls(np.ascontiguousarray(scores["data"], dtype=np.float32),
                   np.ascontiguousarray(scores["indices"], dtype=np.int32),
                   np.ascontiguousarray(scores["indptr"], dtype=np.int64), id_rank)  # fmt: skip


def top_k(postings: Postings, queries: list[list[int]], k: int, workspace: Path | None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """For each query (term ids), its k best passages: (passage index, score, how many) per query,
    best first. Uses numba when installed, else numpy; the results are the same."""
    n_terms = len(postings.indptr) - 1
    flat = [t for terms in queries for t in terms if 0 <= t < n_terms]
    lengths = [sum(1 for t in terms if 0 <= t < n_terms) for terms in queries]
    token_ptr = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    token_ids = np.asarray(flat, dtype=np.int64)
    docs = np.zeros((len(queries), k), dtype=np.int32)
    scores = np.zeros((len(queries), k), dtype=np.float32)
    counts = np.zeros(len(queries), dtype=np.int64)
    kernel = compiled(workspace)
    if kernel is not None:
        kernel(postings.data, postings.indices, postings.indptr, postings.id_rank, token_ptr, token_ids, k, docs,
               scores, counts)  # fmt: skip
    else:
        _top_k_numpy(postings, token_ptr, token_ids, k, docs, scores, counts)
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
        touched = np.unique(np.concatenate([p.indices[p.indptr[t] : p.indptr[t + 1]] for t in terms.tolist()]))
        best, value = touched, acc[touched]
        if len(best) > k:  # keep everything tied with the k-th score, then order exactly
            keep = value >= np.partition(value, len(value) - k)[len(value) - k]
            best, value = best[keep], value[keep]
        order = np.lexsort((p.id_rank[best], value))[::-1][:k]
        n = len(order)
        docs[q, :n], scores[q, :n], counts[q] = best[order], value[order], n
        acc[touched] = 0.0


# --- numba, compiled once and cached in the workspace -----------------------------------------------


_LOCK = threading.Lock()
_KERNELS: dict[str, Any] = {}


def compiled(workspace: Path | None) -> Any:
    """The numba kernel, its compiled code cached under `<workspace>/numba/`; None without numba."""
    key = str(workspace or "")
    with _LOCK:
        if key not in _KERNELS:
            _KERNELS[key] = _compile(workspace)
        return _KERNELS[key]


def _compile(workspace: Path | None) -> Any:
    try:
        import numba
    except ImportError:
        return None
    kernel = numba.njit(nogil=True, cache=False)(_top_k_loop)
    if workspace is not None:
        cache = _workspace_cache(kernel.py_func, Path(workspace) / "numba")
        if cache is not None:  # what Dispatcher.enable_caching sets, with a locator of ours
            kernel._cache = cache  # type: ignore[attr-defined]
    return kernel


def _workspace_cache(py_func: Any, folder: Path) -> Any:
    """A numba FunctionCache writing to `folder` (not next to this file, nor via a global setting)."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba moved its cache classes
        return None
    base = getattr(caching, "UserProvidedCacheLocator", None) or getattr(caching, "_UserProvidedCacheLocator", None)
    if base is None:  # pragma: no cover
        return None

    class WorkspaceLocator(base):  # type: ignore[misc, valid-type]
        def __init__(self, func: Any, py_file: str) -> None:
            super().__init__(func, py_file)
            self._cache_path = str(folder)

        @classmethod
        def from_function(cls, func: Any, py_file: str) -> Any:
            locator = cls(func, py_file)
            try:
                locator.ensure_cache_path()
            except OSError:
                return None
            return locator

    class WorkspaceImpl(caching.CompileResultCacheImpl):  # type: ignore[misc, name-defined]
        _locator_classes = [WorkspaceLocator]

    class WorkspaceCache(caching.FunctionCache):  # type: ignore[misc, name-defined]
        _impl_class = WorkspaceImpl

    try:
        return WorkspaceCache(py_func)
    except RuntimeError:  # no locator: the folder cannot be written; compile in memory only
        return None


def _top_k_loop(data, indices, indptr, id_rank, token_ptr, token_ids, k, docs, scores, counts):  # type: ignore[no-untyped-def]  # noqa: ANN001
    """The numba kernel: per query, add up its terms' postings, keep the k best in a heap whose root is
    the worst kept (lower score, or equal score and lower id rank), then write them best first."""
    n_docs = id_rank.shape[0]
    acc = np.zeros(n_docs, dtype=np.float32)
    seen = np.zeros(n_docs, dtype=np.bool_)
    touched = np.empty(n_docs, dtype=np.int32)
    heap = np.empty(k, dtype=np.int32)
    for q in range(token_ptr.shape[0] - 1):
        n = 0
        for t in range(token_ptr[q], token_ptr[q + 1]):
            term = token_ids[t]
            for j in range(indptr[term], indptr[term + 1]):
                d = indices[j]
                if not seen[d]:
                    seen[d] = True
                    touched[n] = d
                    n += 1
                acc[d] += data[j]
        size = 0
        for i in range(n):
            d = touched[i]
            if size < k:  # push, then sift up while worse than its parent
                pos = size
                size += 1
                while pos > 0:
                    up = (pos - 1) >> 1
                    u = heap[up]
                    if acc[d] < acc[u] or (acc[d] == acc[u] and id_rank[d] < id_rank[u]):
                        heap[pos] = u
                        pos = up
                    else:
                        break
                heap[pos] = d
            else:
                r = heap[0]
                if acc[d] > acc[r] or (acc[d] == acc[r] and id_rank[d] > id_rank[r]):
                    pos = 0  # replace the root, sift down while a child is worse
                    while True:
                        child = 2 * pos + 1
                        if child >= size:
                            break
                        c = heap[child]
                        if child + 1 < size:
                            o = heap[child + 1]
                            if acc[o] < acc[c] or (acc[o] == acc[c] and id_rank[o] < id_rank[c]):
                                child += 1
                                c = o
                        if acc[c] < acc[d] or (acc[c] == acc[d] and id_rank[c] < id_rank[d]):
                            heap[pos] = c
                            pos = child
                        else:
                            break
                    heap[pos] = d
        counts[q] = size
        for out in range(size - 1, -1, -1):  # pop the worst into the last free place: best first
            worst = heap[0]
            docs[q, out] = worst
            scores[q, out] = acc[worst]
            last = heap[out]
            pos = 0
            while True:
                child = 2 * pos + 1
                if child >= out:
                    break
                c = heap[child]
                if child + 1 < out:
                    o = heap[child + 1]
                    if acc[o] < acc[c] or (acc[o] == acc[c] and id_rank[o] < id_rank[c]):
                        child += 1
                        c = o
                if acc[c] < acc[last] or (acc[c] == acc[last] and id_rank[c] < id_rank[last]):
                    heap[pos] = c
                    pos = child
                else:
                    break
            heap[pos] = last
        for i in range(n):
            acc[touched[i]] = 0.0
            seen[touched[i]] = False
