"""The one ranking rule every metric, fusion and report uses.

trec_eval orders a topic's results by score descending, and breaks ties by document id descending
(`comp_sim_docno` in trec_eval's `form_res_rels.c`: `strcmp(docno2, docno1)`). Python's `str`
ordering equals `strcmp` on UTF-8 bytes, so sorting on `(-score, id)` reversed gives the same order.
MTEB had to fix a tie-break bug twice because it had two rules; we keep one, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def ranked(scores: Mapping[str, float] | Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """Return (id, score) pairs in rank order: score descending, ties by id descending."""
    items = list(scores.items()) if isinstance(scores, Mapping) else list(scores)
    return sorted(items, key=_rank_key, reverse=True)


def _rank_key(item: tuple[str, float]) -> tuple[float, str]:
    return (item[1], item[0])


# The vectorised form of the same rule, for the metric engine's many lists at once, is
# `goldeval.metrics.ranks.above_and_tied` (scores) plus an id comparison only where scores tie.
