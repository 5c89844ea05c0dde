"""The units of work a sweep hands to an executor (in this process, or Ray workers): pure functions of
their task, so a worker on another machine computes exactly what this process would.

- `embed_shard`: embed one shard of texts through the workspace's embedding cache. Shards are cut
  from the texts sorted as the encoder sorts them (longest first) at multiples of its batch size
  (`shard_texts`), so every batch holds the same texts however many workers there are, and the
  vectors are the same bytes as one process embedding everything at once.
- `compute_run`: build one retriever over the passages and search every question; returns the run,
  its resolved configuration and its cost (`goldeval.sweep.cost`).
`CachedRetriever` serves a stored run through the Retriever protocol, so hybrid and rerank built by
their own factories fuse and rerank stored runs without searching again.
"""

from __future__ import annotations

import contextlib
import io
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goldeval.corpus.model import Passage
from goldeval.golden.model import GoldenSet
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.retrievers.encoders.base import Kind, cached_encode
from goldeval.run import Run
from goldeval.runstore import StoredRun
from goldeval.store.cache import EmbeddingCache
from goldeval.store.workspace import Workspace
from goldeval.sweep.cost import index_bytes, measure_latency
from goldeval.types import QuestionId


class CachedRetriever:
    """A stored run behind the Retriever protocol; asking deeper than it was searched is a bug."""

    def __init__(self, stored: StoredRun) -> None:
        self.name = stored.spec
        self.stored = stored
        self.config = dict(stored.config)

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        if top_k > self.stored.depth:
            raise RuntimeError(f"the stored run of {self.name} holds {self.stored.depth} results a question, "
                               f"{top_k} were asked: the sweep planned the wrong depth")
        run = Run(self.name)
        for qid in queries:
            if qid in self.stored.results:
                run.results[qid] = self.stored.results[qid][:top_k]  # stored in rank order already
            if qid in self.stored.errors:
                run.errors[qid] = self.stored.errors[qid]
        return run


@dataclass(frozen=True)
class EmbedTask:
    model: str
    kind: str
    """`passage` or `query`: the model's prefix and the cache key differ."""
    texts: list[str]
    workspace: str
    threads: int | None = None
    tag: str = ""
    """Which (model, passages) the shard belongs to, for the embedding-time record."""
    api: dict[str, object] | None = None
    """An API model's options (base_url, dimensions, ...; never a key), as the sweep's settings give them."""
    precision: str | None = None
    """The model's precision as the sweep's settings ask it (`dense:MODEL?precision=`; None: its own)."""


_WARM: set[str] = set()
"""Models this process has loaded (each worker loads its own once)."""
_CACHES: dict[tuple[str, str], EmbeddingCache] = {}
"""The embedding cache of each (workspace, model) this process has embedded into (`embed_shard`)."""


@dataclass(frozen=True)
class EmbedReport:
    tag: str
    kind: str
    texts: int
    computed: int
    seconds: float


def embed_shard(task: EmbedTask) -> EmbedReport:
    """Embed the shard's texts that the cache lacks; the cache's writes are atomic, so workers share it."""
    from goldeval.retrievers.encoders.registry import shared_encoder

    workspace = Workspace.at(task.workspace)
    encoder = shared_encoder(task.model, threads=task.threads, progress=False, api=task.api,
                             precision=task.precision)
    memo = (str(workspace.root.resolve()), encoder.key)  # one cache per process: its entries are read once,
    cache = _CACHES.get(memo)                           # not again for every shard the worker is given
    if cache is None:
        cache = _CACHES[memo] = EmbeddingCache(workspace, encoder.key, slug=encoder.name, about={"model": encoder.name})
    kind: Kind = "query" if task.kind == "query" else "passage"
    if encoder.key not in _WARM and getattr(encoder, "usage", None) is None:  # load a local model untimed (an
        # API model loads nothing, and a warm-up request would be paid for, and stored as a vector)
        encoder.encode(["warm up"], kind=kind)
        _WARM.add(encoder.key)
    start = time.perf_counter()
    cached_encode(cache, encoder, task.texts, kind)
    return EmbedReport(task.tag, task.kind, len(task.texts), cache.stats.computed, time.perf_counter() - start)


