"""Dense retrieval: embed passages once (cached in the workspace), search a vector index.

Spec: `dense:MODEL[?backend=exact|ann|pgvector&batch_size=N&threads=N]`, where MODEL is a short
name from the registry (`goldeval models`) or a path to a sentence-transformers folder. The same
options may come from `BuildContext.options` (the CLI's `--backend`, `--dsn`); the spec wins.
Passages are embedded as `title\\ntext` (the text alone when there is no title), like BM25 indexes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import numpy as np

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.encoders.base import Encoder
from goldeval.retrievers.spec import check_known, split_options
from goldeval.run import Run
from goldeval.store.cache import CacheStats, EmbeddingCache
from goldeval.store.index import VectorIndex, make_index, recall_against_exact
from goldeval.store.workspace import Workspace
from goldeval.types import QuestionId

OPTIONS = {
    "backend": "vector index: exact (default, numpy), ann (usearch) or pgvector",
    "batch_size": "texts per model call (default: the model's own)",
    "threads": "CPU threads for the model (default: all cores), set once per process",
}


def passage_text(passage: Passage) -> str:
    """What a dense model embeds for a passage."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


class DenseRetriever:
    """Bi-encoder retrieval: cosine similarity of L2-normalised query and passage vectors."""

    def __init__(
        self,
        passages: Sequence[Passage],
        encoder: Encoder,
        *,
        workspace: Workspace | None = None,
        backend: str = "exact",
        ctx: BuildContext | None = None,
        name: str | None = None,
    ) -> None:
        self.name = name or f"dense:{encoder.name}"
        self.encoder = encoder
        workspace = workspace or Workspace.at()
        self.cache = EmbeddingCache(workspace, encoder.key, slug=encoder.name, about={"model": encoder.name})
        self.passage_ids = [p.id for p in passages]
        self.vectors = self.cache.get_or_compute(
            [passage_text(p) for p in passages],
            lambda texts: encoder.encode(texts, kind="passage"),
            prefix=encoder.prefix("passage"),
        )
        self.passage_stats: CacheStats = self.cache.stats
        self.index: VectorIndex = make_index(backend, int(self.vectors.shape[1]) if passages else encoder.dim, ctx)
        if passages:
            self.index.add(self.passage_ids, self.vectors)
        self.ann_recall: float | None = None
        if backend == "ann" and passages:
            self.ann_recall = self._check_ann()

    def _check_ann(self, sample: int = 200, top_k: int = 10) -> float:
        """Recall@10 of the ANN index against exact search, passages sampled as queries (stderr)."""
        rng = np.random.default_rng(0)
        rows = rng.choice(len(self.passage_ids), size=min(sample, len(self.passage_ids)), replace=False)
        recall = recall_against_exact(self.index, self.passage_ids, self.vectors, self.vectors[rows], top_k)
        print(f"goldeval: {self.name}: ANN recall@{top_k} against exact search on {len(rows)} sampled passages: "
              f"{recall:.3f}", file=sys.stderr)
        return recall

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        run = Run(self.name)
        qids = list(queries)
        if not qids:
            return run
        if not self.passage_ids:
            for qid in qids:
                run.add(qid, [])
            return run
        vectors = self.cache.get_or_compute(
            [queries[q] for q in qids],
            lambda texts: self.encoder.encode(texts, kind="query"),
            prefix=self.encoder.prefix("query"),
        )
        ids, scores = self.index.search(vectors, top_k)
        for row, qid in enumerate(qids):
            run.add(qid, zip(ids[row], scores[row, : len(ids[row])].tolist(), strict=True))
        return run

    def close(self) -> None:
        self.index.close()


def build(rest: str, ctx: BuildContext) -> DenseRetriever:
    """Factory for `dense:MODEL[?options]`."""
    from goldeval.retrievers.encoders.registry import shared_encoder

    spec = f"dense:{rest}"
    model, options = split_options(rest)
    check_known(spec, options, OPTIONS)
    if not model:
        raise InputError(f"{spec!r} names no model", value=spec, hint="e.g. dense:minilm; `goldeval models` lists them")
    merged = {k: v for k, v in ctx.options.items() if k in OPTIONS} | options
    backend = str(merged.get("backend", "exact"))
    encoder = shared_encoder(
        model,
        workspace=Workspace.at(ctx.workspace),
        batch_size=_int_option(spec, merged, "batch_size"),
        threads=_int_option(spec, merged, "threads"),
        progress=bool(ctx.options.get("progress", True)),
    )
    return DenseRetriever(
        ctx.passages, encoder, workspace=Workspace.at(ctx.workspace), backend=backend, ctx=ctx, name=f"dense:{model}"
    )


def _int_option(spec: str, options: Mapping[str, object], key: str) -> int | None:
    value = options.get(key)
    if value is None or value == "":
        return None
    try:
        number = int(str(value))
    except ValueError:
        raise InputError(f"option {key}={value!r} in {spec!r} is not a whole number", value=value) from None
    if number <= 0:
        raise InputError(f"option {key}={value!r} in {spec!r} must be positive", value=value)
    return number
