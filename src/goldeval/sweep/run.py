"""`sweep`: evaluate every configuration of a grid, each stage computed once and stored by content.

Stages, each skipped where the workspace already holds its output (`goldeval.sweep.cache`):
1. chunks: the corpus under each chunking;
2. embeddings: every passage and question for each model whose runs are missing, in shards (Ray
   workers or this process) through the shared embedding cache (`goldeval.sweep.stages`);
3. base runs: bm25 and dense:MODEL searched once per chunking, to the deepest any cell needs;
4. reranked runs: a reranker over its base run (itself possibly a fusion of stored runs);
5. cells: each configuration built by goldeval's own factories over stored runs (hybrid fuses them,
   which is pure and takes milliseconds) and scored by `goldeval.evaluate`, so a new fusion weight or
   a new k searches nothing;
6. the report: intervals, tests against the best, Pareto fronts, heatmaps (`goldeval.sweep.analysis`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldeval import __version__
from goldeval.corpus.model import Corpus, Passage
from goldeval.errors import InputError
from goldeval.evaluation import machine, passages_fingerprint
from goldeval.golden.model import GoldenSet
from goldeval.metrics.definitions import default_metrics, parse_metric
from goldeval.retrievers.dry_run import Estimate
from goldeval.runstore import StoredRun, questions_fingerprint, run_content, run_key
from goldeval.store.workspace import Workspace
from goldeval.sweep.cache import SweepCache, corpus_fingerprint, passages_texts
from goldeval.sweep.config import Settings
from goldeval.sweep.cost import latency_sample
from goldeval.sweep.distributed import Executor, LocalExecutor
from goldeval.sweep.embed import embed_stage, retrieval_texts
from goldeval.sweep.grid import MAX_CELLS, Cell, Grid, grid_from_mapping
from goldeval.sweep.model import SweepResult
from goldeval.sweep.plan import Plan
from goldeval.sweep.score import score_cells
from goldeval.sweep.stages import RunTask, compute_run

HYBRID_PART_DEPTH = 100
"""A hybrid fetches max(top_k, 100) results from each part (`goldeval.retrievers.hybrid`)."""


def sweep(
    grid: Grid,
    golden: GoldenSet,
    *,
    corpus: Corpus,
    settings: Settings | None = None,
    workspace: str | Path | None = None,
    executor: Executor | None = None,
    progress: bool = False,
    record_history: bool = True,
    max_cells: int = MAX_CELLS,
) -> SweepResult:
    """Evaluate every configuration of `grid` on `golden` over `corpus`; see the module docstring."""
    from goldeval.stats.annotate import check_settings

    settings = settings or Settings()
    check_settings(resamples=settings.resamples, confidence=settings.confidence, power=0.8)
    grid = grid_from_mapping({**grid.values(), "reranker": grid.reranker})  # normalised (`600` -> `600:150`)
    cells = grid.check(max_cells=max_cells)
    if settings.level == "chunk" and len(grid.chunking) > 1:
        raise InputError("at chunk level every chunking has its own chunk ids: sweep one chunking, or use --level doc",
                         value=list(grid.chunking), hint="doc level scores every chunking on the same documents")
    executor = executor or LocalExecutor()
    plan = _plan(grid, cells, golden, corpus, settings, Workspace.at(workspace), executor, progress)
    _say(progress, f"goldeval sweep: {len(cells)} configurations over {len(golden)} questions "
                   f"({', '.join(f'{d}: {len(v)}' for d, v in grid.values().items() if len(v) > 1) or 'one of each'})")
    started = time.perf_counter()
    _chunks(plan, corpus)
    _base_runs(plan)
    _rerank_runs(plan)
    plan.wall["stages"] = time.perf_counter() - started
    result = score_cells(plan, record_history=record_history)
    result.identity = _identity(plan, corpus, golden, executor)
    return result


def estimate_sweep(grid: Grid, golden: GoldenSet, *, corpus: Corpus, settings: Settings | None = None,
                   workspace: str | Path | None = None, max_cells: int = MAX_CELLS) -> list[Estimate]:
    """`goldeval sweep --dry-run`: what the grid's API models would be sent (`retrievers.dry_run`), each model's
    passages over every chunking together (the embedding cache shares their texts), nothing built or sent."""
    from goldeval.corpus.chunking import parse_chunk_spec
    from goldeval.retrievers.dry_run import estimate

    settings = settings or Settings()
    grid = grid_from_mapping({**grid.values(), "reranker": grid.reranker})
    cells = grid.check(max_cells=max_cells)
    by_model: dict[str, dict[str, list[Passage]]] = {}  # dense:MODEL -> chunking -> passages
    for cell in cells:
        for part in cell.parts:
            chunks = by_model.setdefault(part, {}) if part.startswith("dense:") else {}
            if part.startswith("dense:") and cell.chunking not in chunks:
                chunks[cell.chunking] = list(corpus.passages(parse_chunk_spec(cell.chunking)))
    questions = [q.question for q in golden]
    timed = len(latency_sample([q.id for q in golden], seed=settings.seed))  # each embedded alone, fresh, once
    out = []
    for part, chunks in by_model.items():
        for found in estimate([part], [p for ps in chunks.values() for p in ps], questions, workspace=workspace,
                              options=settings.options):
            # the latency probes are requests too, when the runs are to be computed (texts to send says so;
            # vectors all cached with runs not stored is the case this undercounts)
            out.append(replace(found, requests=found.requests + (timed if found.texts else 0)))
    for cell in cells:  # a rerank API: one request a question, then its latency probes and the warm-up
        if cell.rerank and cell.reranker and cell.reranker.startswith("api:"):
            passages = list(corpus.passages(parse_chunk_spec(cell.chunking)))
            for found in estimate([cell.spec], passages, questions, workspace=workspace, options=settings.options):
                if found.spec == cell.spec:
                    out.append(_with_probes(found, timed + 1, settings))
    return out


def _with_probes(found: Estimate, extra: int, settings: Settings) -> Estimate:
    """A rerank API's estimate with `extra` requests more (its latency probes, each a question reranked afresh,
    and the warm-up), each the size of an average request of the run, priced as the run's are."""
    from goldeval.retrievers.usage import dollars

    tokens = found.tokens + round(found.tokens / max(1, found.requests) * extra)
    requests = found.requests + extra
    prices = settings.options.get("prices")
    return replace(found, requests=requests, tokens=tokens,
                   dollars=dollars(found.model, tokens, requests, prices=str(prices) if prices else None))


