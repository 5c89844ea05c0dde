"""goldeval sweep end to end on a small corpus with real models: the numbers equal goldeval.evaluate's,
each stage is stored by content (a second run, a new fusion weight or a new k searches and embeds
nothing), the tests against the best reuse compare_values and Holm, and the Pareto fronts hold."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from goldeval.corpus.chunking import parse_chunk_spec
from goldeval.evaluation import evaluate
from goldeval.metrics.definitions import Metric
from goldeval.stats.compare import compare_values
from goldeval.stats.paired import holm
from goldeval.sweep import Grid, Settings, SweepResult, sweep
from goldeval.sweep.cost import COST_AXES
from sweep_fixtures import tiny_corpus, tiny_golden

GRID = Grid(chunking=("none", "120:30"), retriever=("bm25", "hybrid"), model=("wordllama",), fusion=("norm",),
            weight=(0.3, 0.7))
SETTINGS = Settings(k=(1, 3, 5), resamples=1000, headline="ndcg@5")


def run(workspace: Path, grid: Grid = GRID, settings: Settings = SETTINGS, **kw: object) -> SweepResult:
    return sweep(grid, tiny_golden(), corpus=tiny_corpus(), settings=settings, workspace=workspace,
                 record_history=False, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SweepResult]:
    workspace = tmp_path_factory.mktemp("sweep") / "ws"
    return workspace, run(workspace)


@pytest.mark.models  # the grid's dense stage is wordllama
def test_grid_expands_where_dials_apply(first: tuple[Path, SweepResult]) -> None:
    _, result = first
    # 2 chunkings x (bm25 + hybrid x 2 weights): a weight multiplies hybrids only
    assert len(result.cells) == 6
    assert sorted(c.cell.spec for c in result.cells if c.cell.chunking == "none") == [
        "bm25", "hybrid:bm25+dense:wordllama?method=norm&weight=0.3", "hybrid:bm25+dense:wordllama?method=norm&weight=0.7"]


@pytest.mark.models  # the grid's dense stage is wordllama
def test_numbers_equal_evaluate_of_the_same_spec(first: tuple[Path, SweepResult]) -> None:
    workspace, result = first
    for cell in result.cells:
        card = evaluate(cell.cell.spec, tiny_golden(), corpus=tiny_corpus(), k=(1, 3, 5), headline="ndcg@5",
                        chunking=None if cell.cell.chunking == "none" else cell.cell.chunking, workspace=workspace)
        assert card.retrievers[0].metrics == cell.metrics, cell.label


@pytest.mark.models  # the grid's dense stage is wordllama
def test_first_run_searches_each_base_run_once(first: tuple[Path, SweepResult]) -> None:
    _, result = first
    runs = result.stages["runs"]
    # bm25 and dense:wordllama per chunking; the four hybrids fuse those runs
    assert runs == {"cached": 0, "computed": 4, "questions_searched": 4 * len(tiny_golden())}
    passages = len(tiny_corpus().passages(None)) + len(tiny_corpus().passages(parse_chunk_spec("120:30")))
    # each distinct passage text and question once (a short document is its own only chunk: one text)
    assert result.stages["embeddings"]["texts_embedded"] <= passages + len(tiny_golden())
    assert result.stages["embeddings"]["texts_embedded"] > len(tiny_golden())
    assert result.stages["embeddings"]["embedded_while_searching"] == 0
    assert not any(c.cached for c in result.cells)


@pytest.mark.models  # the grid's dense stage is wordllama
def test_second_run_is_served_from_cache(first: tuple[Path, SweepResult]) -> None:
    workspace, result = first
    again = run(workspace)
    assert again.stages["runs"] == {"cached": 4, "computed": 0, "questions_searched": 0}
    assert again.stages["embeddings"]["texts_embedded"] == 0
    assert again.stages["chunks"] == {"cached": 2, "computed": 0}
    assert all(c.cached for c in again.cells)
    assert [(c.label, c.metrics, c.intervals) for c in again.cells] == [(c.label, c.metrics, c.intervals) for c in result.cells]
    # costs are a configuration's, measured when its runs were made: the cache hit reports the same
    assert [c.cost.index_seconds for c in again.cells] == [c.cost.index_seconds for c in result.cells]


@pytest.mark.models  # the grid's dense stage is wordllama
def test_second_run_reads_its_statistics_back(first: tuple[Path, SweepResult], monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: an unchanged re-run resampled 10,000 times again; its statistics are now kept by content."""
    workspace, result = first
    assert result.stages["statistics"] == {"computed": 1}

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("statistics computed again on an unchanged sweep")

    for name in ("fill_intervals", "test_against_best"):
        monkeypatch.setattr(f"goldeval.sweep.score.{name}", refuse)
    monkeypatch.setattr("goldeval.stats.bootstrap.resample_counts", refuse)
    again = run(workspace)
    assert again.stages["statistics"] == {"cached": 1}
    assert again.best == result.best

    def shown(r: SweepResult) -> list[object]:
        return [(c.label, c.metrics, c.intervals, c.vs_best, c.scorecard.retrievers[0].intervals)  # type: ignore[union-attr]
                for c in r.cells]

    assert shown(again) == shown(result)
    assert json.dumps(again.statistics) == json.dumps(result.statistics)
    monkeypatch.undo()
    other = run(workspace, settings=Settings(k=(1, 3, 5), resamples=1000, headline="ndcg@5", seed=1))
    assert other.stages["statistics"] == {"computed": 1}  # a new seed is a new key
    assert [c.intervals for c in other.cells] != [c.intervals for c in result.cells]


