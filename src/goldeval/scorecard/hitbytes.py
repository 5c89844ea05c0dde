"""The `top` lists of many questions' records, as the json module writes them, put together from bytes.

A kept result is written `{"id": ID, "doc": DOC, "score": S, "counted": C, "grade": G}` (`writer.HIT_KEYS`),
ten per question, a million for 100k questions: made one str at a time (an id decoded, encoded for JSON,
formatted with its score and mark, joined) that cost more than the rest of the file (issue 23). For results
of a run file whose ids need no escaping in JSON (no quote, backslash or control byte, the common case) and
whose documents are their ids, `top_texts` lays the bytes side by side in numpy instead: the file's bytes of
each id (twice), the score's `float.__repr__` (the json module's) and its mark's text. Anything else
gives None, and the writer makes the texts one by one, as the json module would (tested equal).
"""

from __future__ import annotations

import numpy as np

from goldeval.trecio import TrecTable
from goldeval.trecio.ranked import spread


def top_texts(table: TrecTable, rows: np.ndarray, scores: list[str], marks: list[str], which: np.ndarray,
              bounds: np.ndarray) -> list[str] | None:  # fmt: skip
    """Per question (its results `bounds[i]:bounds[i + 1]` of `rows`, the table rows kept), the inside of its
    `top` list: each result's id twice, its score text `scores[j]` and its mark text `marks[which[j]]`; None
    when an id needs escaping in JSON or the ids are not a file's (`TrecTable.strings`)."""
    if table.strings is not None or not len(rows):
        return None
    length = table.doc_stop[rows] - table.doc_start[rows]
    ids = table.doc_bytes(rows, int(length.max()))
    table.drop_pages()
    inside = np.arange(ids.shape[1]) < length[:, None]
    if ((ids < 0x20) & inside).any() or (ids == 0x22).any() or (ids == 0x5C).any():
        return None  # a control byte, a quote or a backslash: the json module escapes it
    id_bytes = ids[inside]
    score_bytes = np.frombuffer("".join(scores).encode("ascii"), dtype=np.uint8)
    score_length = np.fromiter(map(len, scores), dtype=np.int64, count=len(scores))
    mark_bytes = [m.encode("ascii") for m in marks]
    mark_pool = np.frombuffer(b"".join(mark_bytes), dtype=np.uint8)
    mark_length = np.fromiter(map(len, mark_bytes), dtype=np.int64, count=len(marks))
    first = np.zeros(len(rows), dtype=bool)
    first[bounds[:-1][bounds[:-1] < bounds[1:]]] = True  # a question's first result has no separator before it
    ids_at, scores_at = (id_bytes, _starts(length)), (score_bytes, _starts(score_length))
    pieces: list[tuple[np.ndarray, bytes | tuple[np.ndarray, np.ndarray]]] = [
        (np.where(first, 0, 2), b", "), (_size(8, rows), b'{"id": "'), (length, ids_at), (_size(11, rows), b'", "doc": "'),
        (length, ids_at), (_size(12, rows), b'", "score": '), (score_length, scores_at), (_size(2, rows), b", "),
        (mark_length[which], (mark_pool, _starts(mark_length)[which]))]  # fmt: skip
    offset = np.concatenate(([0], np.cumsum(sum(size for size, _ in pieces))))
    out = np.empty(int(offset[-1]), dtype=np.uint8)
    at = offset[:-1].copy()
    for sizes, source in pieces:
        if isinstance(source, bytes):  # a constant piece (the separator only where there is one)
            pick = sizes > 0
            text = np.frombuffer(source, dtype=np.uint8)
            out[(at[pick, None] + np.arange(len(text))).ravel()] = np.tile(text, int(pick.sum()))
        else:
            pool, starts = source
            out[spread(at, sizes)] = pool[spread(starts, sizes)]
        at += sizes
    return _split(out, offset[bounds])


def _size(n: int, rows: np.ndarray) -> np.ndarray:
    return np.full(len(rows), n, dtype=np.int64)


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.cumsum(lengths) - lengths


def _split(out: np.ndarray, edges: np.ndarray) -> list[str]:
    """The text between each two successive byte offsets `edges` of the UTF-8 bytes `out`."""
    text = out.tobytes().decode("utf-8")
    pairs = zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)
    if len(text) == len(out):  # ASCII: byte offsets are character offsets
        return [text[x:y] for x, y in pairs]
    return [out[x:y].tobytes().decode("utf-8") for x, y in pairs]
