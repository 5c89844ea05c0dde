"""Hybrid retrieval: the spec grammar, reuse of built parts, fusion over real retrievers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext, build_retriever, register
from goldeval.retrievers.fusion import norm_fusion, rrf, sweep_fusion
from goldeval.retrievers.hybrid import HybridRetriever, split_top, unwrap
from goldeval.run import Run
from goldeval.types import QuestionId


class Fixed:
    """A retriever returning fixed scores, counting its calls."""

    def __init__(self, name: str, scores: dict[str, dict[str, float]]) -> None:
        self.name, self.scores, self.calls = name, scores, 0

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        self.calls += 1
        return Run.from_scores(self.name, {q: self.scores.get(q, {}) for q in queries}).top(top_k)


A = Fixed("a", {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
B = Fixed("b", {"q1": {"d3": 0.9, "d1": 0.5}})


def build_fixed(rest: str, ctx: BuildContext) -> Fixed:
    return {"a": A, "b": B}[rest.partition("?")[0]]


register("fixed", f"{__name__}:build_fixed")


def _ctx(tmp_path: Path) -> BuildContext:
    return BuildContext([Passage(d, d, d) for d in ("d1", "d2", "d3")], workspace=tmp_path)


def test_rrf_default_and_reuse_of_built_parts(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    a = build_retriever("fixed:a", ctx)
    hybrid = build_retriever("hybrid:fixed:a+fixed:b", ctx)
    assert isinstance(hybrid, HybridRetriever)
    assert hybrid.parts[0] is a and "fixed:b" in ctx.built
    run = hybrid.search({"q1": "x"}, top_k=2)
    assert run.name == "hybrid:fixed:a+fixed:b"
    assert run.to_dict() == rrf([A.search({"q1": "x"}, top_k=100), B.search({"q1": "x"}, top_k=100)]).top(2).to_dict()
    assert [d for d, _ in run.results["q1"]] == ["d1", "d3"]


def test_norm_with_weight(tmp_path: Path) -> None:
    hybrid = build_retriever("hybrid:fixed:a+fixed:b?method=norm&weight=0.25", _ctx(tmp_path))
    run = hybrid.search({"q1": "x"}, top_k=3)
    # a: d1 1, d2 .5, d3 0 (x .25); b: d3 1, d1 0 (x .75) -> d3 .75, d1 .25, d2 .125
    assert run.results["q1"] == [("d3", 0.75), ("d1", 0.25), ("d2", 0.125)]


def test_sweep_uses_the_cached_part_runs(tmp_path: Path) -> None:
    hybrid = build_retriever("hybrid:fixed:a+fixed:b?method=norm", _ctx(tmp_path))
    assert isinstance(hybrid, HybridRetriever)
    hybrid.search({"q1": "x"}, top_k=3)
    calls = (A.calls, B.calls)
    sweep = sweep_fusion(*hybrid.last_runs, [0.0, 0.25, 1.0], method="norm")
    assert (A.calls, B.calls) == calls
    assert sweep[0.25].to_dict() == norm_fusion(hybrid.last_runs, weights=[0.25, 0.75]).to_dict()


def test_parenthesised_parts_keep_their_own_options(tmp_path: Path) -> None:
    assert split_top("(bm25?k1=1.2)+dense:m?method=norm", "+") == ["(bm25?k1=1.2)", "dense:m?method=norm"]
    assert unwrap(" (bm25?k1=1.2) ") == "bm25?k1=1.2"
    hybrid = build_retriever("hybrid:(fixed:a?x=1)+fixed:b?method=rrf&k=10", _ctx(tmp_path))
    assert isinstance(hybrid, HybridRetriever)
    assert hybrid.params == {"k": 10.0}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("hybrid:fixed:a", "needs two or more retrievers joined by '\\+'"),
        ("hybrid:fixed:a+", "needs two or more retrievers"),
        ("hybrid:fixed:a+fixed:b?method=max", "option method='max' .* is not one of rrf, norm"),
        ("hybrid:fixed:a+fixed:b?wieght=0.3", "unknown option\\(s\\) wieght"),
        ("hybrid:fixed:a+fixed:b?weight=1.3", "weight=1.3 .* is outside \\[0, 1\\]"),
        ("hybrid:fixed:a+fixed:b+fixed:a?weight=0.3", "weight= is for two parts"),
        ("hybrid:fixed:a+fixed:b?weights=1,2,3", "3 weights for 2 parts"),
        ("hybrid:fixed:a+fixed:b?method=norm&k=5", "option k is for method=rrf"),
        ("hybrid:(fixed:a+fixed:b", "unbalanced '\\('"),
    ],
)
def test_spec_errors(spec: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=message):
        build_retriever(spec, _ctx(tmp_path))


@pytest.mark.models
def test_bm25_plus_dense_on_real_text(tmp_path: Path) -> None:
    texts = {
        "aero/plate": "The boundary layer on a flat plate in supersonic flow thickens downstream.",
        "food/bread": "Bake the bread at two hundred degrees for forty minutes.",
        "music/piano": "Practise piano scales slowly with a metronome.",
        "food/soup": "Simmer the onion soup slowly and season it with thyme.",
    }
    PASSAGES = [Passage(pid, pid, text) for pid, text in texts.items()]
    QUERIES = {"q1": "supersonic flat plate boundary layer", "q2": "how long to bake bread", "q3": "piano practice"}
    ctx = BuildContext(PASSAGES, workspace=tmp_path)
    run = build_retriever("hybrid:bm25+dense:minilm", ctx).search(QUERIES, top_k=3)
    assert set(ctx.built) == {"bm25", "dense:minilm", "hybrid:bm25+dense:minilm"}
    assert [run.results[q][0][0] for q in QUERIES] == ["aero/plate", "food/bread", "music/piano"]


@pytest.mark.models
def test_eval_command_runs_all_four_kinds_side_by_side(tmp_path: Path) -> None:
    """`goldeval eval --retriever bm25 --retriever dense:... --retriever hybrid:... --retriever rerank:...`."""
    import json

    from goldeval.cli import main

    root = Path(__file__).resolve().parents[1] / "examples" / "data"
    specs = ["bm25", "dense:minilm-l3", "hybrid:bm25+dense:minilm-l3?method=norm&weight=0.5",
             "rerank:hybrid:bm25+dense:minilm-l3>dense:minilm?top=10"]
    out = tmp_path / "results.json"
    argv = ["eval", "--corpus", str(root / "corpus"), "--golden", str(root / "golden_example.jsonl"),
            "--no-stats", "--quiet", "--workspace", str(tmp_path / "ws"), "--json", str(out)]
    for spec in specs:
        argv += ["--retriever", spec]
    assert main(argv) == 0
    names = [r["name"] for r in json.loads(out.read_text())["retrievers"]]
    assert names == specs
    # The second run finds every vector in the workspace cache.
    assert main(argv) == 0
    entries = list((tmp_path / "ws" / "embeddings").glob("*/*.gsemb"))
    assert len(entries) == len({e.parent for e in entries}) * 2  # per model: one passage entry, one query entry
