"""Writing the results JSON (docs/results-json.md, schema 3): as a dict (`scorecard_to_dict`, the page and
the statistics' key read it) and as a stream of text (`scorecard_chunks`, the file and the history).

The stream is the same bytes as `dumps_strict(scorecard_to_dict(card), indent=None)` (tested), written
piece by piece, so the whole dict tree never sits in memory (issue 23: 100k questions made 2 GB of dicts).
The per-question records of a new scorecard are written from its columns (`scorecard.columns`), a block of
questions at a time: each value is encoded as the json module encodes it (its C string encoder,
`float.__repr__`, or orjson's same texts: `float_texts`), the keys in the order `QUESTION_KEYS` and
`hit_record` give them, which `_question_to_dict` uses too. Every piece goes through `textsafe.redact`; a
non-finite number is refused, never written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import compress
from json.encoder import encode_basestring
from typing import Any

import numpy as np

from goldeval.errors import optional
from goldeval.scorecard.columns import QuestionColumns
from goldeval.scorecard.curves import pair_differences
from goldeval.scorecard.hitbytes import text_rows, top_texts
from goldeval.scorecard.model import COUNTED, QuestionResult, RetrieverResult, Scorecard
from goldeval.scorecard.scoring import question_marks
from goldeval.store.atomic import utf8
from goldeval.textsafe import redact

_orjson = optional("orjson")  # the `fast` extra; without it repr writes each float

SCHEMA_VERSION = 3
TOOL = "goldeval"
QUESTION_KEYS = ("id", "question", "expected", "nonrelevant", "off_topic", "headline", "rank", "ranks", "top",
                 "top1_score", "metrics", "tags", "source", "error", "diagnosis", "returned")
"""A question's record, in the order it is written."""
BLOCK = 1024
"""Questions written at once from columns: their texts (about 2 MB) stay in memory the allocator reuses, where
4096 questions' 9 MB went back to the OS and came again each block (issue 23: 0.8 CPU s of page faults at 100k
questions)."""


def scorecard_to_dict(card: Scorecard, *, questions: bool = True) -> dict[str, Any]:
    """The results JSON as a dict; without `questions`, each retriever's `questions` is None (the stream
    writes them)."""
    return {
        "schema": SCHEMA_VERSION,
        "tool": TOOL,
        "goldeval_version": card.identity.goldeval_version,
        "created": card.identity.created,
        "identity": card.identity.to_dict(),
        "level": card.level,
        "k": card.k,
        "depth": card.depth,
        "metric_names": [str(m) for m in card.metrics],
        "headline": [str(m) for m in card.headline],
        "headline_k": card.headline_k,
        "golden": card.golden,
        "corpus": card.corpus,
        "retrievers": [_retriever_to_dict(r, card.level, questions=questions) for r in card.retrievers],
        "flips": card.flips,
        "differences": pair_differences(card.retrievers),
        "snippets": card.snippets,
        "statistics": card.statistics.to_dict() if card.statistics else None,
        "notes": card.notes,
    }


def _retriever_to_dict(r: RetrieverResult, level: str, *, questions: bool = True) -> dict[str, Any]:
    return {
        "name": r.name,
        "config": r.config,
        "n_answerable": r.n_answerable,
        "n_headline": r.n_headline,
        "headline_sources": list(r.headline_sources()),
        "n_off_topic": r.n_off_topic,
        "n_errors": r.n_errors,
        "metrics": {str(m): v for m, v in r.metrics.items()},
        "intervals": {str(m): list(v) for m, v in r.intervals.items()},
        "curves": r.curves,
        "synthetic": {"n": r.synthetic.n, "metrics": {str(m): v for m, v in r.synthetic.metrics.items()},
                      "curves": r.synthetic.curves},
        "seconds": round(r.seconds, 3),
        "judged": r.judged,
        "ranges": {str(m): list(v) for m, v in r.ranges.items()},
        "returned": r.returned.to_dict(r.metrics) if r.returned else None,
        "questions": _question_dicts(r, level) if questions else None,
    }


def _question_dicts(r: RetrieverResult, level: str) -> list[dict[str, Any]]:
    """Every question's record (from the columns one question at a time, when the scorecard has them)."""
    columns = r.columns
    if columns is not None:
        headline = _headline_mask(columns)
        return [_question_to_dict(columns.question(i), bool(headline[i]), level) for i in range(len(columns))]
    in_headline = {q.id for q in r.headline_questions}
    return [_question_to_dict(q, q.id in in_headline, level) for q in r.questions]


