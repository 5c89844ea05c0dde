"""goldeval inside your own test suite: a test fails when retrieval got worse beyond noise.

    import goldeval
    from goldeval.testing import assert_no_regression

    def test_search_did_not_get_worse():
        card = goldeval.evaluate({"search": my_search}, "golden.jsonl", corpus=corpus)
        assert_no_regression(card, "tests/search_baseline.json", metric="hit@5")

It is the gate of `goldeval compare baseline.json new.json --fail-if-worse hit@5`, as a function: each
retriever is paired with the baseline's retriever of the same name, tested with the paired test of
the metric (McNemar for hit@k), Holm-corrected over the pairs, and only a drop beyond noise fails.
A retriever that errored on a question fails too: its numbers cannot be trusted. With
`GOLDEVAL_UPDATE_BASELINE=1` in the environment (or `update=True`) the results become the baseline
and the test passes, as snapshot tests do; commit the file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from goldeval.errors import InputError
from goldeval.metrics.definitions import Metric, parse_metric
from goldeval.scorecard.model import Scorecard
from goldeval.stats.compare import GateCheck, compare_scorecards, format_p, gate, gate_pairs

UPDATE_ENV = "GOLDEVAL_UPDATE_BASELINE"


class RegressionError(AssertionError):
    """Retrieval got worse than the baseline beyond noise (an AssertionError, so pytest reports it as a failure)."""

    def __init__(self, message: str, checks: Sequence[GateCheck]) -> None:
        super().__init__(message)
        self.checks = list(checks)


def assert_no_regression(results: Scorecard | str | Path, baseline: Scorecard | str | Path, *,
                         metric: str | Metric = "hit@5", seed: int = 0, resamples: int = 10_000,
                         update: bool | None = None) -> list[GateCheck]:
    """Raise `RegressionError` if a retriever of `results` is worse than its namesake in `baseline` on
    `metric` beyond noise; return the checks otherwise (each with its verdict and adjusted p).

    `baseline` is a saved results file (or a Scorecard). When it is a path and `update` is true (default:
    the `GOLDEVAL_UPDATE_BASELINE` environment variable), `results` is written there instead.
    """
    card = results if isinstance(results, Scorecard) else Scorecard.load(results)
    gated = parse_metric(metric) if isinstance(metric, str) else metric
    if update is None:
        update = os.environ.get(UPDATE_ENV, "").strip().lower() in ("1", "true", "yes")
    if not isinstance(baseline, Scorecard):
        path = Path(baseline)
        if update:
            card.save(path)
            return []
        if not path.exists():
            raise RegressionError(f"no baseline at {path}: run once with {UPDATE_ENV}=1 to write it from these "
                                  "results, and commit it", [])
        baseline = Scorecard.load(path)
    return _gate(baseline, card, gated, seed=seed, resamples=resamples)


def _gate(baseline: Scorecard, card: Scorecard, metric: Metric, *, seed: int, resamples: int) -> list[GateCheck]:
    for name, scorecard in (("baseline", baseline), ("results", card)):
        if metric not in scorecard.metrics:
            raise InputError(f"{metric} is not a metric of the {name}", value=str(metric),
                             hint="available: " + ", ".join(str(m) for m in scorecard.metrics))
    labels = ["baseline", "results"]
    pairs, notes = gate_pairs([baseline, card], labels)
    if not pairs:
        raise RegressionError("nothing to gate: no retriever of the results has a namesake in the baseline ("
                              + "; ".join(notes) + ")", [])
    comparison = compare_scorecards([baseline, card], labels=labels, metrics=[metric], seed=seed, resamples=resamples)
    errored = [f"{s} ({n} questions)" for s, n in comparison.n_errors.items() if n]
    if errored:
        raise RegressionError("the gate cannot be trusted: the retriever errored on " + ", ".join(errored), [])
    checks = gate(comparison, pairs, metric)
    worse = [c for c in checks if c.worse]
    if worse:
        lines = [f"{c.result.verdict} ({format_p(c.p_adjusted)}{' after Holm' if len(checks) > 1 else ''})"
                 for c in worse]
        raise RegressionError(f"retrieval got worse than the baseline on {metric} beyond noise:\n  "
                              + "\n  ".join(lines), checks)
    return checks
