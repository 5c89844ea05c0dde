"""Seeded bootstrap over questions, vectorised: one resample matrix serves every series at once.

A bootstrap resample draws n questions with replacement; the mean of a metric over the resample is
`counts @ values / n`, where `counts[r, i]` is how many times question i was drawn in resample r.
Building `counts` once per block of resamples and multiplying it by a (questions x series) matrix
computes every system, every metric and every paired difference in one BLAS call. Because the same
draws are used for all series, differences between systems are *paired* (the same questions are
resampled for both), as a paired bootstrap must be (Efron & Tibshirani 1993, ch. 16).

Intervals are percentile intervals (Efron & Tibshirani 1993, ch. 13): the alpha/2 and 1 - alpha/2
quantiles of the resampled means, with numpy's linear interpolation, as
`scipy.stats.bootstrap(method="percentile")` computes them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

FloatArray = np.ndarray
"""A float64 numpy array."""

MIN_INTERVAL_QUESTIONS = 10
"""Fewer questions than this get no interval (the scorecard says the set is too small for one):
resampling 9 questions that all hit gives `1.00–1.00`, which reads as certainty (issue 13)."""
_BLOCK_CELLS = 2_000_000
"""Resample rows per block are chosen so one block holds about this many counts (16 MB)."""


def rng_for(seed: int, stream: int) -> np.random.Generator:
    """An independent generator per purpose (bootstrap, randomization, ...) derived from one seed."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


def resample_counts(n: int, resamples: int, rng: np.random.Generator) -> Iterator[FloatArray]:
    """Yield blocks of `counts` (rows = resamples, columns = questions), `resamples` rows in all."""
    rows = max(1, _BLOCK_CELLS // max(n, 1))
    done = 0
    while done < resamples:
        b = min(rows, resamples - done)
        # int32 draws are about 3x faster than int64; b * n stays far below 2**31 (_BLOCK_CELLS).
        idx = rng.integers(0, n, size=(b, n), dtype=np.int32)
        idx += (np.arange(b, dtype=np.int32) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=b * n).reshape(b, n)
        yield counts.astype(np.float64)
        done += b


def bootstrap_means(values: FloatArray, *, resamples: int, rng: np.random.Generator) -> FloatArray:
    """Resampled means of each column of `values` (questions x series): shape (resamples, series)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    n = values.shape[0]
    if n == 0:
        return np.full((resamples, values.shape[1]), np.nan)
    blocks = [counts @ values for counts in resample_counts(n, resamples, rng)]
    return np.vstack(blocks) / n


def percentile_interval(samples: FloatArray, confidence: float) -> FloatArray:
    """The (low, high) percentile interval of each column: shape (2, series)."""
    alpha = 1.0 - confidence
    return np.percentile(samples, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)


def bootstrap_intervals(
    values: FloatArray, *, resamples: int = 10_000, seed: int = 0, confidence: float = 0.95, stream: int = 0
) -> FloatArray:
    """Percentile intervals for the mean of each column of `values`: shape (2, series).

    Seeded: the same values, seed and stream give the same interval on every run.
    """
    means = bootstrap_means(values, resamples=resamples, rng=rng_for(seed, stream))
    return percentile_interval(means, confidence)


def unpaired_diff_intervals(
    a: FloatArray, b: FloatArray, *, resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> FloatArray:
    """Percentile intervals for mean(a) - mean(b), column by column, when the rows of a and b are
    different questions (each resampled on its own): shape (2, series)."""
    ma = bootstrap_means(np.asarray(a, dtype=np.float64), resamples=resamples, rng=rng_for(seed, 11))
    mb = bootstrap_means(np.asarray(b, dtype=np.float64), resamples=resamples, rng=rng_for(seed, 12))
    return percentile_interval(ma - mb, confidence)


def unpaired_diff_interval(
    a: FloatArray, b: FloatArray, *, resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile interval for mean(a) - mean(b) when a and b are different questions (resampled apart)."""
    low, high = unpaired_diff_intervals(np.asarray(a, dtype=np.float64)[:, None], np.asarray(b, dtype=np.float64)[:, None],
                                        resamples=resamples, seed=seed, confidence=confidence)[:, 0]
    return float(low), float(high)