def _question_to_dict(q: QuestionResult, headline: bool, level: str) -> dict[str, Any]:
    if all(h.counted for h in q.top):  # a new scorecard's hits say what they counted for: nothing to redo
        marks = [(h.counted, h.grade) for h in q.top]
    else:
        marks = [(h.counted, h.grade) if h.counted else mark for h, mark in zip(q.top, question_marks(q, level), strict=True)]
    values = (q.id, q.question, q.expected, q.nonrelevant, q.off_topic, headline, q.rank, q.ranks,
              [hit_record(h.id, h.doc, h.score, counted, grade) for h, (counted, grade) in zip(q.top, marks, strict=True)],
              q.top1_score, {str(m): v for m, v in q.metrics.items()}, q.tags, q.source, q.error, q.diagnosis,
              q.returned)  # fmt: skip
    return dict(zip(QUESTION_KEYS, values, strict=True))


def hit_record(pid: str, doc: str, score: float, counted: str, grade: int | None) -> dict[str, Any]:
    """A kept result's record (`top`), its keys in the order written: `doc` only when it is not the id (a chunk
    of a document), `grade` only when the result counted as relevant (schema 3: a 100k-question file was 23%
    documents repeating their ids and `"grade": null`)."""
    record = {"id": pid, "doc": doc, "score": score, "counted": counted, "grade": grade}
    if doc == pid:
        del record["doc"]
    if grade is None:
        del record["grade"]
    return record


def dumps_strict(data: Any, *, indent: int | None = 1) -> str:
    """JSON other parsers accept: a non-finite number is a bug upstream, refused here, never written; no
    credential goldeval was given is in it (`textsafe.redact`). `indent=None` writes it compact, with the
    json module's C encoder (an indent makes it use the pure-Python one, 10x slower on a 10k-question run)."""
    try:
        return redact(json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)) + "\n"
    except ValueError as exc:
        raise ValueError(f"refusing to write a non-finite number into results JSON: {exc}") from None


# --- the stream ------------------------------------------------------------------------------------


def scorecard_chunks(card: Scorecard) -> Iterator[bytes]:
    """The results JSON of `card` as UTF-8 pieces: `dumps_strict(scorecard_to_dict(card), indent=None)`."""
    data = scorecard_to_dict(card, questions=False)
    records = [_records(r, card.level) for r in card.retrievers]

    def retrievers() -> Iterator[str]:
        yield "["
        for i, (r, questions) in enumerate(zip(data["retrievers"], records, strict=True)):
            yield from _object(r, {"questions": questions}, first=i == 0)
        yield "]"

    for piece in _object(data, {"retrievers": retrievers}):
        yield utf8(redact(piece))
    yield b"\n"


def _object(data: Mapping[str, Any], streamed: Mapping[str, Callable[[], Iterator[str]]], *,
            first: bool = True) -> Iterator[str]:  # fmt: skip
    """`json.dumps(data)` in pieces (`, ` before it unless `first`), the values of `streamed` keys from their
    function."""
    yield "{" if first else ", {"
    for i, (key, value) in enumerate(data.items()):
        head = ("" if i == 0 else ", ") + _dumps(key) + ": "
        if key in streamed:
            yield head
            yield from streamed[key]()
        else:
            yield head + _dumps(value)
    yield "}"


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise ValueError(f"refusing to write a non-finite number into results JSON: {exc}") from None


def _records(r: RetrieverResult, level: str) -> Callable[[], Iterator[str]]:
    """The retriever's `questions` list, written a block of questions at a time."""
    columns = r.columns

    def from_columns() -> Iterator[str]:
        assert columns is not None
        _refuse_non_finite(columns)
        headline = _headline_mask(columns)
        yield "["
        for begin in range(0, len(columns), BLOCK):
            yield ("" if begin == 0 else ", ") + _block(columns, begin, min(begin + BLOCK, len(columns)), headline)
        yield "]"

    def from_list() -> Iterator[str]:
        questions = r.questions
        in_headline = {q.id for q in r.headline_questions}
        yield "["
        for begin in range(0, len(questions), BLOCK):
            part = [_question_to_dict(q, q.id in in_headline, level) for q in questions[begin : begin + BLOCK]]
            yield ("" if begin == 0 else ", ") + _dumps(part)[1:-1]
        yield "]"

    return from_columns if columns is not None else from_list


