"""Paired significance tests over questions, and what a set of this size can detect.

- `sign_test` / `mcnemar_exact`: the exact two-sided binomial test on the questions where the two
  systems differ (McNemar 1947, exact form; for a 0/1 metric such as hit@k or precision@1 the
  discordant pairs are the only ones that carry information). p = min(1, 2 P[X <= min(b, c)]) with
  X ~ Binomial(b + c, 1/2), as `scipy.stats.binomtest(min(b, c), b + c, 0.5)` computes it.
- `randomization_test`: the paired randomization (permutation) test of the mean difference
  (Fisher 1935; Smucker, Allan & Carterette 2007 for IR): each question's difference keeps or flips
  its sign with probability 1/2. Exact (every sign pattern) when the non-zero differences are few
  enough, else `rounds` random patterns with p = (hits + 1) / (rounds + 1), as
  `scipy.stats.permutation_test(permutation_type="samples")` does.
- `holm`: Holm's (1979) step-down adjustment for several comparisons.
- `minimum_detectable_difference` / `questions_needed`: the normal approximation for a paired
  two-sided test, MDD = (z_{1-alpha/2} + z_{power}) * sd(d) / sqrt(n) (Cohen 1988).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from goldeval.stats.bootstrap import FloatArray

EXACT_MAX_NONZERO = 13
"""Up to this many non-zero differences (2**13 = 8192 sign patterns) the randomization test is exact."""


def sign_test(diffs: Sequence[float] | FloatArray) -> float:
    """Exact two-sided sign test on paired differences (zeros dropped)."""
    d = np.asarray(diffs, dtype=np.float64)
    wins = int(np.sum(d > 0))
    losses = int(np.sum(d < 0))
    return binomial_two_sided(min(wins, losses), wins + losses)


def mcnemar_exact(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> float:
    """Exact McNemar test for two 0/1 outcomes on the same questions."""
    return sign_test(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))


def binomial_two_sided(k: int, n: int) -> float:
    """P-value of the exact two-sided binomial test of k successes in n at p = 1/2, k <= n/2."""
    if n == 0:
        return 1.0
    k = min(k, n - k)
    # Exact integers: C(n, i) built up term by term (math.comb per term is quadratic in k).
    term, tail = 1, 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / 2**n)


def randomization_pvalues(
    diffs: FloatArray, *, rounds: int = 10_000, rng: np.random.Generator
) -> FloatArray:
    """Two-sided paired randomization p-values for each column of `diffs` (questions x series).

    The random sign patterns are shared by all columns (one matrix product), which keeps each
    column's test valid on its own.
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    n, series = d.shape
    observed = d.sum(axis=0)
    out = np.ones(series)
    if n == 0:
        return out
    nonzero = (d != 0).sum(axis=0)
    exact = nonzero <= EXACT_MAX_NONZERO
    for j in np.flatnonzero(exact):
        out[j] = _exact_pvalue(d[d[:, j] != 0, j])
    rest = np.flatnonzero(~exact)
    if rest.size:
        out[rest] = _random_pvalues(d[:, rest], observed[rest], rounds, rng)
    return out


def randomization_test(
    a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray, *, rounds: int = 10_000, seed: int = 0
) -> float:
    """Two-sided paired randomization test of mean(a) - mean(b)."""
    from goldeval.stats.bootstrap import rng_for

    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return float(randomization_pvalues(d, rounds=rounds, rng=rng_for(seed, 1))[0])


def _tolerance(observed: FloatArray) -> FloatArray:
    # Sums of the same numbers in another order differ in the last bits; count those as ties
    # (scipy.stats.permutation_test uses the same relative tolerance, 100 machine epsilons).
    return np.abs(observed) * np.finfo(np.float64).eps * 100


def _exact_pvalue(d: FloatArray) -> float:
    m = d.size
    if m == 0:
        return 1.0
    patterns = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(np.float64)
    sums = d.sum() - 2 * (patterns @ d)
    observed = abs(d.sum())
    hits = np.sum(np.abs(sums) >= observed - _tolerance(np.array(observed)))
    return float(hits / 2**m)


def _random_pvalues(d: FloatArray, observed: FloatArray, rounds: int, rng: np.random.Generator) -> FloatArray:
    n = d.shape[0]
    total = d.sum(axis=0)
    threshold = np.abs(observed) - _tolerance(observed)
    hits = np.zeros(d.shape[1])
    rows = max(1, 2_000_000 // n)
    done = 0
    while done < rounds:
        b = min(rows, rounds - done)
        # one random bit per question and round: unpacking random bytes is ~5x faster than random floats
        bits = np.unpackbits(rng.integers(0, 256, size=(b, (n + 7) // 8), dtype=np.uint8), axis=1)
        flips = bits[:, :n].astype(np.float64)
        sums = total - 2 * (flips @ d)  # sum of s_i d_i with s_i = 1 - 2 flip_i
        hits += np.sum(np.abs(sums) >= threshold, axis=0)
        done += b
    return np.asarray((hits + 1) / (rounds + 1))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, min(1.0, (m - position) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


def _z_sum(alpha: float, power: float) -> float:
    normal = NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


def minimum_detectable_difference(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The smallest mean difference a paired two-sided test on n questions detects with this power."""
    if n < 2 or not sd > 0:
        return None
    return _z_sum(alpha, power) * sd / math.sqrt(n)


def questions_needed(diff: float, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """How many questions a paired test needs to detect a mean difference `diff` with this power; None
    when there is no difference to detect (|diff| below 1e-9: floating-point noise, which would ask for
    10^30 questions) or no spread to size a test by."""
    if abs(diff) < NO_DIFFERENCE or not sd > 0:
        return None
    return max(2, math.ceil((_z_sum(alpha, power) * sd / abs(diff)) ** 2))


NO_DIFFERENCE = 1e-9
