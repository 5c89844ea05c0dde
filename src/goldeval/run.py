"""A Run: what a retriever returned for each question, in rank order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from goldeval.metrics.judge import gc_paused
from goldeval.ranking import ranked, ranked_rows
from goldeval.types import PassageId, QuestionId

if TYPE_CHECKING:
    from goldeval.trecio import TrecTable

SHARED = False
Hits = list[tuple[PassageId, float]]
"""One question's results as (passage id, score) pairs in rank order."""


@dataclass
class Run:
    """Ranked results per question, plus the questions whose retrieval failed and why.

    `results[qid]` is always in rank order (score descending, ties by id descending); build a Run
    through `Run.from_scores` or `Run.add` so that rule is applied once, here, or through
    `Run.add_ranked` for a producer that already ranks by the same rule (see there).
    """

    name: str
    results: dict[QuestionId, Hits] = field(default_factory=dict)
    errors: dict[QuestionId, str] = field(default_factory=dict)

    def add(self, qid: QuestionId, scores: Mapping[PassageId, float] | Iterable[tuple[PassageId, float]]) -> None:
        self.results[qid] = ranked(scores)

    def add_ranked(self, qid: QuestionId, hits: Hits) -> None:
        """Keep `hits` as given, already in rank order: `add` without its sort, for a retriever that
        ranks by the one rule itself. Re-sorting a BM25 top 100 for every question cost more than the
        numba search of it (issue 12). Safe for `goldeval.retrievers.bm25_kernel`: it orders by float32
        score, whose Python float is the same number (so the same comparisons), then by the passage's
        position in Python's sorted order of the ids (`Postings.id_rank`, `sorted` on `str`, the
        comparison `ranked` makes), both descending; its output through `add_ranked`
        equals it through `add`, ties included (tests/test_bm25_search.py). Anything else: use `add`."""
        self.results[qid] = hits

    @classmethod
    def from_scores(cls, name: str, scores: Mapping[QuestionId, Mapping[PassageId, float]]) -> Run:
        run = cls(name)
        for qid, docs in scores.items():
            run.add(qid, docs)
        return run

    def to_dict(self) -> dict[QuestionId, dict[PassageId, float]]:
        """Plain dicts, as pytrec_eval and ranx take them."""
        return {qid: dict(hits) for qid, hits in self.results.items()}

    def top(self, k: int) -> Run:
        """A copy cut to the top k results per question."""
        return Run(self.name, {q: h[:k] for q, h in self.results.items()}, dict(self.errors))

    def __iter__(self) -> Iterator[QuestionId]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    # --- TREC run files: "qid Q0 docno rank score tag" -----------------------------------------

    @classmethod
    def read_trec(cls, path: str | Path, name: str | None = None) -> Run:
        """Read a TREC run file (`qid Q0 docno rank score tag`), as trec_eval reads it: the rank
        column is ignored, and a bad line is an InputError naming the file and the line."""
        from goldeval.trecio import read_run_table

        table = read_run_table(path)
        name = name or table.tag or Path(path).stem
        return cls.ranked_from(name, *_ranked_columns(table))  # the table is gone before the tuples are made

    @classmethod
    def ranked_from(cls, name: str, topics: list[QuestionId], bounds: list[int], ids: list[PassageId],
                    scores: list[float]) -> Run:  # fmt: skip
        """A Run of hits already in rank order, topic `topics[i]` holding `ids`/`scores[bounds[i]:bounds[i + 1]]`."""
        run = cls(name)
        with gc_paused():  # millions of tuples: the cyclic GC's passes over them would cost more than making them
            for qid, a, b in zip(topics, bounds[:-1], bounds[1:], strict=True):
                run.add_ranked(qid, list(zip(ids[a:b], scores[a:b], strict=True)))
        return run


def _ranked_columns(table: TrecTable) -> tuple[list[QuestionId], list[int], list[PassageId], list[float]]:
    """The rows of a run table in rank order (`Run.ranked_from`'s arguments): sorted by topic (in order
    of first appearance), then score descending, then, where a topic's scores tie, id descending, as
    `goldeval.ranking.ranked` sorts them."""
    ids = table.doc_id_objects()
    table.drop_pages()
    order = ranked_rows(table.topic, table.value, ids)
    topic, value = table.topic[order], table.value[order]
    starts = np.concatenate(([0], np.flatnonzero(topic[1:] != topic[:-1]) + 1))
    topics = [table.topics[code] for code in topic[starts].tolist()]
    return topics, [*starts.tolist(), len(order)], ids[order].tolist(), value.tolist()
