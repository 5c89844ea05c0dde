"""One gate (issue 18, item 6): `goldeval compare --fail-if-worse`, `goldeval.testing.assert_no_regression` and
`goldeval.compare_results` give the same verdict on the same files, compared on the same questions."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable
from pathlib import Path

import pytest

import goldeval
from golden_factory import make_golden
from goldeval.cli import main
from goldeval.corpus.model import Corpus, Document
from goldeval.errors import InputError
from goldeval.testing import RegressionError, assert_no_regression

DOCS = Corpus({f"d{i}.md": Document(f"d{i}.md", f"page {i}") for i in range(50)})


def _card(ids: Iterable[int], misses: set[int], *, errors: frozenset[int] = frozenset(),
          returns: int = 50) -> goldeval.Scorecard:
    """`search` on questions `ids` (q{i} asks for page i): finds page i first, except for `misses`. It ranks
    the whole corpus (page i left out on a miss), so no metric is past what it returned (scorecard.depth),
    unless cut to its first `returns`."""
    golden = make_golden([(f"q{i}", f"where is page {i}", {f"d{i}.md": 1}) for i in ids])

    def search(question: str, k: int) -> list[str]:
        i = int(question.split()[-1])
        if i in errors:
            raise ConnectionError("index unreachable")
        others = [f"d{j}.md" for j in reversed(range(50)) if j != i]  # d49 first, as the miss used to return
        return (others if i in misses else [f"d{i}.md", *others])[:returns]

    return goldeval.evaluate({"search": search}, golden, corpus=DOCS, k=(1, 5))


def _both_paths(tmp_path: Path, baseline: goldeval.Scorecard, candidate: goldeval.Scorecard,
                capsys: pytest.CaptureFixture[str], metric: str = "hit@5") -> tuple[int, dict, str, object]:
    """The CLI's exit code, its JSON and stderr; and what assert_no_regression did on the same files (its
    warnings appended to stderr, as `warning: ...` lines)."""
    base, cand, out = tmp_path / "baseline.json", tmp_path / "results.json", tmp_path / "cmp.json"
    out.unlink(missing_ok=True)
    baseline.save(base)
    candidate.save(cand)  # named `results`, the label assert_no_regression gives its candidate
    code = main(["compare", str(base), str(cand), "--fail-if-worse", metric, "--json", str(out), "--resamples", "500"])
    err = capsys.readouterr().err
    data = json.loads(out.read_text()) if out.exists() else {}
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            outcome: object = assert_no_regression(cand, base, metric=metric, resamples=500, update=False)
        except (RegressionError, InputError) as caught:
            outcome = caught
    return code, data, err + "".join(f"warning: {w.message}\n" for w in warned), outcome


def test_the_gate_passes_on_shared_questions_on_both_paths_where_the_pytest_helper_raised_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression: the CLI compared the shared questions and passed, assert_no_regression raised InputError
    # ("used different golden sets") on the same two files
    baseline = _card(range(40), {1, 2})  # q30..q39 only in the baseline
    candidate = _card([*range(30), *range(40, 45)], {1, 2})  # q40..q44 only in the candidate
    code, data, err, report = _both_paths(tmp_path, baseline, candidate, capsys)
    assert code == 0 and isinstance(report, goldeval.ChangeReport)
    assert report.gate is not None and data["gate"] == report.gate.to_dict() and data["gate"]["status"] == "passed"
    assert data["shared"]["only_in_baseline"] == [f"q{i}" for i in range(30, 40)]
    assert data["shared"]["only_in_candidate"] == [f"q{i}" for i in range(40, 45)]
    assert data["n_questions"] == report.comparison.n_questions == 30
    said = ("compared on the 30 questions the runs share unchanged (of 40 and 35; golden set version unfrozen -> "
            "unfrozen: 5 added (q40, q41, q42, q43, q44), 10 removed (q30, q31, q32")
    assert f"goldeval: {said}" in err and f"warning: goldeval: {said}" in err  # the CLI and the pytest helper


@pytest.mark.parametrize("extra", ["baseline", "candidate"])
def test_a_drop_beyond_noise_on_the_shared_questions_fails_on_both_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str
) -> None:
    wide, narrow = range(40), range(30)  # one side holds 10 questions the other lacks
    baseline = _card(wide if extra == "baseline" else narrow, set())
    candidate = _card(narrow if extra == "baseline" else wide, set(range(12)))  # loses 12 shared questions
    code, data, err, caught = _both_paths(tmp_path, baseline, candidate, capsys)
    assert code == 1 and isinstance(caught, RegressionError) and caught.report is not None
    assert caught.report.gate is not None and data["gate"] == caught.report.gate.to_dict()
    assert data["gate"]["status"] == "failed" and data["n_questions"] == 30
    assert "gate failed: results/search is worse than baseline/search on hit@5 beyond noise (-40.0 points" in err
    assert "finds 12 that results/search misses and misses 0 that it finds, of 30 questions" in str(caught)
    # the exact McNemar p of 12 discordant questions all one way, by hand: 2 * 0.5**12
    assert caught.checks[0].p_adjusted == pytest.approx(2 * 0.5**12)


def test_a_drop_within_noise_passes_on_both_paths_and_the_library_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline, candidate = _card(range(40), set()), _card(range(40), {3, 4})  # 2 losses: p = 0.5
    code, data, _, report = _both_paths(tmp_path, baseline, candidate, capsys)
    assert code == 0 and isinstance(report, goldeval.ChangeReport) and report.gate is not None
    assert report.gate.passed and data["gate"] == report.gate.to_dict() and report.gate.checks[0].p_adjusted == 0.5
    direct = goldeval.compare_results(baseline, candidate, gate="hit@5", resamples=500)
    assert direct.gate is not None and direct.gate.status == "passed" and direct.gate.exit_code == 0
    (flips,) = direct.flips
    assert [q.id for q in flips.lost] == ["q3", "q4"] and flips.found == []
    r = direct.comparison.get(goldeval.parse_metric("hit@5"), "candidate/search", "baseline/search")
    assert (r.wins, r.losses, r.n) == (0, 2, 40) and r.ci[0] < 0 <= r.ci[1]


def test_errors_make_the_gate_untrusted_on_both_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline, candidate = _card(range(30), set()), _card(range(30), set(), errors=frozenset({5, 6}))
    code, data, err, caught = _both_paths(tmp_path, baseline, candidate, capsys)
    assert code == 2 and isinstance(caught, RegressionError) and caught.report is not None
    assert caught.report.gate is not None and data["gate"] == caught.report.gate.to_dict()
    assert data["gate"]["status"] == "untrusted"
    assert "gate cannot be trusted: the retriever errored on some questions of results/search (2)" in err


def test_bad_input_is_exit_2_and_input_error_on_both_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline, candidate = _card(range(30), set()), _card(range(30), set())
    code, data, err, caught = _both_paths(tmp_path, baseline, candidate, capsys, metric="ndcg@10")
    assert code == 2 and isinstance(caught, InputError) and data == {}
    assert "--fail-if-worse ndcg@10: not a metric of these results" in err
    assert str(caught).startswith("--fail-if-worse ndcg@10: not a metric of these results")
    unrelated = _card(range(40, 45), set())  # no question in common
    code, data, err, caught = _both_paths(tmp_path, baseline, unrelated, capsys)
    assert code == 2 and isinstance(caught, InputError)
    assert "share no answerable question unchanged" in err and "share no answerable question unchanged" in str(caught)


def test_a_gate_on_a_metric_past_a_list_cut_short_refuses_on_both_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression (issue 18): a search that returns 4 of the 100 asked has a hit@5 that is hit@4 under another
    # name, and the gate passed or failed on it without a word
    baseline, candidate = _card(range(30), set(), returns=4), _card(range(30), set(range(12)), returns=4)
    code, data, err, caught = _both_paths(tmp_path, baseline, candidate, capsys)
    said = ("--fail-if-worse hit@5: cannot gate: retriever results/search returned at most 4 results (of 100 asked), "
            "so hit@5 is unmeasurable; raise the retriever's own k to at least 5 and evaluate again, or gate a metric "
            "at k <= 4")
    assert code == 2 and isinstance(caught, InputError) and data == {}
    assert said in err and str(caught) == said  # one line, the same on both paths
    with pytest.raises(InputError) as library:
        goldeval.compare_results(baseline, candidate, gate="hit@5", labels=("baseline", "results"))
    assert str(library.value) == said
    # hit@1 is measured: the gate runs on it, and the verdicts leave hit@5 out with a note
    code, data, err, caught = _both_paths(tmp_path, baseline, candidate, capsys, metric="hit@1")
    assert code == 1 and isinstance(caught, RegressionError) and data["gate"]["status"] == "failed"
    assert caught.checks[0].p_adjusted == pytest.approx(2 * 0.5**12)  # 12 discordant, all one way: by hand
    note = ("hit@5, recall@5, precision@5, ndcg@5: not compared: retriever results/search returned at most 4 "
            "results; raise its k")
    assert note in data["notes"]
    assert main(["compare", str(tmp_path / "baseline.json"), str(tmp_path / "results.json"), "--resamples", "200"]) == 0
    shown = " ".join(capsys.readouterr().out.split())  # the terminal wraps long lines
    assert note in shown and "on hit@5" not in shown
    assert "hit@5" not in {r["metric"] for r in data["results"]} and "hit@1" in {r["metric"] for r in data["results"]}
