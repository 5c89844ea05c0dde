"""Regression: exact vector search cut ties at the k-th score by memory order, not the ranking rule."""

from __future__ import annotations

import numpy as np

from goldeval.retrievers.backends.index import ExactIndex


def test_ties_at_the_cut_keep_the_ids_the_ranking_rule_keeps() -> None:
    index = ExactIndex()
    same = np.full((6, 2), 1 / np.sqrt(2), dtype=np.float32)  # six duplicate chunks
    index.add(list("abcdef"), same)
    ids, scores = index.search(same[:1], 2)
    # score descending, ties by id descending (trec_eval's rule, and pgvector's exact SQL order)
    assert ids == [["f", "e"]]
    assert scores.shape == (1, 2)


def test_a_tie_below_a_clear_winner() -> None:
    index = ExactIndex()
    index.add(["x", "y", "z"], np.eye(3, dtype=np.float32))
    ids, _ = index.search(np.eye(3, dtype=np.float32), 2)
    assert ids == [["x", "z"], ["y", "z"], ["z", "y"]]
