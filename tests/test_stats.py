"""Bootstrap intervals, paired tests and Holm, validated against scipy.stats on fixed data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from goldeval.stats.bootstrap import bootstrap_intervals, bootstrap_means, rng_for, unpaired_diff_interval
from goldeval.stats.offtopic import roc_auc
from goldeval.stats.paired import (
    holm,
    mcnemar_exact,
    minimum_detectable_difference,
    questions_needed,
    randomization_pvalues,
    randomization_test,
    sign_test,
)

FIXED = np.random.default_rng(20240601)
HITS_A = (FIXED.random(60) < 0.55).astype(float)
HITS_B = (FIXED.random(60) < 0.45).astype(float)
MRR_A = np.round(FIXED.random(40) ** 2, 3)
MRR_B = np.clip(MRR_A + np.round(FIXED.normal(0.05, 0.2, 40), 3), 0, 1)


@pytest.mark.parametrize(("wins", "losses"), [(4, 2), (0, 7), (12, 3), (50, 71), (0, 0), (1, 1), (300, 260)])
def test_sign_test_equals_scipy_binomtest(wins: int, losses: int) -> None:
    diffs = [1.0] * wins + [-1.0] * losses + [0.0] * 5
    expected = sps.binomtest(min(wins, losses), wins + losses, 0.5).pvalue if wins + losses else 1.0
    assert sign_test(diffs) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_exact_mcnemar_uses_only_discordant_questions() -> None:
    b = int(np.sum((HITS_A == 1) & (HITS_B == 0)))
    c = int(np.sum((HITS_A == 0) & (HITS_B == 1)))
    assert mcnemar_exact(HITS_A, HITS_B) == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)


def _scipy_paired_permutation(a: np.ndarray, b: np.ndarray, n_resamples: float) -> float:
    result = sps.permutation_test(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        n_resamples=n_resamples, alternative="two-sided", vectorized=True, random_state=7,
    )
    return float(result.pvalue)


def test_randomization_test_is_exact_for_few_questions_and_equals_scipy() -> None:
    a, b = MRR_A[:12], MRR_B[:12]
    assert randomization_test(a, b) == pytest.approx(_scipy_paired_permutation(a, b, np.inf), rel=1e-12)


def test_randomization_test_exact_with_tied_differences_equals_scipy() -> None:
    a = np.array([1, 0.5, 0.5, 1, 0.25, 1, 0, 0.5, 1, 1])
    b = np.array([0.5, 0.5, 1, 0.5, 0.25, 0.5, 0.5, 0, 0.5, 1])
    assert randomization_test(a, b) == pytest.approx(_scipy_paired_permutation(a, b, np.inf), rel=1e-12)


def test_randomization_test_with_random_rounds_is_close_to_scipy() -> None:
    ours = randomization_test(MRR_A, MRR_B, rounds=20_000, seed=3)
    theirs = _scipy_paired_permutation(MRR_A, MRR_B, 20_000)
    assert 0.001 < theirs < 0.9  # a p-value where Monte Carlo error is visible, not a degenerate 0 or 1
    assert ours == pytest.approx(theirs, abs=0.015)


def test_randomization_pvalues_vectorised_columns_match_one_at_a_time() -> None:
    diffs = np.column_stack([MRR_A - MRR_B, HITS_A[:40] - HITS_B[:40], np.zeros(40)])
    together = randomization_pvalues(diffs, rounds=20_000, rng=rng_for(1, 1))
    for j in range(3):
        alone = _scipy_paired_permutation(diffs[:, j], np.zeros(40), 20_000) if j < 2 else 1.0
        assert together[j] == pytest.approx(alone, abs=0.015)


def test_percentile_bootstrap_interval_is_close_to_scipy() -> None:
    values = np.column_stack([HITS_A, MRR_A[np.arange(60) % 40]])
    ours = bootstrap_intervals(values, resamples=20_000, seed=5, confidence=0.95)
    for j in range(2):
        theirs = sps.bootstrap((values[:, j],), np.mean, method="percentile", n_resamples=20_000,
                               confidence_level=0.95, random_state=11).confidence_interval
        assert ours[0, j] == pytest.approx(theirs.low, abs=0.01)
        assert ours[1, j] == pytest.approx(theirs.high, abs=0.01)


def test_paired_bootstrap_of_differences_is_close_to_scipy_paired() -> None:
    ours = bootstrap_intervals((MRR_A - MRR_B)[:, None], resamples=20_000, seed=2)[:, 0]
    theirs = sps.bootstrap((MRR_A, MRR_B), lambda x, y, axis: np.mean(x - y, axis=axis), paired=True,
                           vectorized=True, method="percentile", n_resamples=20_000,
                           random_state=4).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.01)
    assert ours[1] == pytest.approx(theirs.high, abs=0.01)


def test_unpaired_difference_interval_is_close_to_scipy_independent_samples() -> None:
    a, b = HITS_A[:35], MRR_B[:25]
    ours = unpaired_diff_interval(a, b, resamples=20_000, seed=1)
    theirs = sps.bootstrap((a, b), lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                           vectorized=True, method="percentile", n_resamples=20_000,
                           random_state=9).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, abs=0.015)
    assert ours[1] == pytest.approx(theirs.high, abs=0.015)


def test_bootstrap_is_reproducible_with_a_seed_and_changes_without() -> None:
    one = bootstrap_means(MRR_A, resamples=500, rng=rng_for(42, 0))
    two = bootstrap_means(MRR_A, resamples=500, rng=rng_for(42, 0))
    other = bootstrap_means(MRR_A, resamples=500, rng=rng_for(43, 0))
    assert np.array_equal(one, two)
    assert not np.array_equal(one, other)


def test_bootstrap_of_a_constant_is_that_constant() -> None:
    low, high = bootstrap_intervals(np.ones(17), resamples=1000)[:, 0]
    assert (low, high) == (1.0, 1.0)


def test_holm_matches_hand_computed_adjustment() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_minimum_detectable_difference_and_questions_needed_by_hand() -> None:
    # (z_0.975 + z_0.8) = 1.959964 + 0.841621 = 2.801585
    assert minimum_detectable_difference(0.5, 100) == pytest.approx(2.801585 * 0.5 / 10, rel=1e-5)
    assert questions_needed(0.1, 0.5) == 197  # ceil((2.801585 * 0.5 / 0.1) ** 2) = ceil(196.22)
    assert minimum_detectable_difference(0.0, 100) is None
    assert questions_needed(0.0, 0.5) is None


def test_roc_auc_equals_mann_whitney_u_over_pairs() -> None:
    pos = np.array([0.9, 0.8, 0.8, 0.7, 0.4, 0.65])
    neg = np.array([0.3, 0.8, 0.5, 0.1])
    u = sps.mannwhitneyu(pos, neg, alternative="two-sided").statistic
    assert roc_auc(pos, neg) == pytest.approx(u / (pos.size * neg.size))
    assert roc_auc(pos, np.array([])) is None