@pytest.mark.models  # the grid's dense stage is wordllama
def test_new_weight_and_new_k_search_nothing(first: tuple[Path, SweepResult]) -> None:
    workspace, _ = first
    grid = Grid(chunking=("none",), retriever=("hybrid",), model=("wordllama",), fusion=("norm", "rrf"),
                weight=(0.3, 0.5, 0.9))
    refused = run(workspace, grid, Settings(k=(1, 2, 3, 5, 7), resamples=1000))
    assert refused.stages["runs"]["computed"] == 0 and refused.stages["embeddings"]["texts_embedded"] == 0
    assert len(refused.cells) == 6 and Metric("hit", 7) in refused.cells[0].metrics


@pytest.mark.models  # the grid's dense stage is wordllama
def test_new_chunking_searches_only_its_runs(first: tuple[Path, SweepResult]) -> None:
    workspace, _ = first
    grid = Grid(chunking=("none", "200:40"), retriever=("bm25",))
    result = run(workspace, grid)
    assert result.stages["runs"] == {"cached": 1, "computed": 1, "questions_searched": len(tiny_golden())}


@pytest.mark.models  # the grid's dense stage is wordllama
def test_against_the_best_is_compare_values_with_holm(first: tuple[Path, SweepResult]) -> None:
    _, result = first
    primary = result.primary
    assert primary == Metric("ndcg", 5)
    best = result.cells[0]
    assert best.vs_best is None and best.label == result.best
    assert all(best.metrics[primary] >= c.metrics[primary] for c in result.cells)

    def values(cell: object) -> np.ndarray:
        return np.array([q.metrics[primary] for q in cell.scorecard.retrievers[0].answerable])  # type: ignore[attr-defined]

    raw = []
    for other in result.cells[1:]:
        direct = compare_values({best.label: {primary: values(best)}, other.label: {primary: values(other)}},
                                metrics=[primary], resamples=1000).results[0]
        assert other.vs_best is not None and other.vs_best.p == direct.p and other.vs_best.diff == direct.diff
        # all configurations in one comparison (issue 23) draw the same resamples as each one alone
        assert other.vs_best.ci == (direct.ci[0], direct.ci[1]), other.label
        raw.append(direct.p)
    adjusted = holm(raw)
    for other, p_holm in zip(result.cells[1:], adjusted, strict=True):
        assert other.vs_best is not None and other.vs_best.p_holm == pytest.approx(p_holm)
        assert other.vs_best.within_noise == (p_holm >= 0.05)
    assert result.statistics["within_noise"] == sum(c.vs_best.within_noise for c in result.cells[1:])  # type: ignore[union-attr]


@pytest.mark.models  # the grid's dense stage is wordllama
def test_pareto_fronts_are_the_non_dominated_configurations(first: tuple[Path, SweepResult]) -> None:
    _, result = first
    primary = result.primary
    for axis in COST_AXES:
        points = [(c.label, c.cost.value(axis), c.metrics[primary]) for c in result.cells if c.cost.value(axis) is not None]
        dominated = {a for a, ca, qa in points for _, cb, qb in points if cb <= ca and qb >= qa and (cb < ca or qb > qa)}
        assert set(result.pareto[axis]) == {label for label, _, _ in points} - dominated, axis
        assert all((axis in c.pareto) == (c.label in result.pareto[axis]) for c in result.cells)


