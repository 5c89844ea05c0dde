"""Judging: where each question's judged documents landed in its results, as flat arrays (`Judged`).

All our metrics depend only on the rank of each retrieved judged document, its judgment, the number of
relevant documents R and the number retrieved. So no list is ranked whole: each question's judged
documents are looked up in its results, the scores above and equal to each one are counted
(`goldeval.metrics.ranks`: lists sorted or compared by numpy all at once; the C reader counts the same
in C, a twin the tests keep equal), ties are broken by id, descending (trec_eval's rule from
`goldeval.ranking`), and `assemble` keeps flat arrays sorted by (question, rank) for the kernels of
`goldeval.metrics.compute`.

Reading the dicts is most of the cost (issue 23). Two readers give the same arrays (`Read`): the C one,
`goldeval.metrics._locate` (built by `pip install` wherever a C compiler is found; one list at a time, its
scores read without touching its keys, the counts made while they are in the CPU caches: about one bare
Python walk over the dicts), and the Python one it falls back to where it is not built or meets an object
numpy reads and it does not (a str score, numpy's float32): C-level `map`/`chain`/`np.fromiter` over the
dicts, never a Python statement per document, a chunk of lists at a time (about 2.5 walks).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import chain, compress, islice, repeat
from typing import Any

import numpy as np

from goldeval.arrays import distinct_values
from goldeval.errors import InputError, optional
from goldeval.memory import gc_paused
from goldeval.metrics.ranks import above_and_tied, above_and_tied_padded, padded, pads_little
from goldeval.types import QrelsDict, RunDict

RELEVANCE_LEVEL = 1
"""trec_eval's default `-l`: the smallest judgment that counts as relevant."""


@dataclass(frozen=True)
class Judged:
    """Where the judged documents landed, for `n` questions, as flat arrays.

    `q`, `rank`, `rel` describe the judged documents that were retrieved, sorted by (question,
    rank): question index, 1-based rank, judgment. `ideal_q`/`ideal_gain`/`ideal_pos` list every
    positive judgment of each question by decreasing gain (the ideal ranking of nDCG) with its
    0-based position. `num_nonrel` counts judged non-relevant documents (0 <= judgment < level),
    retrieved or not (bpref's N).
    """

    n: int
    level: int
    num_ret: np.ndarray
    num_rel: np.ndarray
    num_nonrel: np.ndarray
    q: np.ndarray
    rank: np.ndarray
    rel: np.ndarray
    ideal_q: np.ndarray
    ideal_gain: np.ndarray
    ideal_pos: np.ndarray

    def relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(question, rank, j) of each retrieved relevant document; j is 1 for a question's first."""
        return self._relevant

    @cached_property
    def _relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keep = self.rel >= self.level
        q, rank = self.q[keep], self.rank[keep]
        return q, rank, _position_in_group(q, self.n) + 1

    def count_at(self, k: np.ndarray | int) -> np.ndarray:
        """Relevant documents in the top k, per question (k may be one value per question)."""
        q, rank, _ = self.relevant()
        cut = k if np.isscalar(k) else np.asarray(k)[q]
        return np.bincount(q[rank <= cut], minlength=self.n)


_EMPTY: dict[str, float] = {}


def _as_dicts(mappings: list[Mapping[str, float] | None]) -> list[dict[str, float]]:
    """The inner mappings as dicts (the C-level look-ups below need them); None becomes {}."""
    if set(map(type, mappings)) <= {dict}:  # C-level: no Python step per question
        return mappings  # type: ignore[return-value]
    return [m if type(m) is dict else dict(m or {}) for m in mappings]  # type: ignore[misc]


def _flatten(judged: list[dict[str, float]]) -> tuple[np.ndarray, np.ndarray]:
    """(every judgment, the question index of each), question by question."""
    lengths = np.fromiter(map(len, judged), dtype=np.int64, count=len(judged))
    return _judgments(judged, int(lengths.sum())), np.repeat(np.arange(len(judged), dtype=np.int64), lengths)


def _judgments(judged: list[dict[str, float]], total: int) -> np.ndarray:
    """Every judgment's value, question by question. No list of the ids: each is read once, where it is
    looked up (issue 23: with a new str per id every touch is a cache miss)."""
    return np.fromiter(chain.from_iterable(map(dict.values, judged)), dtype=np.float64, count=total)


