"""Where each result of a run landed, as columns: the judged keys it found and their ranks, the repeats,
and the top results kept for the report (issue 23: no Python object per result, as `goldeval trec`).

What a result counts for is the level rule's (`goldeval.scorecard.scoring`: `_judged_at_level`,
`_ranking_keys`, `marks_of`); this module only applies it to many questions at once:

- a question whose every result id is its own document (`ids.DocumentOf.keeps`: a run of document ids,
  no chunk of an expected document) has the ids themselves as its ranking keys, each once (a TREC file
  holds each pair once; a Run's repeats are found by hash first), so its judged keys are found by
  `goldeval trec`'s join of the run's rows with the judgments (`metrics.trec_judge.join_rows`: 64-bit
  hashes of the ids' bytes, every match then compared byte for byte) and ranked by position;
- any other question (a chunk id of a document, an id listed twice) gets its keys from `_ranking_keys`,
  one question at a time, as every question did before.

A run read from a TREC file stays its table (`trecio.RankedTable`); a Run of (id, score) lists is laid out
as one in memory (`TrecTable.of_ids`), so both take the same path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import chain, compress
from operator import itemgetter

import numpy as np

from goldeval.golden.model import GoldenSet
from goldeval.ids import CHUNK_SEP, DocumentOf
from goldeval.metrics.judge import RELEVANCE_LEVEL, Judged, Located, assemble
from goldeval.metrics.trec_judge import join_rows
from goldeval.run import Run
from goldeval.scorecard.scoring import REPEAT, _judged_at_level, _ranking_keys, marks_of
from goldeval.trecio import TrecTable, pair_keys
from goldeval.trecio.ranked import RankedTable, spread
from goldeval.trecio.table import id_hashes
from goldeval.types import QuestionId


@dataclass(frozen=True)
class Judgments:
    """Each question's judged ids at the evaluation's level (`scoring._judged_at_level`), flat: question i's
    are `keys`/`grades[bounds[i]:bounds[i + 1]]`, in the order its judged dict holds them."""

    bounds: np.ndarray
    keys: list[str]
    grades: np.ndarray

    @cached_property
    def owner(self) -> np.ndarray:
        """The question of each judgment."""
        return np.repeat(np.arange(len(self.bounds) - 1, dtype=np.int64), np.diff(self.bounds))

    def of(self, i: int) -> dict[str, int]:
        """Question i's judged ids -> grade."""
        a, b = int(self.bounds[i]), int(self.bounds[i + 1])
        return dict(zip(self.keys[a:b], self.grades[a:b].tolist(), strict=True))


def judgments_at(golden: GoldenSet, level: str, document_of: DocumentOf) -> Judgments:
    """The golden set's judgments at `level`, question by question. At chunk level, and at doc level where
    every judged id is its own document (checked in bulk), they are the set's grades as they stand."""
    grades = golden.qrels.graded(q.id for q in golden)
    keys = list(chain.from_iterable(grades))
    if level != "chunk" and not document_of.keeps(keys):
        grades = [_judged_at_level(g, level, document_of) for g in grades]
        keys = list(chain.from_iterable(grades))
    counts = np.fromiter(map(len, grades), dtype=np.int64, count=len(grades))
    values = np.fromiter(chain.from_iterable(g.values() for g in grades), dtype=np.int64, count=len(keys))
    return Judgments(np.concatenate(([0], np.cumsum(counts))), keys, values)


@dataclass(frozen=True)
class Kept:
    """The first `keep` results of each question, what the results file keeps: question i's are
    `bounds[i]:bounds[i + 1]`; `codes` index `scorecard.model.COUNTED`, `grades` -1 unless relevant. Their ids
    are read from the run's table when asked for (`ids`), a block at a time: a str each for 100k questions x 10
    would be 80 MB held from scoring to writing (issue 23)."""

    bounds: np.ndarray
    table: TrecTable
    rows: np.ndarray
    scores: np.ndarray
    codes: np.ndarray
    grades: np.ndarray
    moved: dict[int, str]
    """Kept result -> its document, where that is not its id (a chunk of a document at doc level)."""

    def ids(self, a: int = 0, b: int | None = None) -> list[str]:
        """The ids of kept results a..b-1."""
        ids = self.table.doc_ids(self.rows[a:b])
        self.table.drop_pages()
        return ids

    def docs(self, ids: list[str], a: int = 0) -> list[str]:
        """The documents of kept results a.. (`ids` theirs): each its own id but those `moved`."""
        if not self.moved:
            return ids
        docs = list(ids)
        for k in range(a, a + len(ids)):
            if k in self.moved:
                docs[k - a] = self.moved[k]
        return docs


