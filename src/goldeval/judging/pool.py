"""Pooled judging: the passages several retrievers put in their top k that nobody has judged yet.

TREC's pooling (Spärck Jones & van Rijsbergen, 1975; Voorhees & Harman, 2005): judge the union of the
top k of every system, because a passage one system finds and the golden set does not list scores as
a miss for that system, right or wrong. `build_pool` reads saved scorecards (any number of files and
retrievers), keeps for every question the passages of any top k that the golden set does not judge,
and notes which retrievers found each one and where. A passage is what the scorecard ranks at its
level: a document at doc level, a chunk at chunk level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from goldeval.errors import InputError
from goldeval.fingerprint import fingerprint
from goldeval.golden.model import GoldenSet
from goldeval.ids import DocumentOf
from goldeval.scorecard.model import Hit, Scorecard


@dataclass
class Found:
    """One retriever that put the passage in its top k, and at which rank."""

    system: str
    rank: int


@dataclass
class PoolItem:
    """One unjudged (question, passage) pair, with who found it."""

    id: str
    question_id: str
    question: str
    passage: str
    found_by: list[Found]
    miss: bool
    """Some pooled retriever has none of the question's relevant passages in its top k."""
    title: str = ""
    text: str = ""

    @property
    def best_rank(self) -> int:
        return min(f.rank for f in self.found_by)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "question_id": self.question_id, "question": self.question, "passage": self.passage,
                "found_by": [{"system": f.system, "rank": f.rank} for f in self.found_by], "miss": self.miss,
                "title": self.title, "text": self.text}


@dataclass
class Pool:
    """The unjudged candidates of a set of scorecards, in golden-set order, best-ranked first."""

    id: str
    k: int
    level: str
    systems: list[str]
    items: list[PoolItem]
    unjudged: dict[str, int] = field(default_factory=dict)
    """System -> unjudged passages in its top k, over every question."""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "k": self.k, "level": self.level, "systems": self.systems,
                "unjudged": self.unjudged, "notes": self.notes, "items": [i.to_dict() for i in self.items]}


def system_labels(cards: Sequence[Scorecard], labels: Sequence[str]) -> list[list[str]]:
    """Each retriever's name, or `label/name` when two files hold retrievers of the same name."""
    names = [r.name for c in cards for r in c.retrievers]
    clash = len(set(names)) < len(names)
    return [[f"{label}/{r.name}" if clash else r.name for r in c.retrievers] for label, c in zip(labels, cards, strict=True)]


def build_pool(cards: Sequence[Scorecard], labels: Sequence[str], golden: GoldenSet, *, k: int = 10,
               texts: Mapping[str, tuple[str, str]] | None = None, pool_id: str | None = None) -> Pool:
    """The pool of every retriever's top `k` in `cards`, judged against `golden` as it is now.

    `texts` maps a passage (at the scorecards' level) to (title, text); without it the scorecards'
    snippets are shown. Questions of the results that the golden set no longer has are skipped, noted.
    """
    if k < 1:
        raise InputError(f"the pool depth must be at least 1, got {k}", value=k, hint="e.g. goldeval pool --depth 10")
    levels = {c.level for c in cards}
    if len(levels) > 1:
        raise InputError("the results were evaluated at different levels (doc and chunk)", value=sorted(levels),
                         hint="pool results of one level")
    level = levels.pop() if levels else "doc"
    notes = []
    kept = min((max(c.k) if c.k else 0) for c in cards) if cards else 0
    if kept and k > kept:
        notes.append(f"the results keep their top {kept} only: pooled at k = {kept}, not {k}")
        k = kept
    names = system_labels(cards, labels)
    document_of, snippets = read_cards(cards)
    by_question: dict[str, dict[str, PoolItem]] = {}
    unjudged = {s: 0 for systems in names for s in systems}
    missing: set[str] = set()
    known = golden.by_id()
    for card, systems in zip(cards, names, strict=True):
        for r, system in zip(card.retrievers, systems, strict=True):
            for q in r.questions:
                if q.id not in known:
                    missing.add(q.id)
                    continue
                judged = judged_keys(golden, q.id, level, document_of)
                relevant = {key for key, grade in judged.items() if grade > 0}
                keys = passage_keys(q.top[:k], level)
                miss = not known[q.id].off_topic and not relevant & {key for key, _ in keys}
                for rank, (key, hit) in enumerate(keys, start=1):
                    if key in judged:
                        continue
                    unjudged[system] += 1
                    items = by_question.setdefault(q.id, {})
                    item = items.get(key)
                    if item is None:
                        title, text = (texts or {}).get(key) or snippets.get(hit.id, ("", ""))
                        item = items[key] = PoolItem("", q.id, known[q.id].question, key, [], False, title, text)
                    item.found_by.append(Found(system, rank))
                    item.miss = item.miss or miss
    if missing:
        notes.append(f"{len(missing)} question(s) of the results are no longer in the golden set and were "
                     f"skipped: {', '.join(sorted(missing)[:5])}")
    ordered = [item for q in golden for item in sorted(by_question.get(q.id, {}).values(),
                                                        key=lambda i: (i.best_rank, -len(i.found_by), i.passage))]
    for n, item in enumerate(ordered):
        item.id = f"p{n + 1}"
    return Pool(pool_id or _pool_id(cards), k, level, [s for systems in names for s in systems], ordered,
                unjudged, notes)


def read_cards(cards: Sequence[Scorecard]) -> tuple[DocumentOf, dict[str, tuple[str, str]]]:
    """What a pool reads from results files: each kept passage's document, and its (title, text) snippet."""
    hits = [h for c in cards for r in c.retrievers for q in r.questions for h in q.top]
    document_of = DocumentOf({h.id: h.doc for h in hits}, {h.doc for h in hits})
    snippets = {pid: (s.get("title", ""), s.get("text", "")) for c in cards for pid, s in c.snippets.items()}
    return document_of, snippets


def passage_keys(top: Sequence[Hit], level: str) -> list[tuple[str, Hit]]:
    """The passages of a top list at this level: documents (each once, at its first chunk) or chunks."""
    out: list[tuple[str, Hit]] = []
    seen: set[str] = set()
    for hit in top:
        key = hit.doc if level == "doc" else hit.id
        if key not in seen:
            seen.add(key)
            out.append((key, hit))
    return out


def judged_keys(golden: GoldenSet, qid: str, level: str, document_of: DocumentOf) -> dict[str, int]:
    """The question's judged ids at this level (doc level: a judged chunk counts for its document)."""
    grades = golden.grades(qid)
    if level == "chunk":
        return dict(grades)
    out: dict[str, int] = {}
    for pid, grade in grades.items():
        doc = document_of(pid)
        out[doc] = max(out.get(doc, grade), grade)
    return out


def _pool_id(cards: Sequence[Scorecard]) -> str:
    """`pool-YYYYMMDD-xxxxxx`: the date and a digest of the runs pooled."""
    digest = fingerprint([[c.identity.created, r.name] for c in cards for r in c.retrievers], length=6)
    return f"pool-{datetime.now(UTC):%Y%m%d}-{digest}"

