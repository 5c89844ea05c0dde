"""Vector indexes: the interface every backend implements, exact search, and an ANN index.

`ExactIndex` (numpy, inner product over L2-normalised rows = cosine) is the default and the
reference; `AnnIndex` (usearch HNSW, extra `ann`) is for corpora past a few hundred thousand
passages, and `ann_recall` measures how much of the exact top k it finds. The PostgreSQL +
pgvector backend (`goldeval.retrievers.backends.pgvector.PgVectorIndex`) implements the same protocol;
`goldeval.retrievers.backends.make_index` picks one by name from a dense retriever's options.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from goldeval.errors import require
from goldeval.ranking import ranked


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest neighbours by inner product over float32, L2-normalised rows."""

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None: ...

    def search(self, queries: np.ndarray, top_k: int) -> tuple[list[list[str]], np.ndarray]:
        """Ids and scores of the top_k rows per query, best first (scores shape: queries x k')."""
        ...

    def close(self) -> None: ...


class ExactIndex:
    """Brute-force inner product: blocked matmul, then argpartition for the top k of each block."""

    def __init__(self, dim: int | None = None, *, block: int = 1024) -> None:
        self.dim = dim
        self._ids: list[str] = []
        self._parts: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
        self._block = block

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        vectors = _check(vectors, len(ids), self.dim)
        self.dim = vectors.shape[1]
        self._ids.extend(ids)
        self._parts.append(vectors)
        self._matrix = None

    def search(self, queries: np.ndarray, top_k: int) -> tuple[list[list[str]], np.ndarray]:
        matrix = self._stacked()
        k = min(top_k, matrix.shape[0])
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if k <= 0 or queries.shape[0] == 0:
            return [[] for _ in range(queries.shape[0])], np.zeros((queries.shape[0], 0), np.float32)
        out_idx = np.empty((queries.shape[0], k), dtype=np.int64)
        out_val = np.empty((queries.shape[0], k), dtype=np.float32)
        for start in range(0, queries.shape[0], self._block):
            scores = queries[start : start + self._block] @ matrix.T
            idx = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < scores.shape[1] else np.tile(
                np.arange(scores.shape[1]), (scores.shape[0], 1)
            )
            vals = np.take_along_axis(scores, idx, axis=1)
            order = np.argsort(-vals, axis=1, kind="stable")
            idx = np.take_along_axis(idx, order, axis=1)
            vals = np.take_along_axis(vals, order, axis=1)
            self._ties_at_the_cut(scores, idx, vals)
            out_idx[start : start + len(scores)] = idx
            out_val[start : start + len(scores)] = vals
        return [[self._ids[i] for i in row] for row in out_idx], out_val

    def _ties_at_the_cut(self, scores: np.ndarray, idx: np.ndarray, vals: np.ndarray) -> None:
        """Where more passages tie with the k-th score than fit, keep the ones the ranking rule
        keeps (ties by id descending, as goldeval.ranking and trec_eval), not the first in memory."""
        k = idx.shape[1]
        kth = vals[:, -1:]
        crowded = np.nonzero((scores >= kth).sum(axis=1) > k)[0]
        for row in crowded:
            candidates = np.nonzero(scores[row] >= kth[row, 0])[0]
            pairs = ranked((self._ids[i], float(scores[row, i])) for i in candidates)[:k]
            position = {self._ids[i]: i for i in candidates}
            idx[row] = [position[pid] for pid, _ in pairs]
            vals[row] = scores[row, idx[row]]

    def close(self) -> None:
        self._parts, self._matrix, self._ids = [], None, []

    def _stacked(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = np.concatenate(self._parts) if self._parts else np.zeros((0, self.dim or 0), np.float32)
            self._parts = [self._matrix]
        return self._matrix


class AnnIndex:
    """Approximate search with usearch's HNSW graph (inner-product metric), extra `ann`."""

    def __init__(self, dim: int, *, connectivity: int = 16, expansion_add: int = 128, expansion_search: int = 64) -> None:
        usearch = require("usearch.index", extra="ann", purpose="the approximate vector index", package="usearch")
        self.dim = dim
        self._index = usearch.Index(
            ndim=dim, metric="ip", dtype="f32", connectivity=connectivity,
            expansion_add=expansion_add, expansion_search=expansion_search,
        )
        self._ids: list[str] = []

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        vectors = _check(vectors, len(ids), self.dim)
        keys = np.arange(len(self._ids), len(self._ids) + len(ids), dtype=np.uint64)
        self._ids.extend(ids)
        if len(ids):
            self._index.add(keys, vectors, threads=0)

    def search(self, queries: np.ndarray, top_k: int) -> tuple[list[list[str]], np.ndarray]:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        k = min(top_k, len(self._ids))
        if k <= 0 or queries.shape[0] == 0:
            return [[] for _ in range(queries.shape[0])], np.zeros((queries.shape[0], 0), np.float32)
        found = self._index.search(queries, k, threads=0)
        keys = np.asarray(found.keys).reshape(queries.shape[0], -1)
        # usearch's "ip" metric is a distance: 1 - inner product.
        scores = 1.0 - np.asarray(found.distances, dtype=np.float32).reshape(queries.shape[0], -1)
        # One query gives `Matches` (no counts), several give `BatchMatches` (padded rows + counts).
        counts = np.asarray(getattr(found, "counts", [keys.shape[1]])).reshape(-1)
        ids = [[self._ids[int(key)] for key in keys[row, : counts[row]]] for row in range(queries.shape[0])]
        return ids, scores

    def close(self) -> None:
        self._index = None
        self._ids = []


def ann_recall(vectors: np.ndarray, queries: np.ndarray, top_k: int = 10, **ann_options: int) -> float:
    """Recall@k of the ANN index against exact search: the share of the exact top k it returns."""
    ids = [str(i) for i in range(vectors.shape[0])]
    ann = AnnIndex(vectors.shape[1], **ann_options)
    ann.add(ids, vectors)
    return recall_against_exact(ann, ids, vectors, queries, top_k)


def recall_against_exact(
    index: VectorIndex, ids: Sequence[str], vectors: np.ndarray, queries: np.ndarray, top_k: int = 10
) -> float:
    """The share of the exact top k (numpy over `vectors`) that `index` returns for `queries`."""
    exact = ExactIndex(vectors.shape[1])
    exact.add(ids, vectors)
    truth, _ = exact.search(queries, top_k)
    got, _ = index.search(queries, top_k)
    found = sum(len(set(t) & set(g)) for t, g in zip(truth, got, strict=True))
    total = sum(len(t) for t in truth)
    return found / total if total else 1.0


def _check(vectors: np.ndarray, n: int, dim: int | None) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise ValueError(f"expected {n} vectors as a 2-d array, got shape {vectors.shape}")
    if dim is not None and vectors.shape[1] != dim:
        raise ValueError(f"expected vectors of dimension {dim}, got {vectors.shape[1]}")
    return vectors