@dataclass(frozen=True)
class Placed:
    """Where one run's results landed for every question of the golden set, in its order."""

    run: RankedTable
    """The run's results, question i's the span i (`RankedTable.select` of the golden set's ids)."""
    lengths: np.ndarray
    """Results per question (within the depth)."""
    q: np.ndarray
    rank: np.ndarray
    j: np.ndarray
    """Each judged key found: its question, 1-based rank and judgment (an index into `Judgments`)."""
    repeat_q: np.ndarray
    repeat_rank: np.ndarray
    """Each result counting for a key seen before in its list (`scoring.REPEAT`): question and rank."""
    kept: Kept

    def judged(self, judgments: Judgments, which: np.ndarray, floor: float) -> Judged:
        """The metric engine's view of the questions `which` (numbered 0.. in that order): every judgment of
        theirs, and the judged keys found with a grade of at least `floor`, as `metrics.judge.judge_ranked`
        locates them in the lists of keys (`assemble` orders them by question and rank)."""
        n, owner, values, q, found = self._located(judgments, which, floor)
        grade = judgments.grades[self.j[found]].astype(np.float64)
        return assemble(n, RELEVANCE_LEVEL, self.lengths[which], owner, values, q, self.rank[found], grade)

    def located(self, judgments: Judgments, which: np.ndarray) -> Located:
        """`metrics.judge.locate_ranked`'s arrays for the questions `which` (relevant keys located): what the
        best/worst-case ranges complete (`metrics.judged.ranges_from`)."""
        floor = min(RELEVANCE_LEVEL, 1)
        n, owner, values, q, found = self._located(judgments, which, floor)
        grade = judgments.grades[self.j[found]].astype(np.float64)
        return Located(n, RELEVANCE_LEVEL, floor, self.lengths[which], owner, values, q, self.rank[found], grade)

    def _located(self, judgments: Judgments, which: np.ndarray,
                 floor: float) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        row = np.full(len(self.lengths), -1, dtype=np.int64)
        row[which] = np.arange(len(which))
        owner = row[judgments.owner]
        mine = owner >= 0
        q = row[self.q]
        found = (q >= 0) & (judgments.grades[self.j] >= floor)
        return len(which), owner[mine], judgments.grades[mine].astype(np.float64), q[found], found


def place(run: Run, golden: GoldenSet, judgments: Judgments, level: str, document_of: DocumentOf,
          keep: int) -> Placed:  # fmt: skip
    """Where `run`'s results landed for each question of `golden` (see the module docstring)."""
    qids = [q.id for q in golden]
    columns = _aligned(run, qids)
    q_of_code = _q_of_code(columns, qids)
    by_rule = _moving(columns, q_of_code, document_of)
    q, rank, j = _joined(columns, qids, q_of_code, judgments, by_rule)
    ruled = _by_the_rule(columns, judgments, np.flatnonzero(by_rule), level, document_of)
    q, rank, j = np.concatenate((q, ruled.q)), np.concatenate((rank, ruled.rank)), np.concatenate((j, ruled.j))
    kept = _kept(columns, judgments, keep, q, rank, j, ruled)
    return Placed(columns, columns.lengths, q, rank, j, ruled.repeat_q, ruled.repeat_rank, kept)


def _aligned(run: Run, qids: list[QuestionId]) -> RankedTable:
    """The run's results as a ranked table whose span i is question `qids[i]`'s (empty where it has none)."""
    if run.columns is not None:
        return run.columns.select(qids)
    lists = [run.results.get(q) or [] for q in qids]
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    flat = list(chain.from_iterable(lists))
    scores = np.fromiter(map(itemgetter(1), flat), dtype=np.float64, count=len(flat))
    topic = np.repeat(np.arange(len(qids), dtype=np.int32), lengths)
    table = TrecTable.of_ids("run", list(qids), topic, list(map(itemgetter(0), flat)), scores)
    stops = np.cumsum(lengths)
    return RankedTable(table, None, list(qids), stops - lengths, stops, unique=False)


def _q_of_code(columns: RankedTable, qids: list[QuestionId]) -> np.ndarray:
    """The question index of each topic code of the run's table (len(qids): not a question of the set)."""
    index = {q: i for i, q in enumerate(qids)}
    return np.fromiter(map(index.get, columns.table.topics, [len(qids)] * len(columns.table.topics)),
                       dtype=np.int64, count=len(columns.table.topics))


def _moving(columns: RankedTable, q_of_code: np.ndarray, document_of: DocumentOf) -> np.ndarray:
    """Per question, whether its results need the rule one by one: an id that is not its own document, or
    an id listed twice (only a Run's can be: a file's reader refuses a repeat). Rows beyond the depth or of
    other topics may mark a question too: it then takes the slower path to the same keys."""
    table, n = columns.table, len(columns)
    marked = np.zeros(n + 1, dtype=bool)
    rows = table.rows_holding(CHUNK_SEP)
    if len(rows):
        ids = table.doc_ids(rows)
        moved = np.fromiter(map(str.__ne__, document_of.many(ids), ids), dtype=bool, count=len(ids))
        marked[q_of_code[table.topic[rows[moved]]]] = True
    if document_of.moved_plain:  # a corpus whose passage ids name no document: found by hash, then by the rule
        hashes = id_hashes(sorted(document_of.moved_plain))
        marked[q_of_code[table.topic[np.isin(table.doc_hash, hashes)]]] = True
    if not columns.unique and len(table):
        keys = pair_keys(table.doc_hash, table.topic)
        ordered = np.sort(keys)
        twice = ordered[1:][ordered[1:] == ordered[:-1]]
        if len(twice):
            marked[q_of_code[table.topic[np.isin(keys, twice)]]] = True
    return marked[:n]