def _headline_mask(columns: QuestionColumns) -> np.ndarray:
    mask = np.zeros(len(columns), dtype=bool)
    mask[columns.headline] = True
    return mask


def _refuse_non_finite(columns: QuestionColumns) -> None:
    for what, values in (("a score", columns.placed.kept.scores), ("a metric", columns.values)):
        if not np.isfinite(values).all():
            raise ValueError(f"refusing to write a non-finite number into results JSON: {what} is "
                             f"{values[~np.isfinite(values)].flat[0]!r}")


_BOOL = ("false", "true")
_HIT = '{{"id": {}{}, "score": {}, {}'.format
_DOC = ', "doc": {}'.format
_MARK = '"counted": "{}"}}'.format
_GRADED = '"counted": "relevant", "grade": {}}}'.format
_RECORD = ('{"id": ', ', "question": ', ', "expected": {', '}, "nonrelevant": [', '], "off_topic": ', ', "headline": ',
           ', "rank": ', ', "ranks": {', '}, "top": [', '], "top1_score": ', ', "metrics": ', ', "tags": ', ', "source": ',
           ', "error": ', ', "diagnosis": null, "returned": ')
"""A question's record (`QUESTION_KEYS`) up to each of its texts; it ends with `}`."""


def _block(c: QuestionColumns, a: int, b: int, headline: np.ndarray) -> str:
    """The records of questions a..b-1, as `json.dumps` writes `_question_to_dict` of each, joined by `, `."""
    questions = c.questions[a:b]
    expected, nonrelevant, ranks = _judgment_texts(c, a, b)
    kept = c.texts.setdefault("ranks", [])
    if len(kept) == a:  # every question's, in order, for the history (`rank_list`)
        kept.extend(ranks)
    top, top1 = _hit_texts(c, a, b)
    first = c.first_rank[a:b]
    errors = c.errors
    returned = c.placed.lengths[a:b].tolist()
    texts = (
        list(map(encode_basestring, [q.id for q in questions])),
        list(map(encode_basestring, [q.question for q in questions])), expected, nonrelevant,
        [_BOOL[q.off_topic] for q in questions], [_BOOL[h] for h in headline[a:b].tolist()],
        _counts(first), ranks, top, top1, _metric_texts(c, a, b),
        [_dumps(list(q.tags)) if q.tags else "[]" for q in questions], list(map(encode_basestring, [q.source for q in questions])),
        [encode_basestring(errors[q.id]) if q.id in errors else "null" for q in questions] if errors else ["null"] * (b - a),
        [("null" if q.id in errors else str(n)) for q, n in zip(questions, returned, strict=True)] if errors
        else list(map(str, returned)),
    )  # fmt: skip
    return _joined_records(_RECORD, texts, "}", b - a)


def _joined_records(heads: Sequence[str], columns: Sequence[list[str]], end: str, n: int, *,
                    between: str = ", ") -> str:  # fmt: skip
    """The n records `heads[0] + columns[0][i] + heads[1] + columns[1][i] + ... + end`, joined by `between`:
    one join of every piece (a format per record, then a join of the records, cost twice). Joined by `_CUT`,
    the text splits back into the records."""
    if not n:
        return ""
    width = 2 * len(heads)
    flat: list[str] = [""] * (n * width)
    for i, (head, column) in enumerate(zip(heads, columns, strict=True)):
        flat[2 * i :: width] = [head] * n
        flat[2 * i + 1 :: width] = column
    flat[::width] = [heads[0], *([end + between + heads[0]] * (n - 1))]  # the record before ended, then `between`
    return "".join(flat) + end


_CUT = "\x00"
"""Where a text joined at once is cut back into its parts: JSON writes the character as an escape, so no text of
a record holds it (`_joined_records`, `_grouped`)."""