def _plan(grid: Grid, cells: list[Cell], golden: GoldenSet, corpus: Corpus, settings: Settings,
          workspace: Workspace, executor: Executor, progress: bool) -> Plan:
    from goldeval.retrievers.base import check_run_options

    metrics = default_metrics(settings.k) + [parse_metric(m) for m in settings.metrics]
    headline = parse_metric(settings.headline) if settings.headline else None
    metrics = list(dict.fromkeys(metrics + ([headline] if headline else [])))
    check_run_options([c.spec for c in cells], settings.options, list(settings.options))  # before any work
    # the depth evaluate() scores at (deep enough for every cut-off), and the depth base runs are stored at
    depth = max(settings.depth, max(settings.k), *(m.k for m in metrics if m.k is not None))
    deepest = max([depth, *(c.rerank for c in cells)])
    base_depth = max(deepest, HYBRID_PART_DEPTH if any(c.retriever == "hybrid" for c in cells) else 0)
    questions = {q.id: q.question for q in golden}
    return Plan(grid=grid, cells=cells, golden=golden, settings=settings, metrics=metrics, headline=headline,
                depth=depth, base_depth=base_depth, workspace=workspace, cache=SweepCache(workspace),
                executor=executor, progress=progress, questions=questions,
                questions_key=questions_fingerprint(questions),
                latency_ids=latency_sample(list(questions), seed=settings.seed))


def _chunks(plan: Plan, corpus: Corpus) -> None:
    started = time.perf_counter()
    fingerprint = corpus_fingerprint(corpus)
    for chunking in plan.grid.chunking:
        passages, cached = plan.cache.chunks(corpus, fingerprint, chunking)
        plan.passages[chunking] = passages
        plan.passages_key[chunking] = passages_fingerprint(passages)
        plan.count("chunks", "cached" if cached else "computed")
    plan.corpus = corpus
    plan.wall["chunks"] = time.perf_counter() - started


