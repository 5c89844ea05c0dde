"""The grid and the sweep file: what expands to what, and every bad value refused with its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeval.errors import InputError
from goldeval.retrievers.base import declared_options
from goldeval.sweep import Grid, grid_from_mapping, load_sweep_file

FULL = Grid(chunking=("none", "600:100"), retriever=("bm25", "dense", "hybrid"), model=("minilm-l3", "wordllama"),
            fusion=("rrf", "norm"), weight=(0.3, 0.7), rerank=(0, 20), reranker="dense:minilm-l3")


def test_each_dial_multiplies_only_the_cells_it_applies_to() -> None:
    cells = FULL.cells()
    # per chunking and rerank: bm25 1 + dense 2 models + hybrid 2 models x 2 fusions x 2 weights = 11
    assert len(cells) == 2 * 2 * 11
    assert {c.model for c in cells if c.retriever == "bm25"} == {None}
    assert {c.weight for c in cells if c.retriever == "dense"} == {None}
    assert len({c.label for c in cells}) == len(cells)


def test_every_cell_is_a_spec_goldeval_reads() -> None:
    for cell in FULL.cells():
        resolved = declared_options(cell.spec, {})
        assert resolved and resolved[0].spec == cell.spec
    cell = next(c for c in FULL.cells() if c.retriever == "hybrid" and c.rerank)
    assert cell.spec == f"rerank:(hybrid:bm25+dense:{cell.model}?method={cell.fusion}&weight={cell.weight:g})>dense:minilm-l3?top=20"
    assert declared_options(cell.spec, {})[1].values["weight"] == cell.weight


def test_values_are_normalised() -> None:
    grid = grid_from_mapping({"chunking": ["600", "none"], "weight": ["0.5", "equal"], "rerank": [0, "10"],
                              "retriever": ["HYBRID"], "model": ["wordllama"]})
    assert grid.chunking == ("600:150", "none") and grid.weight == (0.5, None) and grid.rerank == (0, 10)
    assert grid.retriever == ("hybrid",)
    assert grid.cells()[0].label == "600:150 · hybrid wordllama rrf w=0.5"
    assert grid.cells()[1].label == "600:150 · hybrid wordllama rrf w=0.5 · rerank 10"
    assert grid.cells()[2].label == "600:150 · hybrid wordllama rrf equal"


@pytest.mark.parametrize(("data", "match"), [
    ({"chunks": ["none"]}, r"unknown dial 'chunks'; did you mean 'chunking'\?"),
    ({"weight": [1.5]}, r"weight 1.5 is outside \[0, 1\]"),
    ({"weight": ["heavy"]}, r"weight 'heavy' is not a number"),
    ({"retriever": ["splade"]}, r"retriever 'splade' is not one of bm25, dense, hybrid"),
    ({"fusion": ["max"]}, r"fusion 'max' is not one of rrf, norm"),
    ({"model": ["minilm-l4"]}, r"unknown model 'minilm-l4'; did you mean 'minilm-l3'\?"),
    ({"rerank": [-1]}, r"rerank -1 is not a whole number >= 0"),
    ({"chunking": ["big"]}, r"cannot read chunking spec 'big'"),
    ({"weight": [0.3, 0.3]}, r"weight lists a value twice"),
])
def test_bad_dials_are_refused(data: dict[str, object], match: str) -> None:
    with pytest.raises(InputError, match=match):
        grid_from_mapping(data)


def test_check_refuses_what_cannot_run() -> None:
    with pytest.raises(InputError, match="dense and hybrid retrievers need a model"):
        Grid(retriever=("dense",)).check()
    with pytest.raises(InputError, match="expands to 44 configurations, more than 10") as err:
        FULL.check(max_cells=10)
    assert "--max-cells 44" in str(err.value)


def test_sweep_file(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(
        'corpus = "data/corpus.jsonl"\ngolden = "/abs/golden.jsonl"\nk = [10, 1, 5]\nheadline = "ndcg@10"\n'
        '[grid]\nchunking = ["none", "400:50"]\nretriever = ["hybrid"]\nmodel = ["wordllama"]\nweight = [0.2, 0.8]\n'
        '[options]\nk1 = 1.2\n', encoding="utf-8")
    loaded = load_sweep_file(tmp_path / "s.toml")
    assert loaded.settings.corpus == tmp_path / "data/corpus.jsonl"  # relative to the file
    assert loaded.settings.golden == Path("/abs/golden.jsonl")
    assert loaded.settings.k == (1, 5, 10) and loaded.settings.headline == "ndcg@10"
    assert loaded.settings.options == {"k1": 1.2}
    assert len(loaded.grid.cells()) == 4


@pytest.mark.parametrize(("text", "match"), [
    ('corpus = "x"\nworkers = 2\n', r"s.toml: unknown key 'workers'"),
    ('k = [0]\n', r"k needs positive integers"),
    ('depth = "deep"\n', r"depth must be a whole number between 1 and 10,000, got deep"),
    ('level = "passage"\n', r"level must be doc or chunk"),
    ('[grid]\nweight = [2]\n', r"s.toml: \[grid\]: weight 2 is outside \[0, 1\]"),
    ('corpus = \n', r"s.toml: sweep file is not valid TOML"),
])
def test_bad_sweep_files_name_the_file(tmp_path: Path, text: str, match: str) -> None:
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=match):
        load_sweep_file(tmp_path / "s.toml")
