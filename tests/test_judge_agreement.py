"""The machine judge's statistics against the references: scikit-learn's cohen_kappa_score, the
`krippendorff` package, scipy.stats.kendalltau, and tau_AP and the sample size worked by hand."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from goldeval.judging.agreement import calibrate, pairs_needed
from goldeval.judging.coverage import parse_covered
from goldeval.judging.grader import parse_grade
from goldeval.judging.survival import kendall_tau, tau_ap


def _case(seed: int, n: int = 240, questions: int = 40) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
    """People's grades and a machine that is off by one now and then, lenient on average (seed-dependent)."""
    rng = np.random.default_rng(seed)
    people = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    machine = np.clip(people + rng.choice([-1, 0, 0, 1, 1, 2], size=n), 0, 3)
    keys = [(f"q{i % questions}", f"d{i}") for i in range(n)]
    return dict(zip(keys, people.tolist(), strict=True)), dict(zip(keys, machine.tolist(), strict=True))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kappa_weighted_kappa_and_alpha_equal_the_references(seed: int) -> None:
    people, machine = _case(seed)
    keys = sorted(people)
    a, b = [people[k] for k in keys], [machine[k] for k in keys]
    c = calibrate(people, machine, resamples=500)
    assert c.values["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert c.values["weighted_kappa"] == pytest.approx(
        cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2, 3]), abs=1e-12)
    assert c.values["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=[a, b], level_of_measurement="interval"), abs=1e-12)
    assert c.values["bias"] == pytest.approx(np.mean(np.array(b) - np.array(a)), abs=1e-12)
    assert c.values["relevant_agreement"] == pytest.approx(np.mean((np.array(a) > 0) == (np.array(b) > 0)), abs=1e-12)
    assert c.confusion.sum() == len(keys) and c.confusion[1, 2] == sum(x == 1 and y == 2 for x, y in zip(a, b, strict=True))


def test_intervals_hold_the_value_and_shrink_with_more_questions() -> None:
    small = calibrate(*_case(3, n=120, questions=20), resamples=2000)
    large = calibrate(*_case(3, n=1200, questions=200), resamples=2000)
    for name in ("kappa", "weighted_kappa", "alpha", "bias"):
        low, high = small.intervals[name]
        assert low < small.values[name] < high
        assert large.intervals[name][1] - large.intervals[name][0] < high - low
    assert calibrate(*_case(3, n=120, questions=20), resamples=2000).intervals == small.intervals  # seeded


def test_fewer_than_ten_questions_get_no_interval() -> None:
    c = calibrate(*_case(4, n=40, questions=9), resamples=200)
    assert c.values["kappa"] is not None and all(v is None for v in c.intervals.values())


def test_pairs_needed_is_cohens_large_sample_formula_worked_by_hand() -> None:
    # p_o = 0.7, both marginals (0.5, 0.5, 0, 0): p_e = 0.5; n = 1.96^2 * 0.7 * 0.3 / (0.25 * 0.01) = 322.7
    confusion = np.array([[35, 15, 0, 0], [15, 35, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert pairs_needed(confusion) == 323
    assert pairs_needed(np.array([[5, 0, 0, 0], [0] * 4, [0] * 4, [0] * 4])) is None  # one grade only: no kappa


def test_disagreements_are_listed_worst_first() -> None:
    people = {("q1", "a"): 0, ("q1", "b"): 3, ("q2", "c"): 1, ("q2", "d"): 2}
    machine = {("q1", "a"): 1, ("q1", "b"): 0, ("q2", "c"): 1, ("q2", "d"): 0, ("q3", "e"): 2}
    listed = calibrate(people, machine).to_dict()["disagreements"]
    assert [(d["passage"], d["difference"]) for d in listed] == [("b", -3), ("d", -2), ("a", 1)]


@pytest.mark.parametrize("seed", range(6))
def test_kendall_tau_equals_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, size=7).astype(float)  # ties on purpose: tau-b
    b = a + rng.integers(-2, 3, size=7)
    expected = kendalltau(a, b).statistic
    assert kendall_tau(list(a), list(b)) == pytest.approx(expected, abs=1e-12)


def test_tau_ap_weighs_a_swap_at_the_top_more_worked_by_hand() -> None:
    truth = [4.0, 3.0, 2.0, 1.0]  # A > B > C > D
    # B A C D: at 2, A has B above it wrongly (0/1); C: 2/2; D: 3/3 -> 2/3 * 2 - 1 = 1/3
    assert tau_ap(truth, [3.0, 4.0, 2.0, 1.0]) == pytest.approx(1 / 3)
    # A B D C: B 1/1, D 2/2, C 2/3 -> 2/3 * (8/3) - 1 = 7/9
    assert tau_ap(truth, [4.0, 3.0, 1.0, 2.0]) == pytest.approx(7 / 9)
    assert tau_ap(truth, truth) == 1.0 and tau_ap(truth, truth[::-1]) == -1.0
    assert tau_ap(truth, [1.0, 1.0, 2.0, 3.0]) is None  # a tie: tau_AP is defined on strict orderings


@pytest.mark.parametrize(("reply", "grade"), [("2", 2), (" 3\n", 3), ("0.", 0), ("Grade: 1", 1), ("grade=2", 2),
                                             ("4", None), ("2 or 3", None), ("relevant", None), ("", None),
                                             ("I cannot grade this", None), ("12", None)])
def test_a_grade_is_read_strictly_never_guessed(reply: str, grade: int | None) -> None:
    assert parse_grade(reply) == grade


@pytest.mark.parametrize(("reply", "covered"), [("covered", True), ("Not covered.", False), ("not_covered", False),
                                               ("covered, mostly", None), ("yes", None), ("uncovered", None)])
def test_covered_is_read_strictly(reply: str, covered: bool | None) -> None:
    assert parse_covered(reply) is covered


def test_people_of_one_grade_are_said_to_make_kappa_meaningless() -> None:
    people = {("q1", d): 1 for d in "abcd"}
    machine = {("q1", "a"): 1, ("q1", "b"): 0, ("q1", "c"): 1, ("q1", "d"): 2}
    c = calibrate(people, machine)
    assert c.values["kappa"] == pytest.approx(cohen_kappa_score([1] * 4, [1, 0, 1, 2]), abs=1e-12)
    assert "one grade only (1)" in c.notes[0]
