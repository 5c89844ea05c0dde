"""The golden set nouns: Question, Provenance, Judgment, Qrels and GoldenSet.

Questions and judgments are kept apart, as TREC keeps topics apart from qrels:
- a `Question` is what a user asks, with an `intent` (answerable or off-topic), tags and open `Provenance`
  (who or what wrote it). The intent is a field: once a question is read, nothing downstream (metrics,
  reports, exports) infers it again. Only a golden-set record that does not say its intent gets one, from
  `implied_intent` (its one home);
- a `Judgment` is one (question, document) verdict with a graded relevance: `grade >= 1` relevant,
  `grade <= 0` judged not relevant. A document with no judgment is *unjudged*, which is not the same as
  judged not relevant (pooled judging and bpref need the difference);
- `Qrels` holds every judgment of a golden set; `GoldenSet` holds both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from goldeval.fingerprint import plain_fingerprint
from goldeval.memory import gc_paused
from goldeval.types import DocId, QuestionId

Intent = Literal["answerable", "off_topic"]
"""What a question is for: `answerable` (the corpus answers it) or `off_topic` (it does not)."""

INTENTS: tuple[Intent, ...] = ("answerable", "off_topic")


def implied_intent(grades: Iterable[int]) -> Intent:
    """The intent of a record that does not state one, as goldset 0.1 read it: `off_topic` when no grade is
    relevant (>= 1; `"expected": []`, or only grades of 0 or below), else `answerable`.

    The one home of "is this question off-topic" when the file does not say: the JSONL reader fills a
    missing `intent` with it, the writer leaves `intent` out when it equals it, and
    `GoldenSet.fingerprint` adds the intent only when it differs from it (so 0.1 results stay comparable).
    TREC topics carry no intent and are all answerable (`goldeval.golden.trec`): never implied from grades.
    """
    return "answerable" if max(grades, default=0) > 0 else "off_topic"  # some grade >= 1

PROVENANCE_KINDS = ("hand", "synthetic", "log", "incident")
"""Who or what wrote a question: a person, a language model, a production search log, an incident."""

BESIDE_KINDS = ("synthetic",)
"""Provenance kinds reported beside the headline, never in it: a question a model wrote while reading its
answer borrows the answer's words and flatters search (docs/synthetic.md)."""


class Sourced(Protocol):
    """Anything with a provenance kind and an intent: a `Question`, a scored `QuestionResult`."""

    @property
    def source(self) -> str: ...

    @property
    def off_topic(self) -> bool: ...


S = TypeVar("S", bound=Sourced)


def headline_split(items: Iterable[S]) -> tuple[list[S], list[S]]:
    """(headline, beside): which answerable questions make the headline, and which are reported beside it.

    The one rule for every number a reader acts on (means, intervals, curves, flips, paired verdicts,
    gates; issue 18): hand-written, production-log and incident questions make the headline; synthetic
    ones are reported beside it, never pooled into it. A set with no answerable question but synthetic
    ones has nothing else to report: its synthetic questions are the headline, and nothing is beside.
    Off-topic questions are in neither (they are counted apart). Order is kept.
    """
    answerable = [q for q in items if not q.off_topic]
    headline = [q for q in answerable if q.source not in BESIDE_KINDS]
    if not headline:
        return answerable, []
    return headline, [q for q in answerable if q.source in BESIDE_KINDS]


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a question came from: `kind` plus open details.

    The details are free-form so a generator can record what produced a question without a schema
    change. Fields goldeval itself writes (docs/golden.md lists them): for `synthetic`, `generator`
    (the backend), `model`, `prompt_hash`, `temperature`, `source_passage`, `source_offsets`
    ([start, end] characters), `created`, `reviewed_by`, `history`; for `log`, `log` (the file) and
    `count`; for `incident`, `incident` (a reference) and `created`.
    """

    kind: str = "hand"
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dict(self.details)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        details = {k: v for k, v in data.items() if k != "kind"}
        return cls(str(data.get("kind", "hand")), details)


HAND = Provenance("hand")


@dataclass(frozen=True, slots=True)
class Question:
    """A question as users ask it. Its answers are judgments, kept in the golden set's `Qrels`."""

    id: QuestionId
    question: str
    intent: Intent = "answerable"
    tags: tuple[str, ...] = ()
    provenance: Provenance = HAND
    notes: str = ""
    line: int | None = None
    """Line in the golden set file, for error messages."""

    @property
    def off_topic(self) -> bool:
        return self.intent == "off_topic"

    @property
    def source(self) -> str:
        """The provenance kind (`hand`, `synthetic`, `log`, `incident`): questions of different
        sources are reported apart, never pooled in one number."""
        return self.provenance.kind


