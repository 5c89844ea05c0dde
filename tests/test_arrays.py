"""`goldeval.arrays.distinct_values` gives what `np.unique` gives, by a sort (numpy 2.3+'s hash table is far
slower on arrays of many distinct values)."""

from __future__ import annotations

import numpy as np
import pytest

from goldeval.arrays import distinct_values


@pytest.mark.parametrize("values", [
    np.zeros(0, dtype=np.int64), np.array([7]), np.array([3, 3, 3]), np.array([5, -1, 5, 2, -1, 9]),
    np.array([[4, 1], [1, 4]]), np.array([0.5, -0.0, 2.25, 0.5, 1e-300, -7.0]), np.array([True, False, True]),
])
def test_the_distinct_values_are_numpys(values: np.ndarray) -> None:
    got = distinct_values(values)
    assert got.dtype == values.dtype and got.tolist() == np.unique(values).tolist()


def test_many_distinct_integers_equal_numpys_unique() -> None:
    rng = np.random.default_rng(23)
    for size, high in ((1, 2), (1000, 10), (200_000, 10**9), (200_000, 50)):
        values = rng.integers(-high, high, size)
        assert np.array_equal(distinct_values(values), np.unique(values))