def _base_runs(plan: Plan) -> None:
    """Stage 3 (and the embeddings it needs, stage 2): every (chunking, bm25 | dense:MODEL) once."""
    needed = sorted({(c.chunking, part) for c in plan.cells for part in c.parts})
    keys = {n: run_key(n[1], passages=plan.passages_key[n[0]], questions=plan.questions_key, depth=plan.base_depth,
                       options=plan.settings.options) for n in needed}
    missing = []
    for n in needed:
        stored = plan.cache.get_run(keys[n])
        if stored is None:
            missing.append(n)
        else:
            plan.base[n] = stored
            plan.count("runs", "cached")
    plan.base_keys = keys
    if not missing:
        return
    started = time.perf_counter()
    dense = [(spec[len("dense:"):], chunking) for chunking, spec in missing if spec.startswith("dense:")]
    embed_stage(plan, [(m, retrieval_texts(plan, m, plan.passages[c]), c) for m, c in dense])
    plan.wall["embed"] = plan.wall.get("embed", 0.0) + time.perf_counter() - started
    _say(plan.progress, f"goldeval sweep: searching {len(missing)} run(s) on {getattr(plan.executor, 'description', '')}")
    started = time.perf_counter()
    tasks = [RunTask(spec, plan.workspace_path, plan.base_depth, plan.latency_ids,
                     corpus_key=plan.passages_key[chunking][:16], options=dict(plan.settings.options),
                     threads=plan.executor.threads) for chunking, spec in missing]
    runs = _compute(plan, tasks, [chunking for chunking, _ in missing])
    for n, stored in zip(missing, runs, strict=True):
        plan.cache.put_run(keys[n], stored)
        plan.base[n] = stored
        plan.computed.add(n)
    plan.wall["search"] = plan.wall.get("search", 0.0) + time.perf_counter() - started


def _rerank_runs(plan: Plan) -> None:
    """Stage 4: each reranking cell's base run (a stored run, or a fusion of two), then the reranker."""
    cells = [c for c in plan.cells if c.rerank]
    missing: list[tuple[Cell, str, StoredRun]] = []
    for cell in cells:
        base = plan.base_run(cell, max(plan.depth, cell.rerank))
        key = run_key(cell.spec, passages=plan.passages_key[cell.chunking], questions=plan.questions_key,
                      depth=plan.depth, options=plan.settings.options, base=run_content(base))
        stored = plan.cache.get_run(key)
        if stored is None:
            missing.append((cell, key, base))
        else:
            plan.reranked[cell] = stored
            plan.count("runs", "cached")
    if not missing:
        return
    started = time.perf_counter()
    by_model: dict[str, list[Passage]] = {}
    for cell, _, base in missing:
        if cell.reranker and cell.reranker.startswith("dense:"):  # a bi-encoder reranker embeds its candidates
            ids = {pid for hits in base.results.values() for pid, _ in hits[: cell.rerank]}
            by_model.setdefault(cell.reranker[len("dense:"):], []).extend(
                p for p in plan.passages[cell.chunking] if p.id in ids)
    embed_stage(plan, [(m, passages_texts(passages), None) for m, passages in by_model.items()])
    plan.wall["embed"] = plan.wall.get("embed", 0.0) + time.perf_counter() - started
    started = time.perf_counter()
    tasks = [RunTask(cell.spec, plan.workspace_path, plan.depth, plan.latency_ids,
                     corpus_key=plan.passages_key[cell.chunking][:16], options=dict(plan.settings.options),
                     built={cell.base_spec: base}, threads=plan.executor.threads) for cell, _, base in missing]
    runs = _compute(plan, tasks, [cell.chunking for cell, _, _ in missing])
    for (cell, key, _), stored in zip(missing, runs, strict=True):
        plan.cache.put_run(key, stored)
        plan.reranked[cell] = stored
        plan.computed.add(cell)
    plan.wall["search"] = plan.wall.get("search", 0.0) + time.perf_counter() - started


def _compute(plan: Plan, tasks: Sequence[RunTask], chunkings: Sequence[str]) -> list[StoredRun]:
    """Run `compute_run` for each task on the executor, the passages and golden set shared once."""
    shared = {c: plan.executor.share(plan.passages[c]) for c in dict.fromkeys(chunkings)}
    golden = plan.executor.share(plan.golden)
    runs = plan.executor.map(compute_run, [(t, shared[c], golden) for t, c in zip(tasks, chunkings, strict=True)])
    for run in runs:
        plan.count("runs", "computed")
        plan.count("runs", "questions_searched", len(plan.questions))
        # a retriever embedding for itself means the embed stage missed its texts (0 when they agree)
        plan.count("embeddings", "embedded_while_searching", int(run.cost.get("embedded") or 0))
    return runs


def _identity(plan: Plan, corpus: Corpus, golden: GoldenSet, executor: Executor) -> dict[str, Any]:
    return {
        "corpus": {"path": corpus.path, "name": corpus.name, "n_documents": len(corpus),
                   "fingerprint": corpus_fingerprint(corpus)},
        "golden": {"path": golden.path, "n_questions": len(golden), "n_answerable": len(golden.answerable),
                   "n_off_topic": len(golden.off_topic), "fingerprint": golden.fingerprint(), "version": golden.version},
        "goldeval_version": __version__, "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(), "executor": getattr(executor, "description", "this process"),
        "workers": executor.workers, "workspace": str(plan.workspace.root),
    }


def _say(progress: bool, text: str) -> None:
    if progress:
        print(text, file=sys.stderr)