def _judgment_texts(c: QuestionColumns, a: int, b: int) -> tuple[list[str], list[str], list[str]]:
    """Per question, the insides of `expected` ({id: grade}), `nonrelevant` ([id]) and `ranks` ({id: rank})."""
    bounds = c.judgments.bounds
    ja, jb = int(bounds[a]), int(bounds[b])
    keys = list(map(encode_basestring, c.judgments.keys[ja:jb]))
    grades = c.judgments.grades[ja:jb]
    relevant = grades > 0
    owner = c.judgments.owner[ja:jb] - a
    rank = c.key_rank[ja:jb][relevant]
    good = list(compress(keys, relevant.tolist()))
    colons = [": "] * len(good)
    exp = _grouped([good, colons, list(map(str, grades[relevant].tolist()))], owner[relevant], b - a)
    ranked = _grouped([good, colons, _counts(rank)], owner[relevant], b - a)
    bad = list(compress(keys, (~relevant).tolist()))
    return exp, _grouped([bad], owner[~relevant], b - a), ranked


def _counts(values: np.ndarray) -> list[str]:
    """Each value (>= 0) as JSON writes it, 0 as `null` (a rank or count that is None): one text per value."""
    texts = ["null", *map(str, range(1, int(values.max(initial=0)) + 1))]
    return list(map(texts.__getitem__, values.tolist()))


def rank_list(r: RetrieverResult) -> str:
    """`json.dumps(..., ensure_ascii=False)` of `[[id, off_topic, rank, ranks], ...]`, one item per question in
    order (the history's `rank_lists`, which its `question_ranks` view spreads into rows), from the columns when
    the result has them: each question's `ranks` as the results file wrote it, when it was written from them."""
    c = r.columns
    if c is None:
        return json.dumps([[q.id, q.off_topic, q.rank, q.ranks] for q in r.questions], ensure_ascii=False)
    inside = c.texts.get("ranks")
    if inside is None or len(inside) != len(c):
        inside = _judgment_texts(c, 0, len(c))[2]
    ids = list(map(encode_basestring, [q.id for q in c.questions]))
    off = [_BOOL[q.off_topic] for q in c.questions]
    return "[" + _joined_records(_RANKED, [ids, off, _counts(c.first_rank), inside], "}]", len(c)) + "]"


_RANKED = ("[", ", ", ", ", ", {")
"""A question's item of `rank_list` up to each of its texts; it ends with `}]`."""


def _grouped(pieces: list[list[str]], owner: np.ndarray, n: int) -> list[str]:
    """Per question of n, `", ".join` of its items' texts, item i (of question `owner[i]`, in order) being
    `pieces[0][i] + pieces[1][i] + ...`. One join of every text, a `_CUT` between two questions', then cut
    there: a third less time than a format per item and a join per question."""
    items = len(owner)
    if not n:
        return []
    between = [", "] * items  # what goes before each item: ", ", or a `_CUT` per question passed
    if items:
        first = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
        for i, passed in zip(first.tolist(), np.diff(owner[first], prepend=0).tolist(), strict=True):
            between[i] = _CUT * passed
    flat = [""] * (items * (len(pieces) + 1))
    flat[:: len(pieces) + 1] = between
    for j, piece in enumerate(pieces, start=1):
        flat[j :: len(pieces) + 1] = piece
    last = int(owner[-1]) if items else 0
    return ("".join(flat) + _CUT * (n - 1 - last)).split(_CUT)


def _hit_texts(c: QuestionColumns, a: int, b: int) -> tuple[list[str], list[str]]:
    """Per question, the inside of `top` and `top1_score`: put together from the run file's bytes where its
    ids need no escaping (`scorecard.hitbytes`, the scores' texts as bytes: `float_rows`), else one result at a
    time."""
    kept = c.placed.kept
    ka, kb = int(kept.bounds[a]), int(kept.bounds[b])
    values = kept.scores[ka:kb]
    marks, which = _marks_texts(kept.codes[ka:kb], kept.grades[ka:kb])
    bounds = kept.bounds[a : b + 1] - ka
    top = None if any(ka <= k < kb for k in kept.moved) else top_texts(kept.table, kept.rows[ka:kb],
                                                                       lambda: float_rows(values), marks, which, bounds)  # fmt: skip
    filled = (bounds[:-1] < bounds[1:]).tolist()
    if top is None:
        scores = float_texts(values)
        ids = kept.ids(ka, kb)
        id_texts = list(map(encode_basestring, ids))
        docs = kept.docs(ids, ka)
        doc_texts = [""] * len(ids) if docs is ids else ["" if d == i else _DOC(encode_basestring(d))
                                                         for i, d in zip(ids, docs, strict=True)]  # fmt: skip
        hits = list(map(_HIT, id_texts, doc_texts, scores, map(marks.__getitem__, which.tolist())))
        top = [", ".join(hits[x:y]) for x, y in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]
    firsts = iter(float_texts(values[bounds[:-1][filled]]))
    return top, [next(firsts) if f else "null" for f in filled]


