"""Stages 5 and 6: score every configuration from stored runs, then compare them.

Each configuration is built by goldeval's own factories (`build_retriever`) in a context whose base
retrievers are its stored runs, so a hybrid fuses stored runs and a reranked cell reads its stored
reranked run; `goldeval.evaluate` scores it into the configuration's own Scorecard. Intervals come from
`goldeval.stats.annotate.fill_intervals` over all configurations at once (one set of resampled
questions, so the intervals line up); the rest from `goldeval.sweep.analysis`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from goldeval.corpus.model import Corpus, Passage
from goldeval.evaluation import EvalSettings, evaluate
from goldeval.metrics.definitions import Metric
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.retrievers.options import split_spec
from goldeval.runstore import model_key, source_digest
from goldeval.scorecard.model import Scorecard
from goldeval.stats.annotate import METHOD, fill_intervals
from goldeval.stats.stored import read_kept_stats, stats_key, write_kept_stats
from goldeval.sweep.analysis import heatmaps, pareto_fronts, rank_cells, test_against_best
from goldeval.sweep.cost import (
    Cost,
    add,
    add_latencies,
    api_cost,
    measure_latency,
    percentile,
    rerank_api_cost,
)
from goldeval.sweep.embed import encoder_options
from goldeval.sweep.grid import Cell
from goldeval.sweep.history import record_cells
from goldeval.sweep.model import CellResult, SweepResult, VsBest
from goldeval.sweep.plan import Plan
from goldeval.sweep.stages import CachedRetriever

INTERVAL_METHOD = METHOD


@dataclass
class _StoredPassages(Corpus):
    """The corpus, whose passages under each chunking are the stored ones (not chunked again per cell)."""

    stored: dict[str, Sequence[Passage]] = field(default_factory=dict)

    def passages(self, chunking: object | None = None) -> Sequence[Passage]:
        return self.stored["none" if chunking is None else str(chunking)]


def score_cells(plan: Plan, *, record_history: bool) -> SweepResult:
    started = time.perf_counter()
    assert plan.corpus is not None  # the chunks stage ran
    corpus = _StoredPassages(plan.corpus.documents, plan.corpus.name, plan.corpus.path, [], stored=dict(plan.passages))
    contexts = {c: plan.context(c) for c in plan.grid.chunking}
    cells = [_score(plan, cell, contexts[cell.chunking], corpus) for cell in plan.cells]
    cards = [c.scorecard for c in cells if c.scorecard is not None]
    settings = plan.settings
    merged = Scorecard(retrievers=[card.retrievers[0] for card in cards], metrics=cards[0].metrics, k=cards[0].k,
                       depth=cards[0].depth, headline=cards[0].headline)
    primary = cards[0].headline[0]
    ranked = rank_cells(cells, primary)
    best = _statistics(plan, merged, ranked, primary)
    fronts = pareto_fronts(ranked, primary)
    plan.wall["score"] = time.perf_counter() - started
    recorded = record_cells(cards, plan.workspace.root) if record_history else None
    return SweepResult(
        cells=ranked, dials=plan.grid.values(), metrics=list(cards[0].metrics), headline=list(cards[0].headline),
        k=list(cards[0].k), depth=plan.depth, level=settings.level, best=best,
        statistics={"intervals": INTERVAL_METHOD, "confidence": settings.confidence, "alpha": 1 - settings.confidence,
                    "resamples": settings.resamples, "seed": settings.seed, "primary": str(primary),
                    "tests": "each configuration against the best, paired on the same questions "
                             "(exact McNemar for 0/1 metrics, paired randomization otherwise)",
                    "correction": "holm", "n_tests": max(len(ranked) - 1, 0),
                    "within_noise": sum(1 for c in ranked if c.vs_best is not None and c.vs_best.within_noise)},
        pareto=fronts, heatmaps=heatmaps(ranked, primary, plan.grid.values()),
        stages={**plan.counters, "history": recorded, "wall_seconds": {k: round(v, 3) for k, v in plan.wall.items()},
                "reranker": plan.grid.reranker if any(c.rerank for c in plan.cells) else None},
    )


def _statistics(plan: Plan, merged: Scorecard, ranked: list[CellResult], primary: Metric) -> str | None:
    """Intervals for every configuration and each tested against the best; returns the best's label.

    Kept by content as `compare` keeps eval's (`goldeval.stats.stored`): the key is the merged scorecard
    (every per-question value) with the settings and this code's source, so an unchanged re-run reads
    them back and resamples nothing (counted in `stages["statistics"]`)."""
    s = plan.settings
    settings = {"sweep": "intervals and tests against the best", "seed": s.seed, "resamples": s.resamples,
                "confidence": s.confidence, "primary": str(primary), "ranked": [c.label for c in ranked],
                "code": source_digest("sweep/analysis.py", "sweep/score.py", "sweep/model.py")}
    key = stats_key(merged, settings, None, None)
    kept = read_kept_stats(plan.workspace.root, key, lambda d: _parse_kept(d, ranked))
    if kept is not None:
        best, intervals, vs_best = kept
        for cell, shown, tested in zip(ranked, intervals, vs_best, strict=True):
            cell.intervals = shown
            cell.vs_best = tested
            if cell.scorecard is not None:
                cell.scorecard.retrievers[0].intervals = dict(shown)
        plan.count("statistics", "cached")
        return best
    fill_intervals(merged, seed=s.seed, resamples=s.resamples, confidence=s.confidence)
    for cell in ranked:
        cell.intervals = dict(cell.scorecard.retrievers[0].intervals) if cell.scorecard is not None else {}
    best = test_against_best(ranked, primary, seed=s.seed, resamples=s.resamples, confidence=s.confidence)
    plan.count("statistics", "computed")
    write_kept_stats(plan.workspace.root, key, {"best": best, "cells": [
        {"label": c.label, "intervals": {str(m): list(v) for m, v in c.intervals.items()},
         "vs_best": c.vs_best.to_dict() if c.vs_best is not None else None} for c in ranked]})
    return best


def _parse_kept(data: dict[str, Any], ranked: list[CellResult]) -> tuple[
        str | None, list[dict[Metric, tuple[float, float]]], list[VsBest | None]]:  # fmt: skip
    """The kept intervals and tests, each configuration's read whole before any cell changes."""
    rows = data["cells"]
    if [r["label"] for r in rows] != [c.label for c in ranked]:
        raise ValueError("kept sweep statistics are for other configurations")
    intervals = [{m: (float(v[0]), float(v[1])) for m in c.metrics if (v := r["intervals"].get(str(m)))}
                 for c, r in zip(ranked, rows, strict=True)]
    tests = [None if r["vs_best"] is None else _vs_best(r["vs_best"]) for r in rows]
    return data["best"], intervals, tests


