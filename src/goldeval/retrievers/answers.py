"""What a retriever answered, checked before it is scored (issue 9: no silent wrong number).

Every retriever goes through the same checks, whatever it is (built in, a search function, a run
file, a reranker, a `Retriever` object of the user's):

- a score that is NaN or infinite, or an id listed twice in one question's answer, makes that
  question an error (its results are dropped; it stays in the scorecard, flagged, scoring 0, and the
  command exits 3): the order of such results says nothing about the retriever;
- ids the corpus does not have are counted: unknown ids (they can only count as misses) and
  `doc#N` ids of a known document that are not passages of the corpus as indexed (they count for
  their document). Both are a warning with counts and examples, or an error with `strict`;
- failures are reported once per distinct message with the questions it hit, cut to a readable
  length, never once per question with a megabyte each.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from goldeval.arrays import distinct_values
from goldeval.errors import InputError
from goldeval.ids import DocumentOf, doc_part, repeated_of
from goldeval.run import Hits, Run
from goldeval.textsafe import MESSAGE_LIMIT, cut, warn
from goldeval.types import QuestionId

EXAMPLES = 3
"""Examples named in a warning; the counts say how many there are in all."""


def refuse_bad_answers(run: Run, queries: Mapping[QuestionId, str] | None = None) -> None:
    """Move each question whose results hold a non-finite score or a repeated id into `run.errors`;
    with `queries`, then report every error of the run (`report_errors`). A run file's columns are checked
    in one pass (their ids are distinct per topic, as the reader refuses a repeat); the results are made
    only to name a question that fails."""
    columns = run.columns
    if columns is not None and columns.unique and np.isfinite(columns.table.value).all():  # every row of the file
        if queries is not None:
            report_errors(run, queries)
        return
    for qid, hits in list(run.results.items()):
        problem = _problem(hits)
        if problem is not None:
            run.errors[qid] = problem
            del run.results[qid]
    if queries is not None:
        report_errors(run, queries)


def _problem(hits: Hits) -> str | None:
    if not hits:
        return None
    pids, scores = zip(*hits, strict=True)  # the common case in C-level passes (10M results: a second)
    try:  # a sum is finite only if every score is
        if math.isfinite(math.fsum(scores)) and len(set(pids)) == len(pids):
            return None
    except (TypeError, OverflowError):
        pass  # a score that is not a number, or finite scores whose sum overflows: look one by one
    seen: dict[str, int] = {}
    for position, (pid, score) in enumerate(hits, start=1):
        if not isinstance(score, (int, float)) or not math.isfinite(score):
            return f"the score of `{pid:.80}` is {score!r:.40}, not a finite number"
        if pid in seen:
            return f"id `{pid:.80}` is returned twice (results {seen[pid]} and {position}); each id may appear once"
        seen[pid] = position
    return None


@dataclass
class ForeignIds:
    """Result ids of one retriever that are not passages of the corpus as indexed."""

    retriever: str
    chunked: bool
    questions: set[QuestionId] = field(default_factory=set)
    unknown: dict[str, int] = field(default_factory=dict)
    """id -> how many times it was returned; the corpus has no such document."""
    chunk_like: dict[str, int] = field(default_factory=dict)
    """`doc#N` ids of a known document that are not passages (they count for `doc`)."""

    def __bool__(self) -> bool:
        return bool(self.unknown or self.chunk_like)

    def message(self) -> str:
        parts = []
        if self.unknown:
            parts.append(f"{sum(self.unknown.values())} unknown ({_examples(self.unknown)}), which can only count "
                         "as misses")
        if self.chunk_like:
            why = "this chunking does not make" if self.chunked else "of a corpus not split into chunks"
            parts.append(f"{sum(self.chunk_like.values())} chunk ids {why} ({_examples(self.chunk_like)}), which "
                         "count for their document")
        total = sum(self.unknown.values()) + sum(self.chunk_like.values())
        return (f"retriever {self.retriever} returned {total} result id(s) on {len(self.questions)} question(s) "
                f"that are not passages of the corpus: {'; '.join(parts)}")


def foreign_ids(run: Run, document_of: DocumentOf, *, chunked: bool) -> ForeignIds:
    """Count the ids of `run` that the corpus does not have (call only with a corpus)."""
    found = ForeignIds(run.name, chunked)
    known = set(document_of.doc_of) | document_of.doc_ids
    for qid, pids in _unknown_in(run, known):
        for pid in pids:
            if pid in known or (repeated_of(pid) is not None and document_of(pid) in known):
                continue  # a later chunk of a document named earlier in the list (goldeval.ids rule 4)
            found.questions.add(qid)
            bucket = found.chunk_like if doc_part(pid) != pid and document_of(pid) != pid else found.unknown
            bucket[pid] = bucket.get(pid, 0) + 1
    return found


def _unknown_in(run: Run, known: set[str]) -> Iterator[tuple[QuestionId, list[str]]]:
    """(question, its ids) for each question holding an id outside `known`. A run file's ids are looked up
    once per distinct id, and only the questions holding one that is not known are decoded."""
    columns = run.columns
    if columns is None:
        for qid, hits in run.results.items():
            if hits and not known.issuperset(pids := [pid for pid, _ in hits]):
                yield qid, pids
        return
    distinct = columns.table.doc_id_objects()
    columns.table.drop_pages()
    positions = columns.positions()
    rows = columns.rows(positions)
    outside = np.fromiter((i not in known for i in distinct[rows].tolist()), dtype=bool, count=len(rows))
    if not outside.any():
        return
    owner = np.repeat(np.arange(len(columns.topics)), columns.lengths)
    for span in distinct_values(owner[outside]).tolist():
        yield columns.topics[span], columns.ids(columns.positions(np.array([span])))


def check_foreign(found: ForeignIds, *, strict: bool) -> str | None:
    """The warning for ids outside the corpus (None when there are none); InputError with `strict`."""
    if not found:
        return None
    if strict:
        raise InputError(found.message(), hint="fix the ids the retriever returns, or drop --strict to score "
                         "them as the warning says")
    return found.message() + " (--strict makes this an error)"


def report_errors(run: Run, queries: Mapping[QuestionId, str]) -> None:
    """One warning per distinct failure message, naming how many questions it hit and a few of them."""
    by_message: dict[str, list[QuestionId]] = {}
    for qid, message in run.errors.items():
        message = cut(message, MESSAGE_LIMIT)
        run.errors[qid] = message  # a megabyte of message, once per question, is noise in the JSON too
        by_message.setdefault(message, []).append(qid)
    for message, qids in by_message.items():
        if len(qids) == 1:
            warn(f"retriever {run.name} failed on question {qids[0]} ({queries.get(qids[0], '')!r:.60}): {message}")
        else:
            shown = ", ".join(qids[:EXAMPLES]) + (f" and {len(qids) - EXAMPLES} more" if len(qids) > EXAMPLES else "")
            warn(f"retriever {run.name} failed on {len(qids)} questions ({shown}): {message}")


def _examples(counts: Mapping[str, int]) -> str:
    shown = ", ".join(f"`{pid:.80}`" for pid in list(counts)[:EXAMPLES])
    return f"e.g. {shown}" + (f", {len(counts) - EXAMPLES} more distinct" if len(counts) > EXAMPLES else "")
