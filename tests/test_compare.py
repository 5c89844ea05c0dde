"""Comparisons: counted in questions, tested with the right paired test, refused on different questions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.metrics.definitions import Metric
from goldeval.scorecard import Hit, QuestionResult, RetrieverResult, Scorecard
from goldeval.stats.compare import compare_scorecards, compare_values

HIT1, HIT5, MRR = Metric("hit", 1), Metric("hit", 5), Metric("mrr")


def _hits(wins: int, losses: int, both: int, neither: int) -> tuple[np.ndarray, np.ndarray]:
    a = [1.0] * wins + [0.0] * losses + [1.0] * both + [0.0] * neither
    b = [0.0] * wins + [1.0] * losses + [1.0] * both + [0.0] * neither
    return np.array(a), np.array(b)


def test_verdict_counts_questions_and_says_within_noise_like_the_issue_example() -> None:
    base, small = _hits(wins=4, losses=2, both=20, neither=7)  # 33 questions
    comparison = compare_values({"small": {HIT5: small}, "base": {HIT5: base}}, seed=1)
    (r,) = comparison.results
    assert (r.a, r.b) == ("base", "small")
    assert (r.wins, r.losses, r.ties) == (4, 2, 27)
    assert r.diff == pytest.approx(2 / 33)
    assert r.test == "exact McNemar"
    assert r.p == pytest.approx(sps.binomtest(2, 6, 0.5).pvalue)
    assert not r.significant
    # hit@k says both directions: the questions base finds that small misses, and the reverse
    assert r.verdict.startswith("base leads small on hit@5: finds 4 that small misses and misses 2 that it finds, "
                                "of 33 questions (6.1 points, 95% CI ")
    assert r.verdict.endswith(f"p = {r.p:.2g}): within noise")
    assert "with 33 questions, only differences of about" in r.detectable
    assert f"would take about {r.questions_needed} questions" in r.detectable
    assert r.questions_needed is not None and r.questions_needed > 33


def test_a_clear_difference_is_called_real_and_the_interval_excludes_zero() -> None:
    a, b = _hits(wins=25, losses=1, both=10, neither=4)
    (r,) = compare_values({"old": {HIT1: b}, "new": {HIT1: a}}, seed=0).results
    assert r.significant and r.verdict.endswith("a real difference")
    assert r.ci[0] > 0
    assert r.p == pytest.approx(sps.binomtest(1, 26, 0.5).pvalue)
    assert r.verdict.startswith("new leads old on hit@1: finds 25 that old misses and misses 1 that it finds, "
                                "of 40 questions (60.0 points")
    # the leader is named first whichever side of the pair it is on, with its own counts
    (rev,) = compare_values({"old": {HIT1: a}, "new": {HIT1: b}}, seed=0).results
    assert (rev.a, rev.b, rev.wins, rev.losses) == ("new", "old", 1, 25)
    assert rev.verdict.startswith("old leads new on hit@1: finds 25 that new misses and misses 1 that it finds")


def test_continuous_metrics_use_the_randomization_test_and_say_better_and_worse() -> None:
    rng = np.random.default_rng(3)
    old = np.round(rng.random(12), 2)
    new = np.clip(old + np.array([0.3, 0.2, 0.1, 0, 0, -0.1, 0.25, 0.15, 0.05, 0.2, 0, 0.1]), 0, 1)
    (r,) = compare_values({"old": {MRR: old}, "new": {MRR: new}}).results
    assert r.test == "paired randomization"
    exact = sps.permutation_test((new, old), lambda x, y, axis: np.mean(x - y, axis=axis),
                                 permutation_type="samples", n_resamples=np.inf, vectorized=True).pvalue
    assert r.p == pytest.approx(exact, rel=1e-12)
    assert f"(better on {r.wins}, worse on {r.losses} of 12 questions" in r.verdict


def test_holm_correction_with_three_systems() -> None:
    a, b = _hits(wins=9, losses=1, both=10, neither=10)
    c = b.copy()
    comparison = compare_values({"x": {HIT1: b}, "y": {HIT1: a}, "z": {HIT1: c}})
    assert comparison.correction == "holm"
    raw = sorted(r.p for r in comparison.results)
    # three pairs: smallest p times 3, next times 2, largest times 1 (made monotone, capped at 1)
    adjusted = sorted(r.p_adjusted for r in comparison.results)
    assert adjusted[0] == pytest.approx(min(1, 3 * raw[0]))
    assert adjusted[1] == pytest.approx(min(1, max(3 * raw[0], 2 * raw[1])))
    assert all(r.p_adjusted >= r.p for r in comparison.results)
    tie = comparison.get(HIT1, "z", "x")
    assert tie.verdict == "z and x tie on hit@1: the same value on all 30 questions"


def test_comparison_is_reproducible_with_a_seed() -> None:
    rng = np.random.default_rng(0)
    values = {s: {MRR: rng.random(200), HIT1: (rng.random(200) < 0.5).astype(float)} for s in "ab"}
    one, two = compare_values(values, seed=5).to_dict(), compare_values(values, seed=5).to_dict()
    assert one == two
    assert compare_values(values, seed=6).to_dict()["results"][0]["ci"] != one["results"][0]["ci"]  # mrr


# --- scorecards and the CLI ----------------------------------------------------------------------


def _card(name: str, hits: list[int], *, extra_question: str | None = None, fingerprint: str = "fp1") -> Scorecard:
    questions = []
    for i, h in enumerate(hits):
        questions.append(QuestionResult(
            id=f"q{i}", question=f"question {i}", expected={f"d{i}": 1}, off_topic=False,
            rank=1 if h else None, ranks={f"d{i}": 1 if h else None},
            top=[Hit(f"d{i}" if h else "dx", 1.0, f"d{i}" if h else "dx")],
            metrics={HIT1: float(h), MRR: float(h)},
        ))
    if extra_question:
        questions.append(QuestionResult(extra_question, "?", {"d0": 1}, False, None, {}, [], {HIT1: 0.0, MRR: 0.0}))
    mean = {m: float(np.mean([q.metrics[m] for q in questions])) for m in (HIT1, MRR)}
    return Scorecard([RetrieverResult(name, questions, mean)], [HIT1, MRR], [1], 10, [HIT1, MRR],
                     golden={"fingerprint": fingerprint})


def test_scorecards_with_different_questions_are_refused_naming_them() -> None:
    a = _card("bm25", [1, 0, 1])
    b = _card("dense", [1, 1, 1], extra_question="q_new")
    with pytest.raises(InputError, match=r"different questions \(only in new: q_new\)"):
        compare_scorecards([a, b], labels=["old", "new"])


def test_scorecards_with_different_golden_sets_are_refused() -> None:
    with pytest.raises(InputError, match="used different golden sets"):
        compare_scorecards([_card("a", [1, 0]), _card("b", [0, 1], fingerprint="fp2")], labels=["one", "two"])


def test_same_retriever_name_in_two_files_is_labelled_by_file() -> None:
    comparison = compare_scorecards([_card("bm25", [1, 0, 1, 0]), _card("bm25", [1, 1, 1, 1])], labels=["old", "new"])
    assert comparison.systems == ["old/bm25", "new/bm25"]


def _save(tmp_path: Path, name: str, card: Scorecard) -> Path:
    path = tmp_path / name
    card.save(path)
    return path


def test_cli_compare_files_writes_json_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _save(tmp_path, "old.json", _card("bm25", [1, 0, 1, 0, 1, 0, 1, 0]))
    new = _save(tmp_path, "new.json", _card("bm25", [1, 1, 1, 0, 1, 0, 1, 1]))
    out, md = tmp_path / "cmp.json", tmp_path / "cmp.md"
    code = main(["compare", str(old), str(new), "--json", str(out), "--markdown", str(md), "--resamples", "500"])
    assert code == 0
    data = json.loads(out.read_text())
    r = next(x for x in data["results"] if x["metric"] == "hit@1")
    assert (r["a"], r["b"], r["wins"], r["losses"], r["ties"]) == ("new/bm25", "old/bm25", 2, 0, 6)
    assert data["files"] == [str(old), str(new)]
    assert "new/bm25 leads old/bm25 on hit@1: finds 2 that old/bm25 misses and misses 0 that it finds, of 8 " \
        "questions" in md.read_text()
    printed = " ".join(capsys.readouterr().out.split())  # as read, whatever the terminal's width wrapped
    assert "within noise" in printed and "2 systems on 8 answerable questions" in printed


def test_cli_fail_if_worse_gate_returns_1_only_when_worse_beyond_noise(tmp_path: Path) -> None:
    frozen = _save(tmp_path, "frozen.json", _card("bm25", [1] * 20))
    slightly = _save(tmp_path, "slightly.json", _card("bm25", [1] * 19 + [0]))
    much = _save(tmp_path, "much.json", _card("bm25", [1] * 8 + [0] * 12))
    assert main(["compare", str(frozen), str(slightly), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 0
    assert main(["compare", str(frozen), str(much), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 1


def test_cli_compare_refuses_bad_input_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _save(tmp_path, "one.json", _card("bm25", [1, 0]))
    assert main(["compare", str(one)]) == 2
    assert "only one retriever" in capsys.readouterr().err
    unrelated = _card("bm25", [1, 0])
    for q in unrelated.retrievers[0].questions:
        q.id = f"x{q.id}"
    assert main(["compare", str(one), str(_save(tmp_path, "unrelated.json", unrelated))]) == 2
    assert "these runs share no answerable question unchanged" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing.json"), str(one)]) == 2


def test_equal_means_with_different_questions_are_called_level_not_a_lead() -> None:
    a, b = _hits(wins=3, losses=3, both=5, neither=5)
    (r,) = compare_values({"old": {HIT1: b}, "new": {HIT1: a}}).results
    assert r.verdict.startswith("new and old are level on hit@1: new better on 3, worse on 3 of 16 questions")
    assert r.verdict.endswith("p = 1): within noise")


def test_a_question_that_became_off_topic_is_refused_by_name() -> None:
    a = _card("bm25", [1, 0, 1], fingerprint="")
    b = _card("dense", [1, 1, 1], fingerprint="")
    b.retrievers[0].questions[2].off_topic = True
    with pytest.raises(InputError, match=r"disagree on which questions are off-topic \(q2\)"):
        compare_scorecards([a, b], labels=["old", "new"])


def _multi_card(retrievers: dict[str, list[int]]) -> Scorecard:
    results = [_card(name, hits).retrievers[0] for name, hits in retrievers.items()]
    return Scorecard(results, [HIT1, MRR], [1], 10, [HIT1, MRR], golden={"fingerprint": "fp1"})


def test_fail_if_worse_gates_each_retriever_against_its_namesake_not_the_first_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression: every system was gated against systems[0], so two identical files each holding a strong
    # and a weak retriever failed ("frozen/weak is worse than frozen/bm25")
    strong, weak = [1] * 20, [1] * 12 + [0] * 8
    frozen = _save(tmp_path, "frozen.json", _multi_card({"bm25": strong, "weak": weak}))
    same = _save(tmp_path, "same.json", _multi_card({"bm25": strong, "weak": weak}))
    assert main(["compare", str(frozen), str(same), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 0
    assert "gate passed" in capsys.readouterr().err
    worse = _save(tmp_path, "worse.json", _multi_card({"bm25": strong, "weak": [0] * 20}))
    assert main(["compare", str(frozen), str(worse), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 1
    err = capsys.readouterr().err
    assert "gate failed: worse/weak is worse than frozen/weak on hit@1" in err
    assert "worse/bm25 is worse" not in err


def test_fail_if_worse_says_which_retrievers_have_no_baseline_of_their_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frozen = _save(tmp_path, "frozen.json", _multi_card({"bm25": [1] * 10, "weak": [0] * 10}))
    new = _save(tmp_path, "new.json", _multi_card({"bm25": [1] * 10, "dense": [0] * 10}))
    assert main(["compare", str(frozen), str(new), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 0
    assert "dense is not gated: no retriever named dense in the baseline frozen" in capsys.readouterr().err
    other = _save(tmp_path, "other.json", _multi_card({"x": [1] * 10, "y": [0] * 10}))
    assert main(["compare", str(frozen), str(other), "--fail-if-worse", "hit@1"]) == 2
    assert "nothing can be gated" in capsys.readouterr().err


def test_fail_if_worse_with_one_file_gates_every_retriever_against_the_first(tmp_path: Path) -> None:
    one = _save(tmp_path, "one.json", _multi_card({"bm25": [1] * 20, "same": [1] * 20, "bad": [0] * 20}))
    assert main(["compare", str(one), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 1
    fine = _save(tmp_path, "fine.json", _multi_card({"bm25": [1] * 20, "same": [1] * 20}))
    assert main(["compare", str(fine), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 0


def test_retriever_errors_are_warned_counted_in_json_and_stop_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression: questions whose retriever errored scored 0 and were compared as real misses, silently
    frozen = _save(tmp_path, "frozen.json", _card("bm25", [1] * 10))
    broken_card = _card("bm25", [1] * 7 + [0] * 3)
    for q in broken_card.retrievers[0].questions[7:]:
        q.error = "ConnectionError: index unreachable"
    broken = _save(tmp_path, "broken.json", broken_card)
    out = tmp_path / "cmp.json"
    assert main(["compare", str(frozen), str(broken), "--json", str(out), "--resamples", "200"]) == 0
    assert "warning: broken/bm25: the retriever errored on 3 of 10 compared questions" in capsys.readouterr().err
    assert json.loads(out.read_text())["n_errors"] == {"frozen/bm25": 0, "broken/bm25": 3}
    assert main(["compare", str(frozen), str(broken), "--fail-if-worse", "hit@1", "--resamples", "200"]) == 2
    assert "gate cannot be trusted: the retriever errored on some questions of broken/bm25 (3)" \
        in capsys.readouterr().err


def test_one_question_says_nothing_can_be_tested_without_an_interval() -> None:
    (r,) = compare_values({"old": {MRR: [0.5]}, "new": {MRR: [1.0]}}).results
    assert r.verdict == "new vs old on mrr: one question: nothing can be tested (new 1, old 0.5)"
    assert "CI" not in r.verdict
    assert r.detectable == "with one question, nothing on mrr can be tested"


def test_the_same_difference_on_every_question_is_said_plainly() -> None:
    # regression: "no minimum detectable difference can be estimated" for a constant non-zero difference,
    # or a detectable difference sized from the systems' own spread although the differences had none
    old = np.array([0.2, 0.5, 0.3, 0.6])
    (r,) = compare_values({"old": {MRR: old}, "new": {MRR: old + 0.25}}).results
    assert r.mdd is None and r.questions_needed is None
    assert r.detectable == ("with 4 questions, the difference on mrr is the same on every question (+25.0 points); "
                            "too few questions for a test to call it real")
    (flat,) = compare_values({"old": {HIT1: [0.0] * 3}, "new": {HIT1: [1.0] * 3}}).results
    assert flat.detectable.startswith("with 3 questions, the difference on hit@1 is the same on every question")


def test_verdicts_count_one_question_in_the_singular() -> None:
    a, b = _hits(wins=1, losses=0, both=3, neither=3)
    (r,) = compare_values({"old": {HIT1: b}, "new": {HIT1: a}}).results
    assert r.verdict.startswith("new leads old on hit@1: finds 1 that old misses and misses 0 that it finds, "
                                "of 7 questions")
    old, new = np.array([0.5, 0.2, 0.3]), np.array([0.5, 0.2, 0.8])
    (cont,) = compare_values({"old": {MRR: old}, "new": {MRR: new}}).results
    assert "(better on 1, worse on 0 of 3 questions" in cont.verdict and "1 questions" not in cont.verdict


def test_fail_if_worse_with_an_unknown_metric_is_refused_before_computing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression: the metric was checked only after every comparison was computed and the JSON written
    old = _save(tmp_path, "old.json", _card("bm25", [1, 0, 1, 0]))
    new = _save(tmp_path, "new.json", _card("bm25", [1, 1, 1, 0]))
    out = tmp_path / "cmp.json"
    assert main(["compare", str(old), str(new), "--fail-if-worse", "ndcg@10", "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--fail-if-worse ndcg@10: not a metric of these results" in err and "available: hit@1, mrr" in err
    assert not out.exists()