def _vs_best(t: dict[str, Any]) -> VsBest:
    return VsBest(diff=float(t["diff"]), ci=(float(t["ci"][0]), float(t["ci"][1])), p=float(t["p"]),
                  p_holm=float(t["p_holm"]), test=str(t["test"]), within_noise=bool(t["within_noise"]),
                  verdict=str(t["verdict"]))


def _score(plan: Plan, cell: Cell, ctx: BuildContext, corpus: _StoredPassages) -> CellResult:
    """Build the configuration over stored runs, time its fusion, and score it with `evaluate`."""
    if cell.rerank:
        ctx.built[cell.spec] = CachedRetriever(plan.reranked[cell])
    retriever = build_retriever(cell.spec, ctx)
    fuse_ms = None
    if cell.retriever == "hybrid":  # the fusion's own time (its parts are stored runs: lookups)
        fuse_ms = measure_latency(build_retriever(cell.base_spec, ctx), plan.questions, plan.latency_ids, plan.depth)
    settings = plan.settings
    card = evaluate({cell.label: retriever}, plan.golden, corpus=corpus, settings=EvalSettings(
        k=settings.k, metrics=plan.metrics, headline=plan.headline, level=settings.level, depth=plan.depth,
        chunking=None if cell.chunking == "none" else cell.chunking, workspace=plan.workspace.root))
    # no options: the retriever is built already, and evaluate() would refuse every --option as declared by
    # no retriever of the run (it checks the specs it builds, and here it builds none)

    result = card.retrievers[0]
    reads = [(cell.chunking, part) for part in cell.parts] + ([cell] if cell.rerank else [])
    return CellResult(cell=cell, metrics=dict(result.metrics), intervals={}, cost=_cost(plan, cell, fuse_ms),
                      config=dict(result.config), cached=not any(r in plan.computed for r in reads),
                      n_errors=result.n_errors, scorecard=card)