def _marks_texts(codes: np.ndarray, grades: np.ndarray) -> tuple[list[str], np.ndarray]:
    """`"counted": ...}` of each kept result (and its `"grade": ...` when relevant): the texts, one per (mark,
    grade), and each result's."""
    relevant = codes == 0
    values, which = np.unique(grades[relevant], return_inverse=True)
    key = codes.astype(np.int64)
    key[relevant] = len(COUNTED) + which.ravel()  # a relevant result's text is its grade's
    return [_MARK(counted) for counted in COUNTED] + [_GRADED(g) for g in values.tolist()], key


def _metric_texts(c: QuestionColumns, a: int, b: int) -> list[str]:
    """Per question, its `metrics` object ({} for an off-topic one)."""
    rows = c.row[a:b]
    mine = rows[rows >= 0]
    if not len(c.metrics) or not len(mine):
        return ["{}"] * (b - a)
    names = [_dumps(str(m)) for m in c.metrics]
    heads = ["{" + names[0] + ": ", *(", " + name + ": " for name in names[1:])]
    texts = _metric_float_texts(c.values[:, mine].T.ravel())  # every metric of every question at once, by question
    columns = [texts[j :: len(names)] for j in range(len(names))]
    written = iter(_joined_records(heads, columns, "}", len(mine), between=_CUT).split(_CUT))
    return [next(written) if row >= 0 else "{}" for row in rows.tolist()]


def _metric_float_texts(values: np.ndarray) -> list[str]:
    """`float_texts` of the values. Without orjson each distinct value is written once (a metric takes few
    values, and repr costs more than the sort that finds them); orjson writes them all in less than that sort."""
    if _orjson is not None or ((values == 0).any() and np.signbit(values[values == 0]).any()):
        return float_texts(values)  # (-0.0 would be merged with 0.0)
    unique, inverse = np.unique(values, return_inverse=True)
    return list(map(float_texts(unique).__getitem__, inverse.ravel().tolist()))


def float_texts(values: np.ndarray) -> list[str]:
    """Each value as the json module writes a float (`float.__repr__`: the shortest digits that read back as the
    value). With orjson installed (the `fast` extra) it writes them all at once, 3x faster (issue 23: 1M scores
    of a 100k-question run took 0.4 s in repr): its digits are repr's (both the shortest that read back) and so
    is its layout for 0 and for 1e-4 <= |x| < 1e16 (tested); elsewhere (`_repr_only`) its exponent differs
    (`1e-7` where repr writes `1e-07`), so those values, and a NaN or an infinity, are written by repr."""
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if _orjson is None or not len(values):
        return list(map(float.__repr__, values.tolist()))
    texts = _orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY).decode("ascii")[1:-1].split(",")
    for i in np.flatnonzero(_repr_only(values)).tolist():
        texts[i] = float.__repr__(float(values[i]))
    return texts


def float_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`float_texts(values)` as the rows of a uint8 matrix (zero bytes after each text) and each text's length,
    for a layout of bytes (`hitbytes.top_texts`). Where orjson writes every value as repr does, its one buffer is
    cut at its commas: no str per value (0.1 CPU s of a 100k-question results file's million scores, issue 23);
    else from the texts."""
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if _orjson is None or not len(values) or _repr_only(values).any():
        return text_rows(float_texts(values))
    written = np.frombuffer(_orjson.dumps(values, option=_orjson.OPT_SERIALIZE_NUMPY), dtype=np.uint8)
    commas = np.flatnonzero(written == ord(","))
    starts = np.concatenate(([1], commas + 1))  # after `[`, then after each comma
    lengths = np.append(commas, len(written) - 1) - starts  # to the next comma, the last to `]`
    columns = np.arange(int(lengths.max()))
    rows = written[np.minimum(starts[:, None] + columns, len(written) - 1)]
    rows[columns >= lengths[:, None]] = 0
    return rows, lengths


def _repr_only(values: np.ndarray) -> np.ndarray:
    """Where orjson's text of a value is not repr's: a NaN, an infinity, and 0 < |x| < 1e-4 or |x| >= 1e16."""
    size = np.abs(values)
    return ~((size >= 1e-4) & (size < 1e16)) & (values != 0)
