"""A run's rows in rank order, topic by topic, as positions into its `TrecTable`: no Python object per result.

`goldeval trec` scores a run file from its columns; `goldeval eval --retriever run:FILE` keeps the file the
same way through scoring (issue 23), so a question's results are a span of positions, not a list of tuples.
Position p is table row `order[p]` (row p itself when `order` is None: the file's own order is the rank
order, as most tools write it); topic `topics[i]` holds positions `starts[i]` to `stops[i]`, best first, by
the one ranking rule (`goldeval.ranking.ranked_order`). Selecting questions, cutting at a depth and joining
two selections of one table move spans only; ids are decoded for the positions asked, scores read likewise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from goldeval.ranking import ranked_order
from goldeval.trecio.table import TrecTable
from goldeval.types import PassageId, QuestionId


@dataclass(frozen=True)
class RankedTable:
    """A run table in rank order, each topic a span of positions (see the module docstring)."""

    table: TrecTable
    order: np.ndarray | None
    topics: list[QuestionId]
    starts: np.ndarray
    stops: np.ndarray
    unique: bool = True
    """Whether each topic's ids are distinct: a TREC file's are (its reader refuses a repeated pair)."""

    @classmethod
    def of(cls, table: TrecTable, *, unique: bool = True) -> RankedTable:
        """Every topic of `table`, ranked by the one rule; topics in order of first appearance."""
        order = ranked_order(table.topic, table.value, table.doc_ids)
        codes = table.topic if order is None else table.topic[order]
        # positions are grouped by topic code, codes ascending (`ranked_rows`): each topic ends where the next
        # begins, found by bisection (np.bincount would copy ten million codes to 64 bits first)
        stops = np.searchsorted(codes, np.arange(1, len(table.topics) + 1, dtype=codes.dtype)).astype(np.int64)
        return cls(table, order, list(table.topics), np.concatenate(([0], stops))[:-1], stops, unique)

    @cached_property
    def index(self) -> dict[QuestionId, int]:
        """Topic id -> its span (the first, should a selection list a topic twice)."""
        out: dict[QuestionId, int] = {}
        for i, topic in enumerate(self.topics):
            out.setdefault(topic, i)
        return out

    @property
    def lengths(self) -> np.ndarray:
        return self.stops - self.starts

    def __len__(self) -> int:
        return len(self.topics)

    def positions(self, spans: np.ndarray | None = None) -> np.ndarray:
        """Every position of the spans `spans` (all by default), span by span, each in rank order."""
        starts, stops = (self.starts, self.stops) if spans is None else (self.starts[spans], self.stops[spans])
        return spread(starts, stops - starts)

    def rows(self, positions: np.ndarray) -> np.ndarray:
        """The table rows at `positions`."""
        return positions if self.order is None else self.order[positions]

    def scores(self, positions: np.ndarray) -> np.ndarray:
        return np.asarray(self.table.value[self.rows(positions)], dtype=np.float64)

    def ids(self, positions: np.ndarray) -> list[PassageId]:
        return self.table.doc_ids(self.rows(positions))

    def select(self, topics: Sequence[QuestionId], depth: int | None = None) -> RankedTable:
        """Topics `topics`, in that order, each cut at `depth`; a topic the table lacks has no results."""
        at = np.fromiter(map(self.index.get, topics, [-1] * len(topics)), dtype=np.int64, count=len(topics))
        known = at >= 0
        starts = np.where(known, self.starts[np.maximum(at, 0)], 0) if len(self.topics) else np.zeros(len(at), np.int64)
        stops = np.where(known, self.stops[np.maximum(at, 0)], 0) if len(self.topics) else np.zeros(len(at), np.int64)
        out = replace(self, topics=list(topics), starts=starts, stops=stops)
        return out if depth is None else out.cut(depth)

    def cut(self, depth: int) -> RankedTable:
        """Each topic's first `depth` results."""
        return replace(self, stops=np.minimum(self.stops, self.starts + max(depth, 0)))

    def joins(self, other: RankedTable) -> bool:
        """Whether `other` is a selection of the same ranked table (`joined` then keeps both as spans)."""
        return other.table is self.table and other.order is self.order

    def joined(self, *others: RankedTable) -> RankedTable:
        """This selection's topics, then each of `others`', of the same table (see `joins`; the caller keeps the
        topics of them apart)."""
        parts = (self, *others)
        return replace(self, topics=[t for part in parts for t in part.topics],
                       starts=np.concatenate([part.starts for part in parts]),
                       stops=np.concatenate([part.stops for part in parts]), unique=all(p.unique for p in parts))

    def __deepcopy__(self, memo: dict[int, object]) -> RankedTable:
        """Never copied: nothing changes a ranked table (a copy of a scorecard shares it; a run file's bytes
        would otherwise be read into memory)."""
        return self


def spread(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """`concatenate([arange(s, s + n) for s, n in zip(starts, lengths)])`, in numpy."""
    lengths = np.maximum(np.asarray(lengths, dtype=np.int64), 0)
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    first = np.cumsum(lengths) - lengths
    return np.repeat(np.asarray(starts, dtype=np.int64) - first, lengths) + np.arange(total, dtype=np.int64)
