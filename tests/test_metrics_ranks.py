"""The engine's counting form of the ranking rule (`goldeval.metrics.ranks`) against a plain Python count.

For each target, the expected counts come from `sum(1 for x in its list if x > s)` and `... == s`, written
here, not from the module: every layout the engine uses (one padded block with the lists in place, blocks
of similar lengths, a block given ready-made by the dict reader), both ways of counting (compare each
target with its row; sort the rows and search), and the -inf padding tying with -inf targets.
"""

from __future__ import annotations

import numpy as np
import pytest

from goldeval.metrics import ranks
from goldeval.metrics.ranks import above_and_tied, above_and_tied_padded, padded

Case = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _case(seed: int, lengths: list[int], targets: int) -> Case:
    """Lists one after the other with few distinct scores (many ties), -inf and +inf among them, and
    targets whose scores are taken from their own list (as the engine's are)."""
    rng = np.random.default_rng(seed)
    lens = np.asarray(lengths, dtype=np.int64)
    scores = rng.choice([-np.inf, -1.5, 0.0, 0.25, 0.25, 1.0, 2.0, np.inf], int(lens.sum()))
    starts = np.cumsum(lens) - lens
    filled = np.flatnonzero(lens)
    row = rng.choice(filled, targets)
    score = scores[starts[row] + rng.integers(0, lens[row])]
    return scores, starts, lens, row, score


def _expected(scores: np.ndarray, starts: np.ndarray, lengths: np.ndarray, row: np.ndarray,
              score: np.ndarray) -> tuple[list[int], list[int]]:  # fmt: skip
    above, tied = [], []
    for r, s in zip(row.tolist(), score.tolist(), strict=True):
        own = scores[starts[r] : starts[r] + lengths[r]].tolist()
        above.append(sum(1 for x in own if x > s))
        tied.append(sum(1 for x in own if x == s))
    return above, tied


SHAPES = {
    "all as long (one block, in place)": [30] * 40,
    "a few shorter, some empty (one padded block)": [30] * 30 + [29, 0, 28, 30, 1] + [30] * 5,
    "ragged (blocks of similar lengths)": [1, 300, 7, 0, 55, 2, 120, 33, 9, 64] * 4,
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("targets", [25, 900])  # a few per list: compared; many: rows sorted
@pytest.mark.parametrize("block_cells", [ranks.BLOCK_CELLS, 200])  # 200: many small blocks
def test_above_and_tied_counts_like_python(shape: str, targets: int, block_cells: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setattr(ranks, "BLOCK_CELLS", block_cells)
    scores, starts, lengths, row, score = _case(len(shape) + targets, SHAPES[shape], targets)
    above, tied = above_and_tied(scores, starts, lengths, row, score)
    assert (above.tolist(), tied.tolist()) == _expected(scores, starts, lengths, row, score)


@pytest.mark.parametrize("targets", [3, 500])
def test_above_and_tied_never_writes_to_the_scores(targets: int) -> None:
    # Lists all as long, one after the other, are read as a view of the caller's array (a TREC run's
    # score column); sorting them (many targets) must sort a copy.
    scores, starts, lengths, row, score = _case(5, [40] * 20, targets)
    before = scores.copy()
    above_and_tied(scores, starts, lengths, row, score)
    np.testing.assert_array_equal(scores, before)


def test_padded_puts_the_padding_after_each_shorter_list() -> None:
    scores = np.array([3.0, 2.0, 1.0, 5.0, 4.0, 7.0, 9.0, 8.0, 6.0])
    block = padded(scores, np.array([3, 2, 0, 1, 3]), 3)
    inf = -np.inf
    expected = [[3.0, 2.0, 1.0], [5.0, 4.0, inf], [inf, inf, inf], [7.0, inf, inf], [9.0, 8.0, 6.0]]
    assert block.tolist() == expected


def test_padded_lists_all_as_long_are_a_view() -> None:
    scores = np.arange(12.0)
    block = padded(scores, np.array([4, 4, 4]), 4)
    assert block.shape == (3, 4) and np.shares_memory(block, scores)


@pytest.mark.parametrize("targets", [20, 700])
def test_above_and_tied_padded_counts_like_python(targets: int) -> None:
    lengths = [25] * 20 + [24, 3, 0, 25]
    scores, starts, lens, row, score = _case(targets, lengths, targets)
    block = padded(scores, lens, 25).copy()
    above, tied = above_and_tied_padded(block, lens, row, score)
    assert (above.tolist(), tied.tolist()) == _expected(scores, starts, lens, row, score)
    assert np.isneginf(score).any()  # the padding must not tie with -inf targets
