"""The golden set nouns: Question and GoldenSet."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field

from goldeval.types import DocId, QuestionId


@dataclass(frozen=True)
class Question:
    """A question as users ask it, with every document or chunk that answers it.

    `expected` maps each expected id to its graded relevance (1 when the golden set gives a plain
    list). An empty `expected` marks an off-topic question: the corpus does not cover it.
    """

    id: QuestionId
    question: str
    expected: dict[DocId, int] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    source: str = "hand"
    """`hand` (written by a person) or `synthetic` (generated); reported apart, never pooled."""
    notes: str = ""
    line: int | None = None
    """Line in the golden set file, for error messages."""

    @property
    def off_topic(self) -> bool:
        return not any(rel > 0 for rel in self.expected.values())


@dataclass
class GoldenSet:
    """Questions in file order, keyed by id."""

    questions: list[Question]
    path: str = ""
    notes: str = ""
    warnings: list[str] = field(default_factory=list)
    """Things dropped or assumed while loading (for example unjudged TREC topics), for the CLI to show."""

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    def __getitem__(self, qid: QuestionId) -> Question:
        return self.by_id()[qid]

    def by_id(self) -> dict[QuestionId, Question]:
        return {q.id: q for q in self.questions}

    def qrels(self) -> dict[QuestionId, dict[DocId, int]]:
        """Graded judgments for every question; off-topic questions map to an empty dict."""
        return {q.id: dict(q.expected) for q in self.questions}

    def fingerprint(self) -> str:
        """A sha256 hex digest of the questions' ids, texts and expected judgments.

        Stable across question order and the key order of `expected`; tags, sources and notes do not
        count. Comparisons refuse to compare results computed on golden sets with different
        fingerprints.
        """
        canonical = sorted(
            [q.id, q.question, sorted(q.expected.items())] for q in self.questions
        )
        payload = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @property
    def answerable(self) -> list[Question]:
        return [q for q in self.questions if not q.off_topic]

    @property
    def off_topic(self) -> list[Question]:
        return [q for q in self.questions if q.off_topic]