def _cost(plan: Plan, cell: Cell, fuse_ms: dict[str, float] | None) -> Cost:
    """Index time and size (summed over the parts), embedding time, latency (parts + fusion + reranker)."""
    parts = [plan.base[(cell.chunking, p)] for p in cell.parts]
    cost = Cost(notes=[])
    cost.index_seconds = add(*(p.cost.get("index_seconds") for p in parts))
    sizes = [p.cost.get("index_bytes") for p in parts]
    cost.index_bytes = None if any(s is None for s in sizes) else int(sum(int(s) for s in sizes if s is not None))
    embedding: list[float | None] = []
    for part in cell.parts:
        if not part.startswith("dense:"):
            embedding.append(0.0)
            continue
        model = part[len("dense:"):]
        record = plan.cache.embedding_time(plan.embedding_key(
            model_key(model, encoder_options(plan, model)["precision"]), cell.chunking))
        embedding.append(float(record["seconds"]) if record else None)
        if record and record.get("estimated"):
            cost.embedding_estimated = True
            cost.notes.append(f"embedding time scaled from the {record['computed']} of {record['texts']} passages "
                              "this sweep embedded (the rest were already in the embedding cache)")
        elif not record:
            cost.notes.append("embedding time unknown: every passage was in the embedding cache before any sweep ran")
    cost.embedding_seconds = add(*embedding)
    _api_cost(plan, cell, cost)
    stages = [p.latency_ms for p in parts] + ([fuse_ms] if fuse_ms is not None else [])
    if cell.rerank:
        stages.append(plan.reranked[cell].latency_ms)
        cost.notes.append(f"reranking {cell.rerank} results with {cell.reranker} is in the latency")
    latency = list(add_latencies(*stages).values())
    cost.latency_p50_ms, cost.latency_p95_ms = percentile(latency, 50), percentile(latency, 95)
    cost.latency_questions = len(latency)
    return cost


def _api_cost(plan: Plan, cell: Cell, cost: Cost) -> None:
    """The tokens and list-price dollars of the cell's API models: an embedding API's passages and questions
    once each (`sweep.cost.api_cost`), a rerank API's questions with their candidates from the base run
    (`sweep.cost.rerank_api_cost`), whatever the caches held."""
    from goldeval.sweep.cache import passages_texts

    questions = list(plan.questions.values())
    prices = plan.settings.options.get("prices")
    prices = str(prices) if prices else None
    found: list[tuple[int, float | None]] = []
    for part in cell.parts:
        if part.startswith("dense:"):
            found.append(api_cost(part[len("dense:"):], passages_texts(plan.passages[cell.chunking]) + questions,
                                  prices))
    if cell.rerank and cell.reranker and cell.reranker.startswith("api:"):
        found.append(rerank_api_cost(split_spec(cell.reranker)[0], _candidates(plan, cell), prices))
    cost.api_tokens = sum(tokens for tokens, _ in found)
    dollars = [d for _, d in found]
    cost.api_dollars = None if None in dollars else float(sum(d for d in dollars if d is not None))
    if cost.api_dollars is None:
        cost.notes.append("an API model of this configuration has no price in the table (data/prices.toml)")


def _candidates(plan: Plan, cell: Cell) -> list[tuple[str, list[str]]]:
    """Each question with the texts of the top `cell.rerank` passages of its base run: what the reranker
    was asked to score (as `RerankRetriever` picks them: ids the passages lack have no text to send)."""
    from goldeval.retrievers.dense import passage_text

    base = plan.base_run(cell, max(plan.depth, cell.rerank))
    texts = {p.id: passage_text(p) for p in plan.passages[cell.chunking]}
    return [(question, [texts[pid] for pid, _ in base.results.get(qid, [])[: cell.rerank] if pid in texts])
            for qid, question in plan.questions.items()]
