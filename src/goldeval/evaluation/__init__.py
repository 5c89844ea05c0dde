"""`evaluate`: run retrievers over a golden set and score every question.

Levels. At `doc` level a retrieved chunk counts for its document: the ranking keeps the chunk
positions, the first chunk of an expected document is the hit ("search returns the top ten chunks and
we record the rank of the first one that comes from an expected post"), and later chunks of a document
already seen count as non-relevant, so no document is counted twice (recall, precision, nDCG and MAP stay
within [0, 1]). At `chunk` level an expected chunk id must itself be retrieved; an expected id without
`#` (a whole document) is satisfied by any of its chunks, once.

Off-topic questions (no expected answer) are searched too, for their top-1 score, but never averaged
into the retrieval metrics.

Three steps, each its own module: `planning` (one frozen `EvalSettings` checked and resolved with the loaded
golden set and corpus), `searching` (each retriever's run, searched or read from the workspace's stored
runs) and `assembling` (each run scored, then the Scorecard).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from goldeval.corpus.model import Corpus
from goldeval.evaluation.assembling import SNIPPET_CHARS, assemble, scored
from goldeval.evaluation.planning import EvalSettings, Plan, passages_fingerprint, plan
from goldeval.evaluation.searching import (
    RUN_SETTINGS,
    RetrieverLike,
    StoredRuns,
    close_built,
    machine,
    named_retrievers,
    runs,
    search_golden_set,
)
from goldeval.golden.model import GoldenSet
from goldeval.memory import small_pages_only
from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import Scorecard

__all__ = ["RUN_SETTINGS", "SNIPPET_CHARS", "EvalSettings", "Plan", "RetrieverLike", "evaluate",
           "machine", "passages_fingerprint", "search_golden_set"]


def evaluate(
    retrievers: RetrieverLike | Sequence[RetrieverLike] | Mapping[str, RetrieverLike],
    golden: GoldenSet | str | Path,
    *,
    corpus: Corpus | None = None,
    k: int | Sequence[int] = (1, 5, 10),
    metrics: Sequence[Metric | str] | None = None,
    headline: Metric | str | None = None,
    level: str = "doc",
    depth: int = 100,
    chunking: Any = None,
    workspace: str | Path | None = None,
    options: Mapping[str, object] | None = None,
    progress: bool = False,
    strict: bool = False,
    cache: bool = True,
    settings: EvalSettings | None = None,
) -> Scorecard:
    """Evaluate one or more retrievers on a golden set; returns a Scorecard of scores, no statistics.

    The keywords from `k` to `cache` are the fields of `EvalSettings`; `settings=EvalSettings(...)` passes
    them as one frozen object instead (the CLI and the sweep do).
    `goldeval.evaluate(search_fn, golden, k=10)` works with just a function `search_fn(question, k)`
    returning ids or (id, score) pairs. Spec strings (`bm25`, `dense:minilm`) need `corpus`.
    `depth` is how many results are retrieved per question (N): a miss reports the rank where an
    expected answer finally appeared within it, and the scorecard holds every metric curve for k = 1..depth.
    Statistics (bootstrap intervals, paired tests, off-topic separability, miss causes) are a separate
    step, `goldeval.compare(scorecard)`, as ranx keeps `evaluate` and `compare` apart.
    Answers are checked first (`retrievers.answers`): a NaN/inf score or a repeated id fails that question;
    ids the corpus lacks are a warning (an InputError with `strict`).
    With `cache`, the runs of goldeval's own retrievers (bm25, dense, hybrid, rerank over a local index)
    are kept in the workspace by content (`goldeval.runstore`): an unchanged evaluation reads them
    instead of indexing and searching again, and says so in the scorecard's notes.
    """
    given = EvalSettings(k=k, metrics=metrics, headline=headline, level=level, depth=depth, chunking=chunking,
                         workspace=workspace, options=dict(options or {}), progress=progress, strict=strict, cache=cache)
    if settings is not None and given != EvalSettings():
        raise TypeError("evaluate: pass the settings either as keywords or as settings=EvalSettings(...), not both")
    settings = settings or given
    with small_pages_only():  # a large evaluation's arrays in ordinary pages (`goldeval.memory`)
        # plan, then search or read each retriever's run and score it, then assemble the Scorecard
        resolved = plan(golden, corpus, settings)
        named = named_retrievers(retrievers, settings.options)
        store = StoredRuns.of(resolved)
        results = []
        notes: list[str] = []
        try:
            for found in runs(resolved, named, store):
                results.append(scored(resolved, found, notes))
        finally:
            close_built(resolved.ctx)
        if store is not None and store.served:
            notes.append(store.note())
        return assemble(resolved, results, notes)
