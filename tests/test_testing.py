"""`goldeval.testing`: the regression gate inside a project's own pytest suite (issue 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import goldeval
from golden_factory import make_golden
from goldeval.corpus.model import Corpus, Document
from goldeval.errors import InputError
from goldeval.testing import RegressionError, assert_no_regression
from hang_guard import HANG_GUARD

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "pytest_gate"
DOCS = Corpus({f"d{i}.md": Document(f"d{i}.md", f"page {i}") for i in range(40)})
GOLDEN = make_golden([(f"q{i}", f"where is page {i}", {f"d{i}.md": 1}) for i in range(40)])


def finder(misses: set[int]):
    """Finds question i's page first, except for the questions in `misses` (a page nobody asked for first).
    It ranks the whole corpus (page i left out on a miss), so no metric is past what it returned."""
    def search(question: str, k: int) -> list[str]:
        i = int(question.split()[-1])
        others = [f"d{j}.md" for j in reversed(range(40)) if j != i]  # d39 first, as the miss used to return
        return others if i in misses else [f"d{i}.md", *others]
    return search


def card(misses: set[int], name: str = "search") -> goldeval.Scorecard:
    return goldeval.evaluate({name: finder(misses)}, GOLDEN, corpus=DOCS, k=(1, 5))


def test_the_same_retrieval_passes_and_says_so() -> None:
    report = assert_no_regression(card({1, 2}), card({1, 2}), metric="hit@5", resamples=500)
    assert report is not None and report.gate is not None and report.gate.status == "passed"
    assert [c.worse for c in report.gate.checks] == [False]
    assert "tie on hit@5" in report.gate.checks[0].result.verdict
    assert report.gate.reason == ("gate passed: nothing is worse than its baseline on hit@5 beyond noise "
                                  "(results/search vs baseline/search)")


def test_a_drop_beyond_noise_fails_with_both_directions() -> None:
    with pytest.raises(RegressionError) as caught:
        assert_no_regression(card(set(range(10, 22))), card({1}), metric="hit@5", resamples=500)
    message = str(caught.value)
    assert message.startswith("retrieval got worse than the baseline on hit@5 beyond noise:")
    assert "baseline/search leads results/search on hit@5: finds 12 that results/search misses and misses 1 that it finds" in message
    assert caught.value.checks[0].worse and isinstance(caught.value, AssertionError)


def test_one_unlucky_question_is_noise() -> None:
    report = assert_no_regression(card({1, 2}), card({1}), metric="hit@5", resamples=500)
    assert report is not None and report.gate is not None and not report.gate.checks[0].worse


def test_the_baseline_file_is_written_on_request_and_read_back(tmp_path: Path, monkeypatch) -> None:
    baseline = tmp_path / "baseline.json"
    with pytest.raises(RegressionError, match="no baseline at .*baseline.json: run once with GOLDEVAL_UPDATE_BASELINE=1"):
        assert_no_regression(card(set()), baseline)
    monkeypatch.setenv("GOLDEVAL_UPDATE_BASELINE", "1")
    assert assert_no_regression(card(set()), baseline) is None and baseline.exists()
    monkeypatch.delenv("GOLDEVAL_UPDATE_BASELINE")
    with pytest.raises(RegressionError):
        assert_no_regression(card(set(range(20))), baseline, resamples=500)


def test_errors_fail_the_gate_and_unpaired_retrievers_are_bad_input() -> None:
    def broken(question: str, k: int) -> list[str]:
        raise RuntimeError("index offline")

    errored = goldeval.evaluate({"search": broken}, GOLDEN, corpus=DOCS, k=(1, 5))
    with pytest.raises(RegressionError, match=r"cannot be trusted: the retriever errored on some questions of "
                                              r"results/search \(40\)") as caught:
        assert_no_regression(errored, card(set()))
    assert caught.value.report is not None and caught.value.report.gate.status == "untrusted"
    two = goldeval.evaluate({"a": finder(set()), "b": finder(set())}, GOLDEN, corpus=DOCS, k=(1, 5))
    # bad input, as `goldeval compare --fail-if-worse` exits 2 on it (issue 18: one gate)
    with pytest.raises(InputError, match="no retriever of the later files has a baseline of the same name"):
        assert_no_regression(two, card(set()))


def test_the_example_suite_passes_and_fails_when_search_breaks(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("GOLDEVAL_UPDATE_BASELINE", None)
    passed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # the same suite after a bug that inverts the filter: the search finds nothing
    source = (EXAMPLE / "test_search_quality.py").read_text()
    broken = source.replace("if score > 0", "if score < 0").replace('HERE.parent / "data"', f'Path({str(ROOT / "examples" / "data")!r})')
    assert broken != source
    (tmp_path / "test_broken_search.py").write_text(broken)
    failed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_broken_search.py"],
                            cwd=tmp_path, env={**env, "SEARCH_BASELINE": str(EXAMPLE / "search_baseline.json")},
                            capture_output=True, text=True, timeout=HANG_GUARD)
    assert failed.returncode == 1, failed.stdout
    assert "RegressionError: retrieval got worse than the baseline on hit@3 beyond noise" in failed.stdout
    # the 8 hand-written questions: the synthetic h09 is beside the headline, in no gate (issue 18)
    assert "finds 8 that results/search misses and misses 0 that it finds, of 8 questions" in failed.stdout