def _joined(columns: RankedTable, qids: list[QuestionId], q_of_code: np.ndarray, judgments: Judgments,
            by_rule: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(question, rank, judgment) of each result whose id is a judged key, for the questions not `by_rule`."""
    n, table = len(qids), columns.table
    empty = np.zeros(0, dtype=np.int64)
    if not len(table) or not len(judgments.keys):
        return empty, empty, empty
    q_of_code = np.where(np.append(by_rule, False)[q_of_code], n, q_of_code)  # those go by the rule instead
    owner = judgments.owner
    rows = np.flatnonzero(~by_rule[owner])
    keys = TrecTable.of_ids("qrels", list(qids), owner, judgments.keys, judgments.grades)
    hits, match = join_rows(keys, rows, owner[rows], table, q_of_code, n)
    q = q_of_code[table.topic[hits]]
    if columns.order is None:
        position = hits
    else:
        inverse = np.empty(len(columns.order), dtype=np.int64)
        inverse[columns.order] = np.arange(len(columns.order))
        position = inverse[hits]
    inside = position < columns.stops[q]  # within the depth
    q, position, match = q[inside], position[inside], match[inside]
    return q, position - columns.starts[q] + 1, match


@dataclass(frozen=True)
class _Ruled:
    """What `_by_the_rule` found: judged keys (question, rank, judgment), repeats (question, rank), and each
    result whose document is not its own id (question, rank, document)."""

    q: np.ndarray
    rank: np.ndarray
    j: np.ndarray
    repeat_q: np.ndarray
    repeat_rank: np.ndarray
    moved_q: np.ndarray
    moved_rank: np.ndarray
    moved_docs: list[str]


def _by_the_rule(columns: RankedTable, judgments: Judgments, which: np.ndarray, level: str,
                 document_of: DocumentOf) -> _Ruled:  # fmt: skip
    """The ranking keys of the questions `which` by the level rule (`scoring._ranking_keys`), one at a time."""
    out: list[list[int]] = [[], [], [], [], [], [], []]
    docs: list[str] = []
    for i in which.tolist():
        ids = columns.ids(columns.positions(np.array([i])))
        pairs = list(zip(ids, document_of.many(ids), strict=True))
        judged = judgments.of(i)
        at = {key: int(judgments.bounds[i]) + k for k, key in enumerate(judged)}
        keys = _ranking_keys(pairs, {e: g for e, g in judged.items() if g > 0}, level)
        for rank, (key, (pid, doc)) in enumerate(zip(keys, pairs, strict=True), start=1):
            if key.startswith(REPEAT):
                out[3].append(i)
                out[4].append(rank)
            elif key in at:
                out[0].append(i)
                out[1].append(rank)
                out[2].append(at[key])
            if doc != pid:
                out[5].append(i)
                out[6].append(rank)
                docs.append(doc)
    a = [np.asarray(column, dtype=np.int64) for column in out]
    return _Ruled(a[0], a[1], a[2], a[3], a[4], a[5], a[6], docs)


def _kept(columns: RankedTable, judgments: Judgments, keep: int, q: np.ndarray, rank: np.ndarray, j: np.ndarray,
          ruled: _Ruled) -> Kept:  # fmt: skip
    """The first `keep` results of every question, each marked by the rule (`scoring.marks_of`)."""
    counts = np.minimum(columns.lengths, keep)
    bounds = np.concatenate(([0], np.cumsum(counts)))
    positions = spread(columns.starts, counts)
    near = ruled.moved_rank <= counts[ruled.moved_q]  # a result whose document is not its id, within the kept ones
    moved = dict(zip((bounds[ruled.moved_q[near]] + ruled.moved_rank[near] - 1).tolist(),
                     compress(ruled.moved_docs, near.tolist()), strict=True))  # fmt: skip
    judged = np.zeros(len(positions), dtype=bool)
    repeat = np.zeros(len(positions), dtype=bool)
    grade = np.zeros(len(positions), dtype=np.int64)
    top = rank <= counts[q]
    at = bounds[q[top]] + rank[top] - 1
    judged[at], grade[at] = True, judgments.grades[j[top]]
    top = ruled.repeat_rank <= counts[ruled.repeat_q]
    repeat[bounds[ruled.repeat_q[top]] + ruled.repeat_rank[top] - 1] = True
    codes = marks_of(repeat, judged, grade)
    return Kept(bounds, columns.table, columns.rows(positions), columns.scores(positions), codes,
                np.where(codes == 0, grade, -1), moved)
