"""Scoring one run against a golden set: the ranking keys of each result at `doc` or `chunk` level, the
metrics of every answerable question, where each expected answer landed, and judged@k.

At `doc` level a retrieved chunk counts for its document: the first chunk of an expected document is the
hit, and later chunks of a document already seen count as non-relevant, so no document is counted twice.
At `chunk` level an expected chunk id must itself be retrieved; an expected id without `#` (a whole
document) is satisfied by any of its chunks, once. Off-topic questions keep their top results (their
top-1 score is what separability reads) and no metrics. Each kept result says what it counted for
(`hit_marks`), so no reader (the page included) needs a level rule of its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter

from goldeval.golden.model import GoldenSet, Question, headline_split
from goldeval.ids import DocumentOf
from goldeval.metrics.compute import evaluate_ranked
from goldeval.metrics.definitions import Metric
from goldeval.metrics.judged import judged_coverage
from goldeval.run import Run
from goldeval.scorecard.model import Hit, QuestionResult, RetrieverResult

REPEAT = "\x00repeat:"
"""Prefix of the ranking key of a result that counts for a key already seen: never relevant, unjudged."""


def score_run(
    name: str, run: Run, golden: GoldenSet, metrics: list[Metric], level: str,
    document_of: DocumentOf, keep: int, seconds: float,
) -> RetrieverResult:
    """`run` scored on every question of `golden`; `keep` results per question are kept for the report.

    The means and curves are left to `goldeval.scorecard.curves.summarise` (over the headline questions)."""
    rankings: dict[str, list[str]] = {}
    qrels: dict[str, dict[str, int]] = {}
    per_q: list[tuple[Question, dict[str, int], dict[str, int | None], list[str], list[tuple[str, str]]]] = []
    for q in golden:
        judged = _judged_at_level(golden.grades(q.id), level, document_of)
        expected = {e: g for e, g in judged.items() if g > 0}
        # each id's document once, the keys once: the kept results' marks are the keys' first `keep`
        pids = list(map(itemgetter(0), run.results.get(q.id, [])))
        pairs = list(zip(pids, document_of.many(pids), strict=True))
        keys = _ranking_keys(pairs, expected, level)
        rankings[q.id] = keys
        qrels[q.id] = judged
        ranks: dict[str, int | None] = dict.fromkeys(expected)
        for e in expected:
            if e in keys:  # a key is never repeated (a repeat becomes a placeholder): its one position
                ranks[e] = keys.index(e) + 1
        per_q.append((q, judged, ranks, keys, pairs))
    answerable = [q.id for q in golden if not q.off_topic]
    headline = [q.id for q in headline_split(golden)[0]]
    values = evaluate_ranked(qrels, rankings, metrics, qids=answerable) if answerable else {}
    scored = Scored(answerable, qrels, rankings, run.results)
    row = {qid: i for i, qid in enumerate(answerable)}
    columns = {m: values[m].tolist() for m in metrics} if answerable else {}
    questions = []
    for q, judged, ranks, keys, pairs in per_q:
        found = [r for r in ranks.values() if r is not None]
        hits = run.results.get(q.id, [])[:keep]
        marks = _marks(keys[:keep], judged)
        at = row.get(q.id)
        questions.append(QuestionResult(
            id=q.id,
            question=q.question,
            expected={e: g for e, g in judged.items() if g > 0},
            nonrelevant=[e for e, g in judged.items() if g <= 0],
            off_topic=q.off_topic,
            rank=min(found) if found and not q.off_topic else None,
            ranks=ranks,
            top=[Hit(pid, float(score), doc, counted, grade)
                 for (pid, score), (_, doc), (counted, grade) in zip(hits, pairs, marks, strict=False)],
            metrics={} if q.off_topic or at is None else {m: columns[m][at] for m in metrics},
            tags=list(q.tags),
            source=q.source,
            error=run.errors.get(q.id),
            returned=None if q.id in run.errors else len(run.results.get(q.id, [])),
        ))
    # judged@k and the best/worst case, over the questions the headline is made of
    judged_at, ranges = judged_coverage(qrels, rankings, headline, metrics, keep)
    return RetrieverResult(name=name, questions=questions, metrics={}, seconds=seconds, judged=judged_at,
                           ranges=ranges, scored=scored)


class Scored(Mapping[str, tuple[dict[str, int], list[tuple[str, float]]]]):
    """`RetrieverResult.scored`: answerable question -> (judged ids at the level, the ranking as the engine
    scored it with TREC-writable ids, `_as_written`), each made when looked up (only the TREC export
    reads them: a million tuples per 10k questions otherwise made for nothing, issue 23)."""

    def __init__(self, qids: list[str], qrels: dict[str, dict[str, int]], rankings: dict[str, list[str]],
                 results: Mapping[str, list[tuple[str, float]]]) -> None:  # fmt: skip
        self.qids, self.qrels, self.rankings, self.results = dict.fromkeys(qids), qrels, rankings, results

    def __getitem__(self, qid: str) -> tuple[dict[str, int], list[tuple[str, float]]]:
        if qid not in self.qids:
            raise KeyError(qid)
        return self.qrels[qid], _as_written(self.rankings[qid], self.results.get(qid, []), self.qrels[qid])

    def __iter__(self) -> Iterator[str]:
        return iter(self.qids)

    def __len__(self) -> int:
        return len(self.qids)


def hit_marks(hits: Sequence[tuple[str, str]], judged: Mapping[str, int], level: str) -> list[tuple[str, int | None]]:
    """What each retrieved (id, document), in rank order, counted for: (`relevant`, grade), (`repeat`, None)
    for an id counted already (a later chunk of a document at doc level), (`nonrelevant`, None) or
    (`unjudged`, None). `judged` holds this level's judged ids -> grade, as the metrics saw them."""
    expected = {e: g for e, g in judged.items() if g > 0}
    return _marks(_ranking_keys(hits, expected, level), judged)