@dataclass(frozen=True, slots=True)
class Judgment:
    """One verdict on one (question, document or chunk) pair, with who or what judged it and when."""

    question_id: QuestionId
    doc_id: DocId
    grade: int
    """>= 1 relevant (higher is more relevant); 0 or less judged not relevant."""
    judge: str = ""
    """Who or what judged: a person's name, `golden-file` (the set as written), `pool:NAME`, a model."""
    at: str = ""
    """When, as ISO 8601; empty when the source does not say."""
    note: str = ""

    @property
    def relevant(self) -> bool:
        return self.grade > 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"doc": self.doc_id, "grade": self.grade}
        if self.judge:
            out["judge"] = self.judge
        if self.at:
            out["at"] = self.at
        if self.note:
            out["note"] = self.note
        return out


class Qrels:
    """Every judgment of a golden set, by question then document, in the order they were given.

    `grades(qid)` holds judged documents only (relevant and not); a document absent from it is unjudged.
    Adding a judgment for a pair already judged replaces it (the newest verdict counts).

    Kept as each question's {doc: grade} (a plain dict of str -> int, which the cyclic GC does not track),
    with the `Judgment` itself only where it says more than its grade (who judged, when, why): a golden set
    of 100k questions holds half a million judgments, and a frozen object each cost more to make and to
    keep than reading them (issue 23). `judgments()` and iteration give `Judgment`s equal to those added.
    """

    def __init__(self, judgments: Iterable[Judgment] = ()) -> None:
        self._grades: dict[QuestionId, dict[DocId, int]] = {}
        self._said: dict[QuestionId, dict[DocId, Judgment]] = {}
        """The judgments that carry a judge, a time or a note, by question then document."""
        self.changes = 0
        """Judgments added or replaced so far: what `GoldenSet.fingerprint`'s memo checks the qrels by."""
        for j in judgments:
            self.add(j)

    @classmethod
    def from_grades(cls, grades: Mapping[QuestionId, Mapping[DocId, int]], *, judge: str = "") -> Qrels:
        if judge:
            return cls(Judgment(q, d, g, judge) for q, docs in grades.items() for d, g in docs.items())
        qrels = cls()
        for q, docs in grades.items():
            qrels.add_grades(q, dict(docs))
        return qrels

    def add(self, judgment: Judgment) -> None:
        q, doc = judgment.question_id, judgment.doc_id
        self.changes += 1
        self._grades.setdefault(q, {})[doc] = judgment.grade
        if judgment.judge or judgment.at or judgment.note:
            self._said.setdefault(q, {})[doc] = judgment
        elif q in self._said:
            self._said[q].pop(doc, None)

    def add_grades(self, qid: QuestionId, grades: dict[DocId, int]) -> None:
        """Judgments of `qid` that say only their grade, {doc: grade} in order; the dict is kept as it is
        (the caller gives it up) when the question has none yet."""
        if not grades:
            return
        if qid in self._grades:
            for doc, grade in grades.items():
                self.add(Judgment(qid, doc, grade))  # each one counted in `changes` there
        else:
            self._grades[qid] = grades
            self.changes += 1

    def judgments(self, qid: QuestionId) -> list[Judgment]:
        said = self._said.get(qid)
        if said:
            return [said.get(d) or Judgment(qid, d, g) for d, g in self._grades[qid].items()]
        return [Judgment(qid, d, g) for d, g in self._grades.get(qid, {}).items()]

    def grades(self, qid: QuestionId) -> dict[DocId, int]:
        """Judged documents of a question -> grade (relevant and judged not relevant)."""
        return dict(self._grades.get(qid, {}))

    def graded(self, qids: Iterable[QuestionId]) -> list[Mapping[DocId, int]]:
        """Each question's judged documents -> grade, as kept (read them, never change them): `grades` without
        a copy per question, for a pass over every question of a large set."""
        empty: Mapping[DocId, int] = {}
        return [self._grades.get(qid, empty) for qid in qids]

    def relevant(self, qid: QuestionId) -> dict[DocId, int]:
        """The relevant documents of a question (grade >= 1) -> grade."""
        return {d: g for d, g in self._grades.get(qid, {}).items() if g > 0}

    def is_judged(self, qid: QuestionId, doc: DocId) -> bool:
        return doc in self._grades.get(qid, {})

    def judged_ids(self, qids: Iterable[QuestionId]) -> set[DocId]:
        """Every id judged (relevant or not) for any of `qids`."""
        out: set[DocId] = set()
        for qid in qids:
            out.update(self._grades.get(qid, ()))
        return out

    def any_not_relevant(self) -> bool:
        """Whether some judgment says not relevant (grade 0 or less): judging was partial."""
        return any(min(grades.values()) <= 0 for grades in self._grades.values())

    def subset(self, qids: Iterable[QuestionId]) -> Qrels:
        """The judgments of these questions only (a golden set with some questions dropped)."""
        keep = set(qids)
        return Qrels(j for j in self if j.question_id in keep)

    def to_dict(self) -> dict[QuestionId, dict[DocId, int]]:
        """Plain dicts, as pytrec_eval and ranx take them (judged documents only)."""
        return {q: dict(docs) for q, docs in self._grades.items()}

    def __iter__(self) -> Iterator[Judgment]:
        for qid in self._grades:
            yield from self.judgments(qid)

    def __len__(self) -> int:
        return sum(map(len, self._grades.values()))

    def __contains__(self, qid: object) -> bool:
        return qid in self._grades


