"""Fusion: RRF and normalised score fusion, by hand and against ranx; the weight sweep."""

from __future__ import annotations

import random

import pytest

from goldeval.errors import InputError
from goldeval.retrievers.fusion import fuse, minmax, norm_fusion, rrf, sweep_fusion, zscore
from goldeval.run import Run


def _runs() -> tuple[Run, Run]:
    a = Run.from_scores("a", {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d9": 1.0}})
    b = Run.from_scores("b", {"q1": {"d3": 0.9, "d1": 0.5}})
    return a, b


def test_rrf_by_hand() -> None:
    a, b = _runs()
    fused = rrf([a, b], k=60)
    assert [d for d, _ in fused.results["q1"]] == ["d1", "d3", "d2"]
    scores = dict(fused.results["q1"])
    assert scores["d1"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["d3"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["d2"] == pytest.approx(1 / 62)
    assert fused.results["q2"] == [("d9", pytest.approx(1 / 61))]


def test_weighted_rrf_by_hand() -> None:
    a, b = _runs()
    scores = dict(rrf([a, b], k=10, weights=[2.0, 1.0]).results["q1"])
    assert scores["d2"] == pytest.approx(2 / 12)
    assert scores["d3"] == pytest.approx(2 / 13 + 1 / 11)


def test_norm_fusion_ties_follow_the_ranking_rule() -> None:
    a, b = _runs()
    fused = norm_fusion([a, b], weights=[0.5, 0.5])
    # minmax: a -> d1 1, d2 .5, d3 0; b -> d3 1, d1 0. d1 and d3 tie at .5: id descending first.
    assert fused.results["q1"] == [("d3", 0.5), ("d1", 0.5), ("d2", 0.25)]


def test_normalisers() -> None:
    assert minmax([("x", 2.0), ("y", 2.0)]) == {"x": 1.0, "y": 1.0}
    assert minmax([]) == {}
    z = zscore([("x", 1.0), ("y", 3.0)])
    assert z == {"x": pytest.approx(-1.0), "y": pytest.approx(1.0)}


def test_inputs_are_not_mutated() -> None:
    a, b = _runs()
    before = (a.to_dict(), b.to_dict())
    fuse([a, b], "norm", weights=[0.3, 0.7])
    fuse([a, b], "rrf")
    assert (a.to_dict(), b.to_dict()) == before


def _random_run(name: str, rng: random.Random) -> Run:
    return Run.from_scores(
        name, {f"q{q}": {f"d{d}": round(rng.random(), 2) for d in rng.sample(range(40), 15)} for q in range(5)}
    )


@pytest.mark.bench
def test_rrf_matches_ranx() -> None:
    from ranx import Run as RanxRun
    from ranx import fuse as ranx_fuse

    rng = random.Random(7)
    a, b = _random_run("a", rng), _random_run("b", rng)
    ours = rrf([a, b], k=60)
    theirs = ranx_fuse([RanxRun(a.to_dict()), RanxRun(b.to_dict())], method="rrf", params={"k": 60})
    for qid, hits in ours.results.items():
        assert dict(hits) == pytest.approx(dict(theirs.to_dict()[qid]))


@pytest.mark.bench
def test_norm_fusion_of_three_runs_matches_ranx_wsum() -> None:
    """Issue 23 rewrote the weighted sum (a column per run, then sum() per passage): ranx's wsum over
    min-max scores, three runs with passages one run lacks (they add 0), as the outside reference."""
    from ranx import Run as RanxRun
    from ranx import fuse as ranx_fuse

    rng = random.Random(11)
    runs = [_random_run(name, rng) for name in "abc"]
    weights = [0.2, 0.5, 0.3]
    ours = norm_fusion(runs, weights=weights)
    theirs = ranx_fuse([RanxRun(r.to_dict()) for r in runs], norm="min-max", method="wsum",
                       params={"weights": weights}).to_dict()
    assert set(ours.results) == set(theirs)
    for qid, hits in ours.results.items():
        assert dict(hits) == pytest.approx(theirs[qid], rel=1e-12, abs=1e-12)


def test_sweep_refuses_nothing_valid_and_rescores_without_querying() -> None:
    a, b = _runs()
    sweep = sweep_fusion(a, b, [0.0, 0.5, 1.0], method="norm")
    assert list(sweep) == [0.0, 0.5, 1.0]
    assert [d for d, _ in sweep[1.0].results["q1"]][:1] == ["d1"]  # A alone
    assert [d for d, _ in sweep[0.0].results["q1"]][:1] == ["d3"]  # B alone
    assert sweep[0.5].to_dict() == norm_fusion([a, b], weights=[0.5, 0.5]).to_dict()
    assert sweep_fusion(a, b, [0.25], method="rrf")[0.25].to_dict() == rrf([a, b], weights=[0.25, 0.75]).to_dict()


def test_fusion_errors_name_the_problem() -> None:
    a, b = _runs()
    with pytest.raises(InputError, match="unknown fusion method 'max'"):
        fuse([a, b], "max")
    with pytest.raises(InputError, match="3 weights for 2 runs"):
        rrf([a, b], weights=[1, 1, 1])
    with pytest.raises(InputError, match="outside \\[0, 1\\]"):
        sweep_fusion(a, b, [1.5])
    with pytest.raises(InputError, match="unknown score normalisation 'l2'"):
        norm_fusion([a, b], norm="l2")
    with pytest.raises(InputError, match="must be >= 0"):
        rrf([a, b], weights=[-1, 1])


def test_errors_of_parts_are_carried() -> None:
    a, b = _runs()
    b.errors["q2"] = "timeout"
    assert rrf([a, b]).errors == {"q2": "b: timeout"}
