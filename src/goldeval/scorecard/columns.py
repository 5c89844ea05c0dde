"""One retriever's scored questions as columns: what every `QuestionResult` holds, without the objects.

`score_run` keeps its results here (issue 23: a record, its kept hits and metrics made for each of 100k
questions cost more than scoring them). Means, curves, flips, the results file (`scorecard.writer`) and the
history read the columns; `RetrieverResult.questions` makes the `QuestionResult`s from them the first time
something asks for the list (`results`), the same objects `score_run` made before. Nothing changes the
columns once made, so a copy of a scorecard shares them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from goldeval.golden.model import Question
from goldeval.ids import DocumentOf
from goldeval.metrics.compute import question_mean
from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import COUNTED, Hit, QuestionResult
from goldeval.scorecard.placing import Judgments, Placed
from goldeval.scorecard.scoring import _as_written, _ranking_keys


@dataclass(frozen=True)
class QuestionColumns:
    """Every question of one retriever's scorecard, in the golden set's order (see the module docstring)."""

    questions: Sequence[Question]
    level: str
    document_of: DocumentOf
    judgments: Judgments
    placed: Placed
    errors: Mapping[str, str]
    answerable: np.ndarray
    """The questions with metrics (not off-topic), by index; `values` has a column for each."""
    headline: np.ndarray
    beside: np.ndarray
    """The headline questions and the synthetic ones beside it (`golden.model.headline_split`), by index."""
    metrics: list[Metric]
    values: np.ndarray
    """values[m, a]: metric `metrics[m]` of question `answerable[a]`."""
    texts: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)
    """Texts the results writer made of every question, kept for the history's copy of the same values
    (`scorecard.writer.rank_list`): a cache of what the columns say, never a change to them."""

    def __len__(self) -> int:
        return len(self.questions)

    def __deepcopy__(self, memo: dict[int, object]) -> QuestionColumns:
        return self  # never changed once made (see the module docstring)

    @cached_property
    def key_rank(self) -> np.ndarray:
        """Per judgment (`judgments`), the 1-based rank of its key in the question's results, 0 if absent."""
        out = np.zeros(len(self.judgments.keys), dtype=np.int64)
        out[self.placed.j] = self.placed.rank
        return out

    @cached_property
    def first_rank(self) -> np.ndarray:
        """Per question, the rank of its first relevant result within the depth (0: none; off-topic: 0)."""
        relevant = self.judgments.grades[self.placed.j] > 0
        q, rank = self.placed.q[relevant], self.placed.rank[relevant]
        out = np.full(len(self.questions) + 1, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(out, q, rank)
        out = np.where(out[:-1] == np.iinfo(np.int64).max, 0, out[:-1])
        off = np.ones(len(self.questions), dtype=bool)
        off[self.answerable] = False
        out[off] = 0
        return out

    @cached_property
    def row(self) -> np.ndarray:
        """Per question, its column in `values` (-1: off-topic)."""
        out = np.full(len(self.questions), -1, dtype=np.int64)
        out[self.answerable] = np.arange(len(self.answerable))
        return out

    def returned(self) -> list[int | None]:
        """Per question, how many results came back (None: it failed)."""
        counts = self.placed.lengths.tolist()
        if not self.errors:
            return counts  # type: ignore[no-any-return]
        return [None if q.id in self.errors else n for q, n in zip(self.questions, counts, strict=True)]

    def means(self, which: np.ndarray, metrics: Sequence[Metric]) -> dict[Metric, float]:
        """Each metric's mean over the questions `which` (answerable ones; {} without any)."""
        if not len(which):
            return {}
        at = {m: i for i, m in enumerate(self.metrics)}
        rows = self.row[which]
        return {m: question_mean(self.values[at[m]][rows]) if m in at else 0.0 for m in metrics}

    def expected_ranks(self, which: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """(n, question, grade, rank) of each expected answer of the questions `which` (numbered 0..), the
        arguments of `scorecard.curves.curves_of`."""
        index = np.full(len(self.questions), -1, dtype=np.int64)
        index[which] = np.arange(len(which))
        owner = index[self.judgments.owner]
        mine = (owner >= 0) & (self.judgments.grades > 0)
        return (len(which), owner[mine], self.judgments.grades[mine].astype(np.float64), self.key_rank[mine])

    def first_ranks(self, which: np.ndarray) -> tuple[list[str], np.ndarray]:
        """The ids of the questions `which` and the rank of each one's first relevant result (0: none)."""
        return [self.questions[i].id for i in which.tolist()], self.first_rank[which]

    def question(self, i: int) -> QuestionResult:
        """Question i's `QuestionResult`, made from the columns."""
        q = self.questions[i]
        a, b = int(self.judgments.bounds[i]), int(self.judgments.bounds[i + 1])
        keys, grades, ranks = self.judgments.keys[a:b], self.judgments.grades[a:b].tolist(), self.key_rank[a:b].tolist()
        kept = self.placed.kept
        c, d = int(kept.bounds[i]), int(kept.bounds[i + 1])
        ids = kept.ids(c, d)
        top = [Hit(pid, score, doc, COUNTED[code], grade if code == 0 else None)
               for pid, score, doc, code, grade in zip(ids, kept.scores[c:d].tolist(), kept.docs(ids, c),
                                                       kept.codes[c:d].tolist(), kept.grades[c:d].tolist(), strict=True)]
        row = int(self.row[i])
        rank = int(self.first_rank[i])
        return QuestionResult(
            id=q.id, question=q.question,
            expected={k: g for k, g in zip(keys, grades, strict=True) if g > 0},
            nonrelevant=[k for k, g in zip(keys, grades, strict=True) if g <= 0],
            off_topic=q.off_topic, rank=rank or None,
            ranks={k: r or None for k, g, r in zip(keys, grades, ranks, strict=True) if g > 0},
            top=top,
            metrics={} if row < 0 else dict(zip(self.metrics, self.values[:, row].tolist(), strict=True)),
            tags=list(q.tags), source=q.source, error=self.errors.get(q.id),
            returned=None if q.id in self.errors else int(self.placed.lengths[i]),
        )

    def results(self) -> list[QuestionResult]:
        """Every question's `QuestionResult`, in order."""
        return [self.question(i) for i in range(len(self.questions))]

    @property
    def scored(self) -> Scored:
        """A new view (`RetrieverResult.of_columns` keeps it): kept here too, it and the columns would hold each
        other, and a scorecard's columns (400 MB at 100k questions) would wait for the cycle collector."""
        return Scored(self)


class Scored(Mapping[str, tuple[dict[str, int], list[tuple[str, float]]]]):
    """`RetrieverResult.scored`: answerable question -> (judged ids at the level, the ranking as the engine
    scored it with TREC-writable ids, `scoring._as_written`), each made by the rule when looked up (only
    the TREC export reads them)."""

    def __init__(self, columns: QuestionColumns) -> None:
        self.columns = columns
        self.index = {columns.questions[i].id: i for i in columns.answerable.tolist()}

    def __getitem__(self, qid: str) -> tuple[dict[str, int], list[tuple[str, float]]]:
        i = self.index[qid]
        columns = self.columns
        judged = columns.judgments.of(i)
        run = columns.placed.run
        positions = run.positions(np.array([i]))
        hits = list(zip(run.ids(positions), run.scores(positions).tolist(), strict=True))
        pairs = list(zip([pid for pid, _ in hits], columns.document_of.many([pid for pid, _ in hits]), strict=True))
        keys = _ranking_keys(pairs, {e: g for e, g in judged.items() if g > 0}, columns.level)
        return judged, _as_written(keys, hits, judged)

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)
