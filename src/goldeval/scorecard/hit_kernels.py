"""The numba twin of `hitbytes.top_texts`' layout: the `top` lists' bytes written one after another.

Plain Python over numpy arrays, compiled by `goldeval.jit` when the process already has numba loaded (never
called uncompiled: `hitbytes` lays the bytes out in numpy instead). numpy lays each result out as a row of a
matrix as wide as the widest of each piece, then keeps the bytes that are not zero: a pass over about 110
bytes a result where 80 are kept (issue 23: most of the results file's top lists at 100k questions).
Compiled, each byte is copied once, to where it goes.

The same bytes (tested against the numpy layout and the json module): per result `, ` (not before a question's
first), `{"id": "`, the id's bytes from the file, `", "score": `, the score's text
and its mark's text. An id holding a zero byte or a byte the json module escapes (a control byte, a quote, a
backslash) stops the layout: the writer then makes the texts one by one, as before.
"""

from __future__ import annotations

import numpy as np


def lay_hits(source: np.ndarray, start: np.ndarray, stop: np.ndarray, scores: np.ndarray, score_len: np.ndarray,
             marks: np.ndarray, mark_len: np.ndarray, which: np.ndarray, bounds: np.ndarray, escaped: np.ndarray,
             separator: np.ndarray, head: np.ndarray, score: np.ndarray,
             mark: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:  # fmt: skip
    """(the bytes, each question's start in them and the end, whether every id could be copied as it is) of the
    results `bounds[k]:bounds[k + 1]` of each question k. Result i's id is `source[start[i]:stop[i]]`, its score
    text `scores[i, :score_len[i]]`, its mark text `marks[which[i], :mark_len[which[i]]]`."""
    n = len(bounds) - 1
    fixed = len(head) + len(score) + len(mark)
    size = 0
    for i in range(len(start)):
        size += (stop[i] - start[i]) + score_len[i] + mark_len[which[i]] + fixed
    for k in range(n):
        if bounds[k + 1] > bounds[k]:
            size += len(separator) * (bounds[k + 1] - bounds[k] - 1)
    out = np.empty(size, dtype=np.uint8)
    edges = np.empty(n + 1, dtype=np.int64)
    at = 0
    for k in range(n):
        edges[k] = at
        for i in range(bounds[k], bounds[k + 1]):
            if i > bounds[k]:
                for b in separator:
                    out[at] = b
                    at += 1
            for b in head:
                out[at] = b
                at += 1
            for j in range(start[i], stop[i]):
                byte = source[j]
                if byte == 0 or escaped[byte]:
                    return out[:0], edges, False
                out[at] = byte
                at += 1
            for b in score:
                out[at] = b
                at += 1
            for j in range(score_len[i]):
                out[at] = scores[i, j]
                at += 1
            for b in mark:
                out[at] = b
                at += 1
            for j in range(mark_len[which[i]]):
                out[at] = marks[which[i], j]
                at += 1
    edges[n] = at
    return out, edges, True
