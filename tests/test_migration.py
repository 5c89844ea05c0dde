"""Old spellings keep working for one release, each with a one-line warning naming the new one
(CHANGELOG.md, "Migration")."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import goldeval
from goldeval.testing import assert_no_regression

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> goldeval.Scorecard:
    return goldeval.evaluate("bm25", DATA / "golden_example.jsonl", corpus=goldeval.Corpus.load(DATA / "corpus"),
                             k=(1, 5), workspace=tmp_path_factory.mktemp("ws"))


def test_assert_no_regression_result_still_reads_as_the_old_list_of_checks(card: goldeval.Scorecard) -> None:
    report = assert_no_regression(card, card, metric="hit@5", resamples=500)
    assert isinstance(report, goldeval.ChangeReport) and report.gate is not None and report.gate.passed
    expected = list(report.gate.checks)
    assert len(expected) == 1 and expected[0].result.a.endswith("bm25") and not expected[0].worse
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bool(report)  # truthiness is not the old list's and does not warn
    for use in (list, len, lambda r: r[0]):
        with pytest.warns(FutureWarning, match=r"^assert_no_regression now returns a ChangeReport; its checks are "
                                               r"report\.gate\.checks$"):
            old = use(report)
        assert old == {list: expected, len: 1}.get(use, expected[0])


def test_old_qrels_alias_warns_once_per_use_with_the_new_name() -> None:
    import goldeval.types

    with pytest.warns(FutureWarning) as caught:
        assert goldeval.types.Qrels is goldeval.types.QrelsDict
    assert [str(w.message) for w in caught] == [
        "goldeval.types.Qrels is now goldeval.types.QrelsDict; the old name goes away in the next release"]
