"""The `top` lists of many questions' records, as the json module writes them, put together from bytes.

A kept result is written `{"id": ID, "score": S, "counted": C}` (its `"grade": G` too when relevant, its
`"doc": DOC` when its document is not its id: `writer.hit_record`),
ten per question, a million for 100k questions: made one str at a time (an id decoded, encoded for JSON,
formatted with its score and mark, joined) that cost more than the rest of the file (issue 23). For results
of a run file whose ids need no escaping in JSON (no quote, backslash or control byte, the common case) and
whose documents are their ids, `top_texts` lays the bytes side by side in numpy instead: the file's bytes of
each id, the score's `float.__repr__` (the json module's) and its mark's text. Anything else
gives None, and the writer makes the texts one by one, as the json module would (tested equal).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from goldeval import jit
from goldeval.scorecard import hit_kernels
from goldeval.trecio import TrecTable


def top_texts(table: TrecTable, rows: np.ndarray, scores: Callable[[], tuple[np.ndarray, np.ndarray]],
              marks: list[str], which: np.ndarray, bounds: np.ndarray) -> list[str] | None:  # fmt: skip
    """Per question (its results `bounds[i]:bounds[i + 1]` of `rows`, the table rows kept), the inside of its
    `top` list: each result's id, its score's text (row j of the matrix `scores()` makes, its length
    beside: `writer.float_rows`) and its mark text `marks[which[j]]`; None when an id needs escaping in JSON
    or the ids are not a file's (`TrecTable.strings`).

    Each result is laid out in a row of a matrix, its pieces in columns as wide as the widest of each, zero
    bytes after a shorter one (an id, a score, a mark): the rows read in order without their zeros are the
    texts, one pass over a few bytes a result (no offset per byte). When the process has numba loaded, its
    twin (`hit_kernels.lay_hits`) copies each byte once, to where it goes, the same bytes (tested)."""
    if table.strings is not None or not len(rows):
        return None
    kernel = jit.compiled(hit_kernels.lay_hits, nbytes=0)  # numba if the process has it loaded already
    score_bytes, score_len = scores()
    mark_rows, mark_len = text_rows(marks)
    if kernel is not None:
        out, edges, plain = kernel(table.source, table.doc_start[rows], table.doc_stop[rows], score_bytes,
                                   score_len, mark_rows, mark_len, which, bounds, _ESCAPED, _SEPARATOR, _ID,
                                   _SCORE, _MARK)  # fmt: skip
        table.drop_pages()
        return _split(out, edges) if plain else None
    length = table.doc_stop[rows] - table.doc_start[rows]
    ids = table.doc_bytes(rows, int(length.max()))
    table.drop_pages()
    if _ESCAPED[ids].any() or np.count_nonzero(ids) != int(length.sum()):
        return None  # a control byte, a quote or a backslash: the json module escapes it
    mark_bytes = mark_rows[which]
    first = np.zeros(len(rows), dtype=bool)
    first[bounds[:-1][bounds[:-1] < bounds[1:]]] = True  # a question's first result has no separator before it
    pieces = [_SEPARATOR, _ID, ids, _SCORE, score_bytes, _MARK, mark_bytes]
    layout = np.empty((len(rows), sum(p.shape[-1] for p in pieces)), dtype=np.uint8)
    at = 0
    for piece in pieces:
        layout[:, at : at + piece.shape[-1]] = piece
        at += piece.shape[-1]
    layout[first, : len(_SEPARATOR)] = 0
    sizes = (length + _FIXED + score_len
             + mark_len[which]
             - np.where(first, len(_SEPARATOR), 0))  # fmt: skip
    offset = np.concatenate(([0], np.cumsum(sizes)))
    return _split(layout[layout != 0], offset[bounds])


def _constant(text: bytes) -> np.ndarray:
    return np.frombuffer(text, dtype=np.uint8)


_SEPARATOR, _ID, _SCORE, _MARK = map(_constant, (b", ", b'{"id": "', b'", "score": ', b", "))
_FIXED = sum(map(len, (_SEPARATOR, _ID, _SCORE, _MARK)))
_ESCAPED = np.zeros(256, dtype=bool)
_ESCAPED[1:0x20] = _ESCAPED[0x22] = _ESCAPED[0x5C] = True
"""The bytes of an id that the json module writes as an escape (a zero byte inside an id is counted apart)."""


def text_rows(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """ASCII texts as rows of a uint8 matrix, zero after each text's end, and each text's length."""
    fixed = np.array(texts, dtype="S")
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return fixed.view(np.uint8).reshape(len(texts), fixed.dtype.itemsize), lengths


def _split(out: np.ndarray, edges: np.ndarray) -> list[str]:
    """The text between each two successive byte offsets `edges` of the UTF-8 bytes `out`."""
    text = out.tobytes().decode("utf-8")
    pairs = zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)
    if len(text) == len(out):  # ASCII: byte offsets are character offsets
        return [text[x:y] for x, y in pairs]
    return [out[x:y].tobytes().decode("utf-8") for x, y in pairs]
