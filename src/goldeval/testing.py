"""goldeval inside your own test suite: a test fails when retrieval got worse beyond noise.

    import goldeval
    from goldeval.testing import assert_no_regression

    def test_search_did_not_get_worse():
        card = goldeval.evaluate({"search": my_search}, "golden.jsonl", corpus=corpus)
        assert_no_regression(card, "tests/search_baseline.json", metric="hit@5")

It is the gate of `goldeval compare baseline.json new.json --fail-if-worse hit@5`, as a function: both
call `goldeval.compare_results`, so the same files get the same verdict. Each retriever is paired
with the baseline's retriever of the same name, compared on the questions both runs share unchanged
(those left out are named in a warning), tested with the paired test of the metric (McNemar for
hit@k), Holm-corrected over the pairs, and only a drop beyond noise fails. A retriever that errored on
a question fails too: its numbers cannot be trusted (the command line exits 2 there). Bad input (an
unknown metric, no retriever of the baseline's names, no question in common) raises InputError, as the
command line exits 2. With `GOLDEVAL_UPDATE_BASELINE=1` in the environment (or `update=True`) the
results become the baseline and the test passes, as snapshot tests do; commit the file.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import Scorecard
from goldeval.stats.change import ChangeReport, compare_results
from goldeval.stats.compare import GateCheck, format_p

__all__ = ["RegressionError", "UPDATE_ENV", "assert_no_regression"]

UPDATE_ENV = "GOLDEVAL_UPDATE_BASELINE"


class RegressionError(AssertionError):
    """Retrieval got worse than the baseline beyond noise (an AssertionError, so pytest reports it as a failure)."""

    def __init__(self, message: str, report: ChangeReport | None = None) -> None:
        super().__init__(message)
        self.report = report

    @property
    def checks(self) -> list[GateCheck]:
        """Each gated pair with its verdict and adjusted p (empty when nothing was tested)."""
        return list(self.report.gate.checks) if self.report is not None and self.report.gate is not None else []


def assert_no_regression(results: Scorecard | str | Path, baseline: Scorecard | str | Path, *,
                         metric: str | Metric = "hit@5", seed: int = 0, resamples: int = 10_000,
                         confidence: float = 0.95, update: bool | None = None) -> ChangeReport | None:
    """Raise `RegressionError` if a retriever of `results` is worse than its namesake in `baseline` on
    `metric` beyond noise (or errored on questions); return the `ChangeReport` otherwise (its `gate`
    holds each pair's check and adjusted p).

    `baseline` is a saved results file (or a Scorecard). When it is a path and `update` is true (default:
    the `GOLDEVAL_UPDATE_BASELINE` environment variable), `results` is written there instead (returns None).
    """
    card = results if isinstance(results, Scorecard) else Scorecard.load(results)
    if update is None:
        update = os.environ.get(UPDATE_ENV, "").strip().lower() in ("1", "true", "yes")
    if not isinstance(baseline, Scorecard):
        path = Path(baseline)
        if update:
            card.save(path)
            return None
        if not path.exists():
            raise RegressionError(f"no baseline at {path}: run once with {UPDATE_ENV}=1 to write it from these "
                                  "results, and commit it")
        baseline = Scorecard.load(path)
    report = compare_results(baseline, card, gate=metric, metrics=[metric], labels=("baseline", "results"),
                             seed=seed, resamples=resamples, confidence=confidence)
    if report.questions_changed and report.shared is not None:
        warnings.warn(f"goldeval: {report.shared.describe()}", stacklevel=2)
    verdict = report.gate
    assert verdict is not None  # asked for with gate=metric
    if verdict.status == "untrusted":
        raise RegressionError(f"the {verdict.reason}", report)
    if verdict.status == "failed":
        several = len(verdict.checks) > 1
        lines = [f"{c.result.verdict} ({format_p(c.p_adjusted)}{' after Holm' if several else ''})"
                 for c in verdict.checks if c.worse]
        raise RegressionError(f"retrieval got worse than the baseline on {verdict.metric} beyond noise:\n  "
                              + "\n  ".join(lines), report)
    return report
