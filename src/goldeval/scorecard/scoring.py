"""Scoring one run against a golden set: the ranking keys of each result at `doc` or `chunk` level, the
metrics of every answerable question, where each expected answer landed, and judged@k.

At `doc` level a retrieved chunk counts for its document: the first chunk of an expected document is the
hit, and later chunks of a document already seen count as non-relevant, so no document is counted twice.
At `chunk` level an expected chunk id must itself be retrieved; an expected id without `#` (a whole
document) is satisfied by any of its chunks, once. Off-topic questions keep their top results (their
top-1 score is what separability reads) and no metrics. Each kept result says what it counted for
(`hit_marks`, `marks_of`), so no reader (the page included) needs a level rule of its own.

The rules are here (`_judged_at_level`, `_ranking_keys`, `marks_of`); `score_run` applies them to every
question at once in columns (`scorecard.placing`, issue 23), and keeps the results as columns too
(`scorecard.columns.QuestionColumns`): a question's record is made when something reads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np

from goldeval.golden.model import GoldenSet, headline_split
from goldeval.ids import DocumentOf
from goldeval.metrics.compute import compute, needs_all_judged
from goldeval.metrics.definitions import Metric
from goldeval.metrics.judged import judged_share, range_depth, ranges_from
from goldeval.run import Run
from goldeval.scorecard.model import COUNTED, QuestionResult, RetrieverResult

if TYPE_CHECKING:
    from goldeval.scorecard.placing import Judgments, Placed

REPEAT = "\x00repeat:"
"""Prefix of the ranking key of a result that counts for a key already seen: never relevant, unjudged."""


def score_run(
    name: str, run: Run, golden: GoldenSet, metrics: list[Metric], level: str,
    document_of: DocumentOf, keep: int, seconds: float,
) -> RetrieverResult:
    """`run` scored on every question of `golden`; `keep` results per question are kept for the report.

    The means and curves are left to `goldeval.scorecard.curves.summarise` (over the headline questions)."""
    from goldeval.scorecard.columns import QuestionColumns
    from goldeval.scorecard.placing import judgments_at, place

    judgments = judgments_at(golden, level, document_of)
    placed = place(run, golden, judgments, level, document_of, keep)
    index = {q.id: i for i, q in enumerate(golden)}
    answerable = np.array([i for i, q in enumerate(golden) if not q.off_topic], dtype=np.int64)
    headline, beside = (np.array([index[q.id] for q in part], dtype=np.int64) for part in headline_split(golden))
    floor = -np.inf if needs_all_judged(metrics) else 1
    values = compute(placed.judged(judgments, answerable, floor), metrics) if len(answerable) else {}
    columns = QuestionColumns(
        golden.questions, level, document_of, judgments, placed, dict(run.errors), answerable, headline, beside,
        list(metrics), np.array([values[m] for m in metrics]) if len(answerable) else np.zeros((len(metrics), 0)))
    at = np.full(len(golden.questions), -1, dtype=np.int64)
    at[answerable] = np.arange(len(answerable))  # the headline questions are answerable: their scored values
    low = {m: values[m][at[headline]] for m in metrics} if len(answerable) else None
    judged_at, ranges = _coverage(placed, judgments, headline, metrics, keep, low)
    return RetrieverResult.of_columns(name, columns, seconds=seconds, judged=judged_at, ranges=ranges)


def _coverage(placed: Placed, judgments: Judgments, headline: np.ndarray, metrics: Sequence[Metric],
              pool_depth: int, low: Mapping[Metric, np.ndarray] | None = None,
              ) -> tuple[list[float], dict[Metric, tuple[float, float]]]:  # fmt: skip
    """judged@k for k = 1..pool_depth and each metric's range over the headline questions
    (`goldeval.metrics.judged`): a result is settled when its key is judged or it is a repeat. `low`: each
    metric's values on the headline questions, as scored (the low end's, `ranges_from`)."""
    if not len(headline):
        return [], {}
    row = np.full(len(placed.lengths), -1, dtype=np.int64)
    row[headline] = np.arange(len(headline))
    lengths = placed.lengths[headline]
    q = np.concatenate((row[placed.q], row[placed.repeat_q]))
    rank = np.concatenate((placed.rank, placed.repeat_rank))
    mine = q >= 0
    q, rank = q[mine], rank[mine]
    share = judged_share(len(headline), lengths, q, rank, pool_depth)
    deepest = range_depth(metrics, pool_depth)
    if deepest is None:
        return share, {}
    depth = np.minimum(lengths, deepest)
    every_q = np.repeat(np.arange(len(headline), dtype=np.int64), depth)
    every_rank = np.arange(int(depth.sum()), dtype=np.int64) - np.repeat(np.cumsum(depth) - depth, depth) + 1
    settled = np.zeros(len(every_q), dtype=bool)
    first = np.cumsum(depth) - depth
    inside = rank <= depth[q]
    settled[first[q[inside]] + rank[inside] - 1] = True
    located = placed.located(judgments, headline)
    return share, ranges_from(located, every_q[~settled], every_rank[~settled], metrics, pool_depth, low=low)


def hit_marks(hits: Sequence[tuple[str, str]], judged: Mapping[str, int], level: str) -> list[tuple[str, int | None]]:
    """What each retrieved (id, document), in rank order, counted for: (`relevant`, grade), (`repeat`, None)
    for an id counted already (a later chunk of a document at doc level), (`nonrelevant`, None) or
    (`unjudged`, None). `judged` holds this level's judged ids -> grade, as the metrics saw them."""
    expected = {e: g for e, g in judged.items() if g > 0}
    return _marks(_ranking_keys(hits, expected, level), judged)


def marks_of(repeat: np.ndarray, judged: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """What each result counted for, as an index into `COUNTED`, from its ranking key: a repeat of a key
    already counted; else relevant when the key is judged with a grade above 0; else judged not relevant
    when the key is judged at all; else unjudged. The one form of the rule, for many results at once."""
    return np.select([repeat, judged & (grade > 0), judged], [1, 0, 2], 3).astype(np.uint8)


def key_marks(lists: Sequence[Sequence[str]], judged: Sequence[Mapping[str, int]]) -> list[list[tuple[str, int | None]]]:
    """What each ranking key of each list counted for (`marks_of`), list i's keys judged by `judged[i]`."""
    flat = list(chain.from_iterable(lists))
    owners = [j for j, keys in zip(judged, lists, strict=True) for _ in keys]
    repeat = np.fromiter((k.startswith(REPEAT) for k in flat), dtype=bool, count=len(flat))
    known = np.fromiter(map(Mapping.__contains__, owners, flat), dtype=bool, count=len(flat))
    grade = np.fromiter(map(lambda j, k: j.get(k, 0), owners, flat), dtype=np.int64, count=len(flat))
    marks = [(COUNTED[c], g if c == 0 else None) for c, g in zip(marks_of(repeat, known, grade).tolist(),
                                                                 grade.tolist(), strict=True)]  # fmt: skip
    out, at = [], 0
    for keys in lists:
        out.append(marks[at : at + len(keys)])
        at += len(keys)
    return out


def _marks(keys: Sequence[str], judged: Mapping[str, int]) -> list[tuple[str, int | None]]:
    """What each ranking key counted for (`hit_marks`' rule, from keys already made)."""
    return key_marks([keys], [judged])[0]


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
