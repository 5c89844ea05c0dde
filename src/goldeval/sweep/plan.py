"""The state of one sweep as its stages fill it in: what to evaluate, and the stored runs found or made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from goldeval.corpus.model import Corpus, Passage
from goldeval.fingerprint import fingerprint
from goldeval.golden.model import GoldenSet
from goldeval.metrics.definitions import Metric
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.runstore import FORMAT, StoredRun
from goldeval.store.workspace import Workspace
from goldeval.sweep.cache import SweepCache
from goldeval.sweep.config import Settings
from goldeval.sweep.distributed import Executor
from goldeval.sweep.grid import Cell, Grid
from goldeval.sweep.stages import CachedRetriever


@dataclass
class Plan:
    grid: Grid
    cells: list[Cell]
    golden: GoldenSet
    settings: Settings
    metrics: list[Metric]
    headline: Metric | None
    depth: int
    """The depth every configuration is scored at (as `evaluate` raises it for the cut-offs)."""
    base_depth: int
    """The depth base runs are stored at: enough for the deepest hybrid part or reranked base."""
    workspace: Workspace
    cache: SweepCache
    executor: Executor
    progress: bool
    questions: dict[str, str]
    questions_key: str
    latency_ids: list[str]
    corpus: Corpus | None = None
    passages: dict[str, list[Passage]] = field(default_factory=dict)
    passages_key: dict[str, str] = field(default_factory=dict)
    base: dict[tuple[str, str], StoredRun] = field(default_factory=dict)
    """(chunking, bm25 | dense:MODEL) -> its stored run."""
    base_keys: dict[tuple[str, str], str] = field(default_factory=dict)
    computed: set[object] = field(default_factory=set)
    """The base runs (chunking, spec) and reranking cells this sweep had to search."""
    reranked: dict[Cell, StoredRun] = field(default_factory=dict)
    counters: dict[str, dict[str, int]] = field(default_factory=lambda: {
        "chunks": {"cached": 0, "computed": 0},
        "runs": {"cached": 0, "computed": 0, "questions_searched": 0},
        "embeddings": {"texts_embedded": 0, "shards": 0, "embedded_while_searching": 0},
    })
    wall: dict[str, float] = field(default_factory=dict)
    _fused: dict[tuple[str, str, int], StoredRun] = field(default_factory=dict)

    @property
    def workspace_path(self) -> str:
        """Absolute, so a worker with another working folder finds the same workspace."""
        return str(self.workspace.root.resolve())

    def count(self, stage: str, what: str, n: int = 1) -> None:
        self.counters.setdefault(stage, {})
        self.counters[stage][what] = self.counters[stage].get(what, 0) + n

    def context(self, chunking: str) -> BuildContext:
        """A build context whose retrievers of `chunking` are already built: its stored base runs."""
        built: dict[str, Any] = {spec: CachedRetriever(run) for (c, spec), run in self.base.items() if c == chunking}
        return BuildContext(self.passages[chunking], workspace=self.workspace.root,
                            corpus_key=self.passages_key[chunking][:16],
                            options={**self.settings.options, "progress": False}, built=built)

    def base_run(self, cell: Cell, depth: int) -> StoredRun:
        """What a reranking cell reranks: its stored base run, or its hybrid's fusion of stored runs."""
        if cell.retriever != "hybrid":
            return self.base[(cell.chunking, cell.parts[0])]
        memo = (cell.chunking, cell.base_spec, depth)
        if memo not in self._fused:
            hybrid = build_retriever(cell.base_spec, self.context(cell.chunking))
            run = hybrid.search(self.questions, top_k=depth)
            self._fused[memo] = StoredRun.from_run(run, spec=cell.base_spec, depth=depth,
                                                   config=dict(getattr(hybrid, "config", {}) or {}))
        return self._fused[memo]

    def embedding_key(self, model_key: str, chunking: str) -> str:
        """Where the time to embed `chunking`'s passages with a model is recorded."""
        return fingerprint(["embedding-time", FORMAT, model_key, self.passages_key[chunking]])