def shard_texts(texts: Sequence[str], *, prefix: str, batch_size: int, shards: int) -> list[list[str]]:
    """Unique texts, longest first (as `BatchedEncoder` orders them, stably), cut into about `shards`
    pieces at multiples of `batch_size`: the batches are the same whatever the number of pieces."""
    unique = list(dict.fromkeys(texts))
    unique.sort(key=lambda t: len(prefix + t), reverse=True)
    batches = math.ceil(len(unique) / max(batch_size, 1))
    per_shard = max(1, math.ceil(batches / max(shards, 1))) * max(batch_size, 1)
    return [unique[i : i + per_shard] for i in range(0, len(unique), per_shard)]


@dataclass(frozen=True)
class RunTask:
    spec: str
    workspace: str
    depth: int
    latency_ids: list[str]
    corpus_key: str = ""
    options: dict[str, object] = field(default_factory=dict)
    built: dict[str, StoredRun] = field(default_factory=dict)
    """Stored runs to serve as already-built retrievers (a rerank's base)."""
    threads: int | None = None


def compute_run(task: RunTask, passages: Sequence[Passage], golden: GoldenSet) -> StoredRun:
    """Build `task.spec` over `passages`, search every golden question at `task.depth`, time it."""
    from goldeval.evaluation import machine, search_golden_set
    from goldeval.retrievers.encoders.base import set_threads

    if task.threads:
        set_threads(task.threads)
    ctx = BuildContext(passages, workspace=Path(task.workspace), corpus_key=task.corpus_key,
                       options={**task.options, "progress": False},
                       built={spec: CachedRetriever(stored) for spec, stored in task.built.items()})
    given = set(ctx.built)
    _warm_up(task, passages, ctx)
    try:
        start = time.perf_counter()
        retriever = build_retriever(task.spec, ctx)
        built_seconds = time.perf_counter() - start
        start = time.perf_counter()
        run = search_golden_set(retriever, golden, task.depth, False)
        search_seconds = time.perf_counter() - start
        embedded = _embedded(retriever)
        questions = {q.id: q.question for q in golden}
        latency = measure_latency(retriever, questions, [q for q in task.latency_ids if q in questions], task.depth)
        cost = {"index_seconds": built_seconds, "index_bytes": index_bytes(retriever),
                "search_seconds": search_seconds, "questions": len(questions), "embedded": embedded}
        config = dict(getattr(retriever, "config", None) or {"spec": task.spec})
        stored = StoredRun.from_run(run, spec=task.spec, depth=task.depth, config=config)
        stored.cost, stored.latency_ms, stored.machine = cost, latency, machine()
        return stored
    finally:
        for spec, built in ctx.built.items():
            close = getattr(built, "close", None)
            if spec not in given and callable(close):
                close()


def _warm_up(task: RunTask, passages: Sequence[Passage], ctx: BuildContext) -> None:
    """Build the same spec over two passages first, untimed, so the one-time costs of a process (imports,
    loading a model) are not charged to whichever configuration happens to be built first."""
    small = BuildContext(passages[:2], workspace=ctx.workspace, corpus_key=ctx.corpus_key, options=ctx.options,
                         built=dict(ctx.built))
    with contextlib.redirect_stderr(io.StringIO()):  # its warnings are the real build's to give
        retriever = build_retriever(task.spec, small)
        retriever.search({"warm-up": "warm up"}, top_k=1)
    for spec, built in small.built.items():
        close = getattr(built, "close", None)
        if spec not in ctx.built and callable(close):
            close()


def _embedded(retriever: object) -> int:
    """Texts a dense retriever had to embed itself while building and searching (0 after the embed stage)."""
    built = getattr(getattr(retriever, "passage_stats", None), "computed", 0)
    searched = getattr(getattr(getattr(retriever, "cache", None), "stats", None), "computed", 0)
    return int(built or 0) + int(searched or 0)