@dataclass
class GoldenSet:
    """Questions in file order, keyed by id, and their judgments."""

    questions: list[Question]
    qrels: Qrels = field(default_factory=Qrels)
    path: str = ""
    notes: str = ""
    version: int | None = None
    """The frozen version number, when the set was frozen (`goldeval golden freeze`)."""
    warnings: list[str] = field(default_factory=list)
    """Things dropped or assumed while loading (for example unjudged TREC topics), for the CLI to show."""
    changelog: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    """The changelog's summary for the scorecard's `golden` block (`golden.changelog.golden_changes`: `{}`
    without a changelog), read with the set by `load_golden`, so an evaluation does not read the set's
    files again by path after scoring (issue 22); None for a set made in code."""
    _fingerprinted: tuple[tuple[Question, ...], Qrels, int, str] | None = field(
        default=None, init=False, compare=False, repr=False)
    """The last `fingerprint()`: the questions, qrels and qrels' changes it was made of, and the digest."""

    @classmethod
    def load(cls, path: str | Path, *, corpus: Any = None) -> GoldenSet:
        """Read a golden set (JSONL, a JSON list, or a BEIR/Cranfield folder), its ids checked against
        `corpus` (a Corpus or a set of ids) when given: `golden.io.load_golden`."""
        from goldeval.golden.io import load_golden

        return load_golden(path, corpus=corpus)

    def save(self, path: str | Path) -> None:
        """Write the set as golden JSONL, atomically: `golden.io.write_golden_jsonl`."""
        from goldeval.golden.io import write_golden_jsonl

        write_golden_jsonl(self, path)

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    def __getitem__(self, qid: QuestionId) -> Question:
        return self.by_id()[qid]

    def by_id(self) -> dict[QuestionId, Question]:
        return {q.id: q for q in self.questions}

    def grades(self, qid: QuestionId) -> dict[DocId, int]:
        """The judged documents of one question -> grade (see `Qrels.grades`)."""
        return self.qrels.grades(qid)

    def relevant(self, qid: QuestionId) -> dict[DocId, int]:
        """The relevant documents of one question (grade >= 1) -> grade."""
        return self.qrels.relevant(qid)

    def fingerprint(self) -> str:
        """`goldeval.fingerprint` of the questions' ids, texts, intents and judged grades.

        Stable across question order and judgment order; tags, provenance, notes and who judged do not
        count. Comparisons refuse to compare results computed on golden sets with different
        fingerprints.

        Kept until the set changes (0.3 s at 100k questions, asked by a frozen set's load, its scorecard, the
        statistics' key and each configuration of a sweep): the same questions (frozen objects, compared in
        order) and the same qrels with no judgment added since (`Qrels.changes`). The {doc: grade} dicts
        `Qrels.graded` and `add_grades` share are never changed in place (their contract).
        """
        questions, made = tuple(self.questions), self._fingerprinted
        if made is not None and made[1] is self.qrels and made[2] == self.qrels.changes and made[0] == questions:
            return made[3]  # the same content (questions are frozen): a frozen set's load and its scorecard ask
        with gc_paused():  # a list per question: at 100k the GC's passes over them cost twice the work
            graded = self.qrels.graded(q.id for q in questions)
            digest = plain_fingerprint(sorted(map(self._canonical, questions, graded)))  # texts and integers
        self._fingerprinted = (questions, self.qrels, self.qrels.changes, digest)
        return digest

    @staticmethod
    def _canonical(q: Question, grades: Mapping[DocId, int]) -> list[Any]:
        """A question as fingerprinted. Its intent is added only when it differs from `implied_intent` of
        its grades, so 0.1 results stay comparable."""
        out: list[Any] = [q.id, q.question, sorted(grades.items())]
        if q.intent != implied_intent(grades.values()):
            out.append(q.intent)
        return out

    def joined(self, other: GoldenSet) -> GoldenSet:
        """This set's questions followed by `other`'s, with both sets' judgments (for example generated
        questions beside the hand-written ones: `headline_split` keeps them apart in every number).
        Raises ValueError when a question id is in both."""
        clash = sorted(self.by_id().keys() & other.by_id().keys())
        if clash:
            raise ValueError(f"question ids in both sets: {', '.join(clash[:5])}")
        return GoldenSet([*self.questions, *other.questions], Qrels([*self.qrels, *other.qrels]), path=self.path,
                         notes=self.notes, version=self.version, warnings=[*self.warnings, *other.warnings])

    @property
    def answerable(self) -> list[Question]:
        return [q for q in self.questions if not q.off_topic]

    @property
    def off_topic(self) -> list[Question]:
        return [q for q in self.questions if q.off_topic]
