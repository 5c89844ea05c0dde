"""The one ranking rule every metric, fusion and report uses.

trec_eval orders a topic's results by score descending, and breaks ties by document id descending
(`comp_sim_docno` in trec_eval's `form_res_rels.c`: `strcmp(docno2, docno1)`). Python's `str`
ordering equals `strcmp` on UTF-8 bytes, so sorting on `(-score, id)` reversed gives the same order.
MTEB had to fix a tie-break bug twice because it had two rules; we keep one, here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np


def ranked(scores: Mapping[str, float] | Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """Return (id, score) pairs in rank order: score descending, ties by id descending."""
    items = list(scores.items()) if isinstance(scores, Mapping) else list(scores)
    return sorted(items, key=_rank_key, reverse=True)


def _rank_key(item: tuple[str, float]) -> tuple[float, str]:
    return (item[1], item[0])


Ids = np.ndarray | Callable[[np.ndarray], list[str]]
"""The ids of rows: an array of str, or a function giving the str ids of the rows asked (a TREC table decodes
only those: the rule reads an id only where two scores of a list tie)."""


def ranked_rows(groups: np.ndarray, scores: np.ndarray, ids: Ids) -> np.ndarray:
    """Row indices of many lists at once (row i: list `groups[i]`, `scores[i]`, str id i), each list
    in the order `ranked` gives it, lists by ascending group: score descending, then, where scores tie,
    id descending. Ties are rare: only the tied ids are ranked, once, by Python's str order (the
    comparison `ranked` makes), then one lexsort orders them."""
    order = np.lexsort((-scores, groups))
    group, value = groups[order], scores[order]
    same = (group[1:] == group[:-1]) & (value[1:] == value[:-1])
    if not same.any():
        return order
    tied = np.zeros(len(order), dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    at = np.flatnonzero(tied)
    run_of = (np.cumsum(~np.concatenate(([False], same))) - 1)[at]
    names = _names(ids, order[at])
    position = {s: i for i, s in enumerate(sorted(set(names)))}
    rank = np.fromiter(map(position.__getitem__, names), dtype=np.int64, count=len(names))
    order[at] = order[at][np.lexsort((-rank, run_of))]
    return order


def ranked_order(groups: np.ndarray, scores: np.ndarray, ids: Ids) -> np.ndarray | None:
    """`ranked_rows`, or None when the rows are in that order already (a run file as most tools write it:
    each list's lines together, best first): checked in a few passes over the rows, where sorting them
    would cost more than reading them (issue 23). Rows that tie on score must then have ids descending."""
    if len(groups) < 2:
        return None
    ties = []
    for begin in range(0, len(groups) - 1, _SLICE):  # in slices: a few MB of temporaries, not 7 bools a row at once
        end = min(begin + _SLICE, len(groups) - 1) + 1
        g, s = groups[begin:end], scores[begin:end]
        same = g[1:] == g[:-1]
        if (g[1:] < g[:-1]).any() or (same & (s[1:] > s[:-1])).any() or np.isnan(s).any():
            return ranked_rows(groups, scores, ids)
        ties.append(begin + np.flatnonzero(same & (s[1:] == s[:-1])))
    tied = np.concatenate(ties)
    if len(tied):
        first, second = _names(ids, tied), _names(ids, tied + 1)
        if any(a < b for a, b in zip(first, second, strict=True)):
            return ranked_rows(groups, scores, ids)
    return None


_SLICE = 1 << 20
"""Rows `ranked_order` checks at a time (a run of 100k questions x 100 is ten million)."""


def _names(ids: Ids, rows: np.ndarray) -> list[str]:
    return ids(rows) if callable(ids) else ids[rows].tolist()


# The metric engine's form of the same rule, which counts the scores above each judged document instead
# of ordering whole lists, is `goldeval.metrics.ranks.above_and_tied` plus an id comparison where they tie.
