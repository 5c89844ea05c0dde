"""Byte-level helpers of the TREC reader: fields of a block of lines, 64-bit words and hashes (numbers: `numbers`).

Everything works on uint8 arrays (a memory-mapped file, or a block of it) and arrays of field
offsets, one numpy operation over every field at a time; nothing makes a Python object per field.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

_MIX = np.uint64(0x9E3779B97F4A7C15)
_SEED = np.uint64(0xCBF29CE484222325)
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def split_fields(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fields of a block of whole lines (ending with a newline): (start, stop) byte offsets of every
    field, and per line the number of fields and the index of its first field."""
    ws = np.flatnonzero(a <= 32)
    c = a[ws]
    newline_mask = c == 10
    if np.count_nonzero(c == 32) + np.count_nonzero(newline_mask) < len(c):  # tabs, \r or control bytes
        space = (c == 32) | ((c >= 9) & (c <= 13))  # C isspace: space, \t \n \v \f \r
        ws, newline_mask = ws[space], newline_mask[space]
    newline = np.flatnonzero(newline_mask)
    begin = np.empty_like(ws)
    begin[0] = 0
    begin[1:] = ws[:-1] + 1
    keep = ws > begin  # a field ends at this whitespace byte
    if keep.all():  # single separators, no blank line or indentation: each whitespace byte ends a field
        count = np.diff(newline, prepend=-1)
        return begin, ws, count, newline - count + 1
    kept = np.cumsum(keep)
    count = np.diff(kept[newline], prepend=0)
    return begin[keep], ws[keep], count, kept[newline] - count


def text(a: np.ndarray, start: int, stop: int) -> str:
    """Bytes a[start:stop] as str (UTF-8, undecodable bytes replaced): for messages."""
    return a[int(start) : int(stop)].tobytes().decode("utf-8", "replace")


def padded(a: np.ndarray, start: np.ndarray, stop: np.ndarray, width: int) -> np.ndarray:
    """Bytes a[start:stop] of each row in a (rows, width) uint8 matrix, zero after each row's end. Each row is
    copied whole from a window of `a` (no offset per byte), but a row starting less than `width` bytes from
    the end of `a`, which is read byte by byte."""
    width = max(width, 1)
    if not len(a):
        return np.zeros((len(start), width), dtype=np.uint8)
    cols = np.arange(width)
    last = len(a) - width
    if last < 0:
        out = a[np.minimum(start[:, None] + cols, len(a) - 1)]
    else:
        out = sliding_window_view(a, width)[np.minimum(start, last)]
        late = np.flatnonzero(start > last)
        if len(late):
            out[late] = a[np.minimum(start[late, None] + cols, len(a) - 1)]
    out[cols >= (stop - start)[:, None]] = 0
    return out


def words_view(a: np.ndarray) -> np.ndarray:
    """The little-endian 64-bit word starting at each byte of `a` but the last 7 (unaligned loads, as
    x86-64 and arm64 do), without a copy: fields are compared and hashed a word at a time."""
    return np.ndarray(shape=(len(a) - 7,), dtype="<u8", buffer=a, strides=(1,))


def words(a: np.ndarray, start: np.ndarray, stop: np.ndarray) -> Iterator[np.ndarray]:
    """The fields as little-endian 64-bit words, zero past each field's end. A word that would run
    past the end of `a` is read 8 bytes from the end and shifted down (bytes are little-endian)."""
    if len(a) < 8:
        a = np.concatenate((a, np.zeros(8, dtype=np.uint8)))
    as_words = words_view(a)
    length = np.minimum(stop - start, 1 << 30).astype(np.int32)
    last = len(a) - 8
    shortest = int(length.min(initial=0))
    for j in range(0, int(length.max(initial=0)), 8):
        left = _LOW_BYTES[np.minimum(np.maximum(length - j, 0), 8)] if j + 8 > shortest else None
        at = start + j
        if int(at.max(initial=0)) <= last:
            yield as_words[at] if left is None else as_words[at] & left
        else:
            left = _LOW_BYTES[np.minimum(np.maximum(length - j, 0), 8)]
            clamped = np.minimum(at, last)
            yield (as_words[clamped] >> ((at - clamped) * 8).astype(np.uint64)) & left


def field_hash(a: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """64-bit hash of each field's bytes and length: equal fields, equal hashes, whatever other fields
    are hashed with them (a field mixes its own words only, not the zeros past its end up to the
    longest field's: that made an id's hash depend on its block, and a run miss its qrels' ids)."""
    length = stop - start
    h = _SEED ^ length.astype(np.uint64)
    shortest = int(length.min(initial=0))
    for j, word in enumerate(words(a, start, stop)):
        mixed = mix(h ^ word)
        h = mixed if 8 * j < shortest else np.where(length > 8 * j, mixed, h)
    return h


def mix(x: np.ndarray) -> np.ndarray:
    """A 64-bit multiply-xorshift finaliser: spreads every input bit over the output."""
    x = x * _MIX
    return x ^ (x >> np.uint64(29))


def pair_keys(doc_hash: np.ndarray, topic: np.ndarray) -> np.ndarray:
    """One 64-bit key per (topic code, doc id hash): equal pairs, equal keys."""
    return mix(doc_hash ^ (topic.astype(np.uint64) * _MIX))