def _marks(keys: Sequence[str], judged: Mapping[str, int]) -> list[tuple[str, int | None]]:
    """What each ranking key counted for (`hit_marks`' rule, from keys already made)."""
    out: list[tuple[str, int | None]] = []
    for key in keys:
        if key.startswith(REPEAT):
            out.append(("repeat", None))
        elif judged.get(key, 0) > 0:
            out.append(("relevant", judged[key]))
        else:
            out.append(("nonrelevant" if key in judged else "unjudged", None))
    return out


def question_marks(q: QuestionResult, level: str) -> list[tuple[str, int | None]]:
    """`hit_marks` of a scored question's kept results, from what it stores (expected, nonrelevant, top)."""
    judged = {**{e: 0 for e in q.nonrelevant}, **q.expected}
    return hit_marks([(h.id, h.doc) for h in q.top], judged, level)


def _judged_at_level(grades: Mapping[str, int], level: str, document_of: DocumentOf) -> dict[str, int]:
    """Judged ids as the ranking keys of this level (doc level maps chunk ids to their documents; a
    document keeps its best grade). Judged-not-relevant ids stay, apart from unjudged ones."""
    if level == "chunk":
        return dict(grades)
    out: dict[str, int] = {}
    for e, grade in grades.items():
        doc = document_of(e)
        out[doc] = max(out.get(doc, grade), grade)
    return out


def _ranking_keys(hits: Sequence[tuple[str, str]], expected: Mapping[str, int], level: str) -> list[str]:
    """The key each retrieved (id, document) counts for; a key seen before becomes a never-relevant
    placeholder (`REPEAT`), so no document or chunk is counted twice."""
    if level == "doc":
        docs = [doc for _, doc in hits]
        if len(set(docs)) == len(docs):  # no document twice (the common case): the keys are the documents
            return docs
    keys: list[str] = []
    seen: set[str] = set()
    for position, (pid, doc) in enumerate(hits):
        if level == "doc":
            key = doc
        else:
            key = pid if pid in expected else (doc if doc in expected else pid)
        if key in seen:
            key = f"{REPEAT}{position}"
        seen.add(key)
        keys.append(key)
    return keys


def _as_written(keys: list[str], hits: list[tuple[str, float]], judged: Mapping[str, int]) -> list[tuple[str, float]]:
    """The ranking keys with the retriever's scores, as a TREC run can hold them: a repeat placeholder
    (a later chunk of a document already seen) becomes the passage's own id, which the level's qrels do
    not judge, so it counts for nothing there as the placeholder does here (a judged or taken id gets
    `~N`: TREC ids are unique per topic)."""
    if REPEAT[0] not in "".join(keys):  # no placeholder (ids never hold NUL in practice; one that does goes below)
        return list(zip(keys, map(itemgetter(1), hits), strict=True))
    taken = set(keys) | set(judged)
    out = []
    for position, (key, (pid, score)) in enumerate(zip(keys, hits, strict=True)):
        if key.startswith(REPEAT):
            key = pid if pid not in taken else f"{pid}~{position + 1}"
            taken.add(key)
        out.append((key, score))
    return out