def _ids_at(judged: list[dict[str, float]], owner: np.ndarray, positions: np.ndarray) -> list[str]:
    """The judged ids at flat `positions` (`_flatten`'s order), read again from their questions' dicts:
    only for the few that need an id after the look-up (ties, errors)."""
    qs = owner[positions]
    firsts = np.searchsorted(owner, qs)  # owner is sorted: where each question's judgments begin
    keys = {q: list(judged[q]) for q in set(qs.tolist())}
    return [keys[q][k] for q, k in zip(qs.tolist(), (positions - firsts).tolist(), strict=True)]


def judge_scores(
    qrels: QrelsDict,
    run: RunDict,
    qids: Sequence[str] | None = None,
    *,
    level: int = RELEVANCE_LEVEL,
    all_judged: bool = False,
) -> Judged:
    """Locate the judged documents of each question in a run of scores (ranked by `goldeval.ranking`).

    Questions are `qids` (default: the qrels' ids, in order). With `all_judged`, every judged
    document is located, non-relevant and negative ("unjudged") ones too (bpref, relstring and
    other trec measures need them); otherwise only documents with a positive judgment.
    A NaN score in a list holding a judgment to locate cannot be ranked: an InputError names it.
    """
    every = qids is None  # the qrels' questions, in order: their judgments need no look-up
    qids = list(qrels) if qids is None else list(qids)
    floor = -math.inf if all_judged else min(level, 1)
    with gc_paused():
        judged, rows, num_ret, lengths = _lists(qrels, run, qids, every=every)
        owner = np.repeat(np.arange(len(judged), dtype=np.int64), lengths)
        values, t_pos, t_score, above, tied = _read_c(qids, rows, judged, floor, len(owner)) or _read_python(
            qids, rows, judged, floor, owner, num_ret)  # fmt: skip
        ranks, t_owner = above + 1, owner[t_pos]
        tie = np.flatnonzero(tied > 1)
        for t, doc in zip(tie.tolist(), _ids_at(judged, owner, t_pos[tie]), strict=True):
            s = float(t_score[t])  # ties: ids descending come first (trec_eval)
            ranks[t] += sum(1 for other, v in rows[int(t_owner[t])].items() if v == s and other > doc)
    return assemble(len(qids), level, num_ret, owner, values, t_owner, ranks, values[t_pos])


Read = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""What a reader of the dicts gives `judge_scores`: every judgment's value (question by question, each dict's
order), the flat positions of the judgments located in their lists, and for each of those its score there and
how many scores of its list are above that score and equal to it (itself included)."""


def _lists(qrels: QrelsDict, run: RunDict, qids: list[str], *, every: bool = False,
           ) -> tuple[list[dict[str, float]], list[dict[str, float]], np.ndarray, np.ndarray]:  # fmt: skip
    """Each question's judgments and list as dicts, the lists' lengths and each question's number of judgments.
    `every`: `qids` are the qrels' own, in order."""
    judged: list[Any] = list(qrels.values()) if every else list(map(qrels.get, qids, repeat(_EMPTY)))
    rows: list[Any] = list(map(run.get, qids, repeat(_EMPTY)))
    sized = _sizes_c(rows, judged)
    if sized is not None:  # every one a dict already
        return judged, rows, *sized
    judged, rows = _as_dicts(judged), _as_dicts(rows)
    num_ret, lengths = (np.fromiter(map(len, dicts), dtype=np.int64, count=len(dicts)) for dicts in (rows, judged))
    return judged, rows, num_ret, lengths