@pytest.mark.models  # the grid's dense stage is wordllama
def test_costs(first: tuple[Path, SweepResult]) -> None:
    _, result = first
    for c in result.cells:
        cost = c.cost
        assert cost.latency_questions == len(tiny_golden())
        assert 0 < cost.latency_p50_ms <= cost.latency_p95_ms  # type: ignore[operator]
        assert cost.index_bytes and cost.index_bytes > 0 and cost.index_seconds is not None
        if c.cell.retriever == "bm25":
            assert cost.embedding_seconds == 0.0
        else:
            assert cost.embedding_seconds is not None and cost.embedding_seconds > 0
    by = {c.label: c for c in result.cells}
    bm25, hybrid = by["none · bm25"].cost, by["none · hybrid wordllama norm w=0.3"].cost
    # a hybrid holds both indexes and waits for both parts, then fuses
    assert hybrid.index_bytes > bm25.index_bytes  # type: ignore[operator]
    assert hybrid.latency_p50_ms > bm25.latency_p50_ms  # type: ignore[operator]


@pytest.mark.models  # the grid's dense stage is wordllama
def test_heatmaps_hold_the_best_value_of_each_square(first: tuple[Path, SweepResult]) -> None:
    _, result = first
    maps = {(m["rows"], m["cols"]): m for m in result.heatmaps}
    # one model and one fusion (None where they do not apply is no second value): no axis of theirs (issue 24)
    assert set(maps) == {("chunking", "retriever"), ("chunking", "weight"), ("retriever", "weight")}
    m = maps[("chunking", "weight")]
    assert m["row_values"] == ["none", "120:30"] and m["col_values"] == [0.3, 0.7, None]
    for i, chunking in enumerate(m["row_values"]):
        for j, weight in enumerate(m["col_values"]):
            matching = [c for c in result.cells if c.cell.chunking == chunking and c.cell.weight == weight]
            assert m["values"][i][j] == max(c.metrics[result.primary] for c in matching)


@pytest.mark.models  # the grid's dense stage is wordllama
def test_json_is_plain_and_complete(first: tuple[Path, SweepResult]) -> None:
    _, result = first
    data = json.loads(json.dumps(result.to_dict()))
    assert data["schema"] == "goldeval.sweep/1" and data["primary"] == "ndcg@5" and data["best"] == result.best
    assert data["varying"] == ["chunking", "retriever", "model", "fusion", "weight"]
    cell = data["cells"][1]
    assert set(cell) >= {"label", "spec", "dials", "metrics", "intervals", "vs_best", "cost", "pareto", "cached", "config"}
    assert cell["intervals"]["ndcg@5"][0] <= cell["metrics"]["ndcg@5"] <= cell["intervals"]["ndcg@5"][1]


def test_every_cell_lands_in_the_run_history(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    grid = Grid(chunking=("none",), retriever=("bm25",))
    result = sweep(grid, tiny_golden(), corpus=tiny_corpus(), settings=SETTINGS, workspace=workspace)
    assert result.stages["history"]["recorded"]
    with sqlite3.connect(workspace / "history.sqlite") as db:
        names = [row[0] for row in db.execute("SELECT name FROM retrievers ORDER BY run_id")]
    assert names == [c.label for c in result.cells]


@pytest.mark.models  # the rerank stage embeds with wordllama
def test_rerank_reads_its_stored_base_and_caches_its_own_run(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    grid = Grid(chunking=("none",), retriever=("bm25", "hybrid"), model=("wordllama",), fusion=("rrf",),
                rerank=(0, 5), reranker="dense:minilm-l3")
    result = run(workspace, grid)
    assert len(result.cells) == 4 and result.stages["runs"]["computed"] == 4  # bm25, dense, 2 reranks
    by = {c.cell.spec: c for c in result.cells}
    spec = "rerank:(hybrid:bm25+dense:wordllama?method=rrf)>dense:minilm-l3?top=5"
    card = evaluate(spec, tiny_golden(), corpus=tiny_corpus(), k=(1, 3, 5), headline="ndcg@5", workspace=workspace)
    assert card.retrievers[0].metrics == by[spec].metrics
    again = run(workspace, grid)
    assert again.stages["runs"]["computed"] == 0 and again.stages["embeddings"]["texts_embedded"] == 0
    assert [c.metrics for c in again.cells] == [c.metrics for c in result.cells]
    # reranking costs time on top of its base
    assert by[spec].cost.latency_p50_ms > by["hybrid:bm25+dense:wordllama?method=rrf"].cost.latency_p50_ms  # type: ignore[operator]
