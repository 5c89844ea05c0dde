"""`metrics.compute.curve_means` (every k at once, issue 23) gives the mean of each kernel at each k, as
calling the kernel once per k does, on random rankings with graded, judged-not-relevant and unjudged
documents, empty lists, questions with nothing relevant and lists longer than the depth; whatever the
block of questions it sums at once, in numpy and by numba's twin (`curve_kernels`). The ranges of `metrics.judged` too, scored a block at a time."""

from __future__ import annotations

import random

import numpy as np
import pytest

import goldeval.metrics.compute as engine
import goldeval.metrics.judged as judged_module
from goldeval import jit
from goldeval.metrics import curve_kernels
from goldeval.metrics.compute import Judged, compute, curve_means, judge_ranked
from goldeval.metrics.definitions import Metric
from goldeval.metrics.judged import metric_ranges

NAMES = ("hit", "recall", "precision", "ndcg")


def random_judged(seed: int, n: int = 60) -> Judged:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    rankings: dict[str, list[str]] = {}
    for i in range(n):
        docs = [f"d{j}" for j in range(40)]
        qrels[f"q{i}"] = {d: rng.choice([-1, 0, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(0, 7))}
        rankings[f"q{i}"] = rng.sample(docs, rng.choice([0, 3, 12, 25, 40]))
    return judge_ranked(qrels, rankings)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("cells", "numba"), [(7, "0"), (1 << 20, "0"),  # numpy: many blocks of a few questions,
                                              pytest.param(1 << 20, "1", marks=pytest.mark.fast)])  # one block; numba
def test_curve_means_equal_each_kernels_mean_at_every_k(seed: int, cells: int, numba: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "CURVE_CELLS", cells)
    monkeypatch.setenv("GOLDEVAL_NUMBA", numba)
    judged = random_judged(seed, n=700)  # enough questions that a sum in another order changes last bits
    depth = 30  # shorter than some lists, longer than others
    curves = curve_means(judged, NAMES, depth)
    for name in NAMES:
        # numpy's mean of the kernel's values at each k, compared exactly: the page shows the curve at k beside
        # the metric's mean, and one number must not read 0.2 on one and 0.20000000000000004 on the other
        one_by_one = [float(np.mean(compute(judged, [Metric(name, k)])[Metric(name, k)])) for k in range(1, depth + 1)]
        assert curves[name] == one_by_one, name
    assert 0 < curves["hit"][-1] < 1 and max(curves["precision"]) > 0 and curves["hit"] == sorted(curves["hit"])


@pytest.mark.fast
def test_numbas_curve_rows_equal_numpys_bit_for_bit_past_a_block_of_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    judged = random_judged(4, n=3 * curve_kernels.BLOCK + 17)  # several of the kernel's blocks, the last one short
    monkeypatch.setenv("GOLDEVAL_NUMBA", "0")
    in_numpy = curve_means(judged, NAMES, 45)
    monkeypatch.setenv("GOLDEVAL_NUMBA", "1")
    assert jit.compiled(curve_kernels.curve_rows, nbytes=0) is not None
    assert curve_means(judged, NAMES, 45) == in_numpy


def test_curve_means_of_nothing_is_nothing() -> None:
    assert curve_means(judge_ranked({}, {}), NAMES, 5) == {}
    assert curve_means(random_judged(1, n=3), NAMES, 0) == {}


@pytest.mark.parametrize("seed", [1, 2])
def test_ranges_scored_a_block_of_questions_at_a_time_equal_them_scored_at_once(seed: int,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    grades = {f"q{i}": {f"d{j}": rng.choice([0, 1, 2]) for j in rng.sample(range(30), rng.randint(1, 5))}
              for i in range(50)}
    rankings = {q: [f"d{j}" for j in rng.sample(range(30), rng.choice([0, 4, 12]))] for q in grades}
    metrics = [Metric("hit", 1), Metric("recall", 5), Metric("ndcg", 10), Metric("mrr"), Metric("map")]
    at_once = metric_ranges(grades, rankings, list(grades), metrics, pool_depth=10)
    monkeypatch.setattr(judged_module, "RANGE_BLOCK", 3)
    assert metric_ranges(grades, rankings, list(grades), metrics, pool_depth=10) == at_once
    assert set(at_once) == set(metrics) and any(lo < hi for lo, hi in at_once.values())