def _sizes_c(rows: list[Any], judged: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """(each list's length, each question's number of judgments) by `goldeval.metrics._locate`, or None where
    it is not built or an item is not a dict (None included)."""
    if _clocate is None:
        return None
    num_ret, lengths = np.empty(len(rows), dtype=np.int64), np.empty(len(judged), dtype=np.int64)
    return None if _clocate.sizes(rows, judged, num_ret, lengths) == _C_NOT_MINE else (num_ret, lengths)


def _read_c(qids: Sequence[str], rows: list[dict[str, float]], judged: list[dict[str, float]], floor: float,
            total: int) -> Read | None:  # fmt: skip
    """The dicts read by `goldeval.metrics._locate` (C, issue 23: 0.4x the CPU of `_read_python`), or None
    where it is not built or leaves the call to the Python reader (an object numpy would read and it would
    not, such as a str score or numpy's float32)."""
    if _clocate is None:
        return None
    values, found = np.empty(total), np.empty(total)
    above, tied = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    status = _clocate.locate(rows, judged, floor, values, found, above, tied)
    if status == _C_NOT_MINE:
        return None
    if status != _C_DONE:
        q = int(status)
        _raise_nan(qids[q], rows[q])
    t_pos = np.flatnonzero(~np.isnan(found))
    return values, t_pos, found[t_pos], above[t_pos], tied[t_pos]


_clocate = optional("goldeval.metrics._locate")
"""The C reader; None where the package was installed without a C compiler (the build makes it optional)."""
_C_DONE, _C_NOT_MINE = -1, -2
"""`_locate.locate`'s answers besides a question index (a NaN score there): done; the Python reader's call."""


def _read_python(qids: Sequence[str], rows: list[dict[str, float]], judged: list[dict[str, float]], floor: float,
                 owner: np.ndarray, num_ret: np.ndarray) -> Read:  # fmt: skip
    """The dicts read with C-level map/chain/np.fromiter, no Python statement per document (`_locate`)."""
    values = _judgments(judged, len(owner))
    wanted = values >= floor
    cand = np.flatnonzero(wanted)  # flat positions of the judgments to locate
    cand_ids = compress(chain.from_iterable(judged), wanted.tolist())  # each id read here, once
    hit, t_score, above, tied = _locate(qids, rows, num_ret, owner[cand], cand_ids)
    return values, cand[hit], t_score, above, tied


READ_CELLS = 1 << 14
"""Scores read per chunk of lists, just before the chunk's judged ids are looked up. Reading a list's
scores brings its dict's entries and score objects into the CPU caches, so the look-ups that follow
miss them less (issue 23, `bench.bench_metrics.read_and_look_up`: 100k questions x 100 with a new str
per id, as read from a file: 0.22 CPU s chunk by chunk, 0.27 reading every score first; 2^12 to 2^16
cells a chunk cost the same)."""


def _locate(qids: Sequence[str], rows: list[dict[str, float]], num_ret: np.ndarray, cand_owner: np.ndarray,
            cand_ids: Iterator[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Look up each judged id to locate (`cand_ids`, of questions `cand_owner`, sorted) in its question's
    list; for those found (`hit`, positions among the candidates), their score and how many scores of
    their list are above it and equal to it (`goldeval.metrics.ranks`).

    Every list holding such an id is read whole, chunk by chunk (`READ_CELLS`), by C-level
    `map`/`chain`/`np.fromiter` over the dicts: no Python statement per document. The lists become
    the rows of one block padded with -inf when their lengths are alike (the usual case: every
    question's top k), else lie one after the other. A NaN score in such a list is refused."""
    first = np.ones(len(cand_owner), dtype=bool)
    first[1:] = cand_owner[1:] != cand_owner[:-1]
    read, of_cand = cand_owner[first], np.cumsum(first) - 1  # the lists to read; each id's among them
    lengths = num_ret[read]
    ends = np.cumsum(lengths)
    width = max(1, int(lengths.max(initial=0))) if pads_little(lengths) else 0  # 0: one after the other
    scores = np.empty((len(read), width)) if width else np.empty(int(ends[-1]) if len(ends) else 0)
    found = np.empty(len(cand_owner))
    owners, questions = cand_owner.tolist(), read.tolist()
    b = c = 0
    for e in _chunk_ends(ends):
        ce = int(np.searchsorted(cand_owner, read[e - 1], side="right"))
        lo, hi = int(ends[b] - lengths[b]), int(ends[e - 1])
        got = np.fromiter(chain.from_iterable(map(dict.values, map(rows.__getitem__, questions[b:e]))),
                          np.float64, hi - lo)  # fmt: skip
        if width:
            scores[b:e] = padded(got, lengths[b:e], width)
        else:
            scores[lo:hi] = got
        looked_up = map(dict.get, map(rows.__getitem__, owners[c:ce]), islice(cand_ids, ce - c), repeat(math.nan))
        found[c:ce] = np.fromiter(looked_up, np.float64, ce - c)
        b, c = e, ce
    _refuse_nan(qids, rows, questions, scores, ends)
    hit = np.flatnonzero(~np.isnan(found))  # NaN: not in the list (a NaN score was refused)
    if width:
        above, tied = above_and_tied_padded(scores, lengths, of_cand[hit], found[hit])
    else:
        above, tied = above_and_tied(scores, ends - lengths, lengths, of_cand[hit], found[hit])
    return hit, found[hit], above, tied


def _refuse_nan(qids: Sequence[str], rows: list[dict[str, float]], questions: list[int], scores: np.ndarray,
                ends: np.ndarray) -> None:  # fmt: skip
    """A NaN score cannot be ranked: an InputError naming the first one in the lists read (`scores`, of
    `questions`: a block, one list per row, or the lists one after the other ending at `ends`)."""
    if not scores.size or not np.isnan(scores.min()):  # min is NaN if any score is: one pass, no mask
        return
    nan = np.isnan(scores)
    at = np.flatnonzero(nan.any(axis=1) if scores.ndim == 2 else nan)[0]
    q = questions[int(at) if scores.ndim == 2 else int(np.searchsorted(ends, at, side="right"))]
    _raise_nan(qids[q], rows[q])


def _chunk_ends(ends: np.ndarray) -> list[int]:
    """Where each chunk of lists ends (exclusive), for chunks of about READ_CELLS scores; a list
    longer than that is a chunk of its own. `ends`: the cumulative list lengths."""
    if not len(ends):
        return []
    cuts = np.searchsorted(ends, np.arange(READ_CELLS, int(ends[-1]) + READ_CELLS, READ_CELLS)) + 1
    return distinct_values(np.append(np.minimum(cuts, len(ends)), len(ends))).tolist()  # type: ignore[no-any-return]


def _raise_nan(qid: str, row: dict[str, float]) -> None:
    """The InputError for the first score of `row` that reads as NaN: a NaN, or None (numpy reads it as NaN)."""
    doc, score = next((d, v) for d, v in row.items() if v is None or v != v)
    raise InputError(f"question {qid!r}: document {doc!r} has score {'None' if score is None else 'NaN'}", value=doc,
                     hint="give every result a real number as its score")


def judge_ranked(
    qrels: QrelsDict,
    rankings: Mapping[str, Sequence[str]],
    qids: Sequence[str] | None = None,
    *,
    level: int = RELEVANCE_LEVEL,
    all_judged: bool = False,
) -> Judged:
    """Locate the judged documents of each question in lists already in rank order.

    A repeated id counts at its first position only (`list.index`); later copies are non-relevant
    but still take up a rank, as in the list the user saw.
    """
    return locate_ranked(qrels, rankings, qids, level=level, all_judged=all_judged).judged()


@dataclass(frozen=True)
class Located:
    """`judge_ranked`'s arrays before `assemble`: every judgment (`values` of question `owner`) and the
    located ones (question `t_q` at rank `t_rank` with `t_rel`); `floor` is the lowest judgment located."""

    n: int
    level: int
    floor: float
    num_ret: np.ndarray
    owner: np.ndarray
    values: np.ndarray
    t_q: np.ndarray
    t_rank: np.ndarray
    t_rel: np.ndarray

    def judged(self) -> Judged:
        return self._judged

    @cached_property
    def _judged(self) -> Judged:
        return assemble(self.n, self.level, self.num_ret, self.owner, self.values, self.t_q, self.t_rank, self.t_rel)

    def adding(self, q: np.ndarray, rank: np.ndarray, grade: float) -> Judged:
        """The Judged of the same rankings with one more judgment, `grade`, for each id at (question `q`,
        1-based first `rank`) that had none: what `judge_ranked` gives on qrels completed so (the
        best/worst-case ranges of `metrics.judged`), without searching the lists again."""
        owner = np.concatenate((self.owner, q))
        values = np.concatenate((self.values, np.full(len(q), float(grade))))
        if grade < self.floor:  # not located, as judge_ranked locates none below its floor; below 1 (the floor is
            # at most 1), so neither relevant nor in the ideal ranking: only the count of judged non-relevant moves
            return replace(self._judged, num_nonrel=_num_nonrel(owner, values, self.level, self.n))
        return assemble(self.n, self.level, self.num_ret, owner, values, np.concatenate((self.t_q, q)),
                        np.concatenate((self.t_rank, rank)), np.concatenate((self.t_rel, np.full(len(q), float(grade)))))


def locate_ranked(
    qrels: QrelsDict,
    rankings: Mapping[str, Sequence[str]],
    qids: Sequence[str] | None = None,
    *,
    level: int = RELEVANCE_LEVEL,
    all_judged: bool = False,
) -> Located:
    """`judge_ranked`'s location step (see there), its arrays kept apart for `Located.adding`."""
    qids = list(qrels) if qids is None else list(qids)
    floor = -math.inf if all_judged else min(level, 1)
    t_q: list[int] = []
    t_rank: list[int] = []
    t_rel: list[float] = []
    num_ret: list[int] = []
    with gc_paused():
        judged = _as_dicts(list(map(qrels.get, qids, repeat(_EMPTY))))
        for i, (qid, marks) in enumerate(zip(qids, judged, strict=True)):
            ranking = rankings.get(qid) or ()
            num_ret.append(len(ranking))
            if not ranking or not marks:
                continue
            ids = ranking if isinstance(ranking, list) else list(ranking)
            if len(marks) > 8:  # many judgments: one position map beats a list scan per judgment
                first = dict(zip(reversed(ids), range(len(ids), 0, -1), strict=True))  # first occurrence wins
                for d, r in marks.items():
                    if r >= floor and d in first:
                        t_q.append(i)
                        t_rank.append(first[d])
                        t_rel.append(r)
                continue
            for d, r in marks.items():
                if r >= floor and d in ids:
                    t_q.append(i)
                    t_rank.append(ids.index(d) + 1)
                    t_rel.append(r)
        values, owner = _flatten(judged)
    return Located(len(qids), level, floor, np.asarray(num_ret, dtype=np.int64), owner, values,
                   np.asarray(t_q, dtype=np.int64), np.asarray(t_rank, dtype=np.int64), np.asarray(t_rel, dtype=np.float64))


def assemble(
    n: int,
    level: int,
    num_ret: np.ndarray,
    owner: np.ndarray,
    values: np.ndarray,
    t_q: np.ndarray,
    t_rank: np.ndarray,
    t_rel: np.ndarray,
) -> Judged:
    """A Judged from every judgment (`values`, question `owner`) and the located ones (question,
    rank, judgment); R, N and the ideal gains come from numpy. Shared by dicts and TREC files."""
    values = np.asarray(values, dtype=np.float64)
    positive = values > 0
    ideal_q, ideal_gain = owner[positive], values[positive]
    ideal_order = _order_by(ideal_q, -ideal_gain)  # by question, then decreasing gain
    ideal_q, ideal_gain = ideal_q[ideal_order], ideal_gain[ideal_order]
    q = np.asarray(t_q, dtype=np.int64)
    order = _order_by(q, np.asarray(t_rank, dtype=np.float64))
    return Judged(
        n=n,
        level=level,
        num_ret=np.asarray(num_ret, dtype=np.int64),
        num_rel=np.bincount(owner[values >= level], minlength=n),
        num_nonrel=_num_nonrel(owner, values, level, n),
        q=q[order],
        rank=np.asarray(t_rank, dtype=np.int64)[order],
        rel=np.asarray(t_rel, dtype=np.float64)[order],
        ideal_q=ideal_q,
        ideal_gain=ideal_gain,
        ideal_pos=_position_in_group(ideal_q, n),
    )


def _num_nonrel(owner: np.ndarray, values: np.ndarray, level: int, n: int) -> np.ndarray:
    """Per question, its judged non-relevant documents: judgments 0 <= value < level (a negative one is unjudged)."""
    return np.bincount(owner[(values >= 0) & (values < level)], minlength=n)


def _order_by(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Indices sorting by (group, key). Small integer keys fold into one int64 (one fast sort)."""
    if not len(key):
        return np.zeros(0, dtype=np.int64)
    lo, hi = key.min(), key.max()
    if np.all(key == np.round(key)) and hi - lo < 2**20 and len(group) and int(group.max()) < 2**40:
        folded = group.astype(np.int64) * int(hi - lo + 1) + (key - lo).astype(np.int64)
        return np.argsort(folded, kind="stable")  # mostly in order already (by question): timsort runs 2x faster
    return np.lexsort((key, group))


def _position_in_group(q: np.ndarray, n: int) -> np.ndarray:
    """0-based position of each element within its run of equal (sorted) question indices."""
    if not len(q):
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(q, minlength=n)
    return np.arange(len(q)) - (np.cumsum(counts) - counts)[q]  # minus where its question's run begins
