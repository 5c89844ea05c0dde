"""numba kernels of the TREC reader: one pass over a block's bytes instead of numpy's dozen.

Imported only where numba is installed (`goldeval.jit.available()`); `goldeval.jit` compiles the
entry points (`split_block`, `repeated_pairs`) and caches their machine code on disk, the helpers
here are compiled into them. Each kernel computes exactly what its numpy twin in `fields`/`scan`
computes, bit for bit (tested): the same field rules (C `isspace`), the same 64-bit hash
(`fields.field_hash`), the same decimals (`numbers.decimals`: its digits w and power of ten q; the
kernel divides where Clinger's step is exact and takes the others, Python's 17-digit scores among them, by
`numbers.eisel_lemire`'s steps one number at a time, `_eisel_lemire`). Anything else
(a wrong field count, a score that is not a decimal of at most 19 significant digits, a judgment that
is not an integer) is left to the numpy code, which owns every error message.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from goldeval.trecio.numbers import MAX_Q, MIN_Q

SEED = np.uint64(0xCBF29CE484222325)
MIX = np.uint64(0x9E3779B97F4A7C15)
SHIFT = np.uint64(29)
OK, NUMPY = 0, 1
"""split_block's status: columns made, or leave this block to the numpy path."""
EXACT = np.uint64(1 << 53)
"""Digits below this, and a power of ten from -22 to 0: float(w) / 10^-q is exact (Clinger 1990)."""


@njit(nogil=True)
def _is_space(c: int) -> bool:
    return c == 32 or (c >= 9 and c <= 13)  # C isspace: space, \t \n \v \f \r


@njit(nogil=True)
def _line_fields(a: np.ndarray, pos: int, fs: np.ndarray, fe: np.ndarray) -> tuple[int, int]:
    """Fields of the line at `pos`: (position after its newline, number of fields); the first
    len(fs) fields' (start, stop) go to fs, fe."""
    count = 0
    while True:
        c = a[pos]
        if c == 10:
            return pos + 1, count
        if _is_space(c):
            pos += 1
            continue
        begin = pos
        pos += 1
        while a[pos] > 32 or not _is_space(a[pos]):
            pos += 1
        if count < len(fs):
            fs[count], fe[count] = begin, pos
        count += 1


@njit(nogil=True)
def _low(word: np.uint64, n: int) -> np.uint64:
    """The first n bytes of a little-endian word (n < 8), zero after them."""
    return word & ((np.uint64(1) << np.uint64(8 * n)) - np.uint64(1))


@njit(nogil=True)
def field_hash(w: np.ndarray, start: int, stop: int) -> np.uint64:
    """`fields.field_hash` of one field: its length, then each little-endian 64-bit word, mixed.
    `w[i]` is the word at byte i (`fields.words_view`); the field's last word is cut at its end."""
    h = SEED ^ np.uint64(stop - start)
    for at in range(start, stop, 8):
        x = (h ^ (w[at] if stop - at >= 8 else _low(w[at], stop - at))) * MIX
        h = x ^ (x >> SHIFT)
    return h


@njit(nogil=True)
def plain_number(a: np.ndarray, start: int, stop: int) -> tuple[bool, int, int, bool, bool]:
    """A judgment as `numbers.parse_ints` reads it: (plain, integer of its digits, digits after the
    dot, has a dot, negative). Plain: `[+-]digits[.digits]`, 1 to 15 digits, at most 17 bytes."""
    if stop - start > 17:
        return False, 0, 0, False, False
    at, negative = start, a[start] == 45
    if negative or a[start] == 43:
        at += 1
    mantissa, digits, dot = 0, 0, -1
    while at < stop:
        c = a[at]
        if c >= 48 and c <= 57:
            mantissa = mantissa * 10 + (c - 48)
            digits += 1
        elif c == 46 and dot < 0:
            dot = at
        else:
            return False, 0, 0, False, False
        at += 1
    if digits < 1 or digits > 15:
        return False, 0, 0, False, False
    return True, mantissa, stop - dot - 1 if dot >= 0 else 0, dot >= 0, negative


@njit(nogil=True)
def decimal(a: np.ndarray, start: int, stop: int) -> tuple[bool, np.uint64, int, bool]:
    """`numbers.decimals` of one field: (plain, w, q, negative), the field w * 10^q. Plain:
    `[+-]digits[.digits][(e|E)[+-]digits]`, 1 to 19 significant digits, an exponent of 1 to 4 digits
    (numpy's also stops at 24 bytes; longer ones are read by its string cast, to the same value)."""
    at, negative = start, a[start] == 45
    if negative or a[start] == 43:
        at += 1
    w, significant, digits, after, dot = np.uint64(0), 0, 0, 0, False
    while at < stop:
        c = a[at]
        if c >= 48 and c <= 57:
            digits += 1
            after += dot
            if significant or c != 48:  # leading zeros are not significant
                significant += 1
                w = w * np.uint64(10) + np.uint64(c - 48)
        elif c == 46 and not dot:
            dot = True
        else:
            break
        at += 1
    if digits == 0 or significant > 19:
        return False, np.uint64(0), 0, False
    power = 0
    if at < stop:
        if a[at] != 101 and a[at] != 69:  # e, E
            return False, np.uint64(0), 0, False
        at += 1
        exp_negative = at < stop and a[at] == 45
        if at < stop and (a[at] == 45 or a[at] == 43):
            at += 1
        if stop - at < 1 or stop - at > 4:
            return False, np.uint64(0), 0, False
        while at < stop:
            c = a[at]
            if c < 48 or c > 57:
                return False, np.uint64(0), 0, False
            power = power * 10 + (c - 48)
            at += 1
        if exp_negative:
            power = -power
    return True, w, power - after, negative


_U32, _U1, _U9 = np.uint64(32), np.uint64(1), np.uint64(9)
_LOW32, _LOW9 = np.uint64(0xFFFFFFFF), np.uint64(0x1FF)
_TOP, _FRACTION = np.uint64(1 << 63), np.uint64((1 << 52) - 1)
_INF_BITS = np.uint64(0x7FF << 52)


@njit(nogil=True)
def _mul128(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """(high, low) 64-bit halves of a * b (`numbers._mul128` for one pair)."""
    a0, a1, b0, b1 = a & _LOW32, a >> _U32, b & _LOW32, b >> _U32
    p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
    mid = (p00 >> _U32) + (p01 & _LOW32) + (p10 & _LOW32)
    return a1 * b1 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32), (mid << _U32) | (p00 & _LOW32)


@njit(nogil=True)
def _eisel_lemire(w: np.uint64, q: int, pow5_hi: np.ndarray, pow5_lo: np.ndarray) -> np.uint64:
    """The bits of the float64 nearest w * 10^q (w below 10^19): `numbers.eisel_lemire`'s steps for one
    number, the same table (`numbers.POW5_HI`, `POW5_LO`), so the two give the same bits (tested)."""
    if w == 0 or q < MIN_Q:
        return np.uint64(0)
    if q > MAX_Q:
        return _INF_BITS
    lz = 0
    while w < _TOP:
        w <<= _U1
        lz += 1
    index = q - MIN_Q
    high, low = _mul128(w, pow5_hi[index])
    if high & _LOW9 == _LOW9:  # 55 bits not yet sure: add the next 64 bits
        extra, _ = _mul128(w, pow5_lo[index])
        summed = low + extra
        if summed < extra:
            high += _U1
        low = summed
    upper = high >> np.uint64(63)
    shift = upper + _U9
    mantissa = high >> shift
    power2 = ((217706 * q) >> 16) + 63 + int(upper) - lz + 1023
    if low <= _U1 and q >= -4 and q <= 23 and mantissa & np.uint64(3) == _U1 and (mantissa << shift) == high:
        mantissa &= ~_U1  # halfway: ties to even
    if power2 <= 0:  # subnormal, or the smallest normal where rounding reaches it
        drop = 1 - power2
        if drop >= 64:
            return np.uint64(0)
        mantissa >>= np.uint64(drop)
        return (mantissa + (mantissa & _U1)) >> _U1
    mantissa = (mantissa + (mantissa & _U1)) >> _U1
    if mantissa >= np.uint64(1 << 53):
        mantissa = np.uint64(0)
        power2 += 1
    if power2 >= 0x7FF:
        return _INF_BITS
    return (mantissa & _FRACTION) | (np.uint64(power2) << np.uint64(52))


@njit(nogil=True)
def _same_bytes(w: np.ndarray, s1: int, e1: int, s2: int, e2: int) -> bool:
    """Whether two fields are equal, a word at a time."""
    n = e1 - s1
    if n != e2 - s2:
        return False
    for i in range(0, n, 8):
        diff = w[s1 + i] ^ w[s2 + i]
        if (diff if n - i >= 8 else _low(diff, n - i)) != 0:
            return False
    return True


def split_block(a: np.ndarray, w: np.ndarray, size: int, base: int, run: bool, pow10: np.ndarray,  # type: ignore[type-arg]
                pow5_hi: np.ndarray, pow5_lo: np.ndarray) -> tuple:
    """`scan._split`'s columns of the block a[:size] (whole lines, a[size - 1] a newline; w its
    `fields.words_view`) in one pass:
    (status, lines, rows, topics, rest, tag start, tag stop, arrays); the arrays: score (run), judgment
    (qrels), doc start and stop (+ base), doc hash, line in the block, first row of each topic, its
    start and stop, rows whose score is not a decimal it reads (0 here: `inf`, over 19 digits...) and their
    start and stop: the caller finishes them with numpy. Bails out
    (status NUMPY) at the first line it does not take."""
    n_fields, at = (6, 4) if run else (4, 3)  # the value is the 5th field of a run line, the 4th of a qrels line
    cap = size // (2 * n_fields) + 1  # a result line has n_fields fields and as many separators
    value, grade = np.zeros(cap if run else 0, dtype=np.float64), np.zeros(0 if run else cap, dtype=np.int64)
    bits = value.view(np.uint64)  # a score's bits, where `_eisel_lemire` makes them
    start, stop = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    hashes, line = np.empty(cap, dtype=np.uint64), np.empty(cap, dtype=np.int32)
    topic_at, topic_start, topic_stop = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
    rest, rest_start, rest_stop = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
    arrays = (value, grade, start, stop, hashes, line, topic_at, topic_start, topic_stop, rest, rest_start, rest_stop)
    fs, fe = np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64)
    pos, lines, rows, topics, n_rest, tag_start, tag_stop = 0, 0, 0, 0, 0, 0, 0
    while pos < size:
        pos, count = _line_fields(a, pos, fs, fe)
        lines += 1
        if count == 0 or a[fs[0]] == 35:  # blank line, or a comment (`#` first)
            continue
        if (run and count < 6) or (not run and count != 4):
            return NUMPY, lines, rows, topics, n_rest, tag_start, tag_stop, arrays
        if run:
            plain, digits, power, negative = decimal(a, fs[at], fe[at])
            if plain and digits < EXACT and power <= 0 and power >= -22:
                number = digits / pow10[-power]
                value[rows] = -number if negative else number
            elif plain:
                bits[rows] = _eisel_lemire(digits, power, pow5_hi, pow5_lo) | (_TOP if negative else np.uint64(0))
            else:
                rest[n_rest], rest_start[n_rest], rest_stop[n_rest] = rows, fs[at], fe[at]
                n_rest += 1
        else:
            plain, mantissa, _, dot, negative = plain_number(a, fs[at], fe[at])
            if not plain or dot:
                return NUMPY, lines, rows, topics, n_rest, tag_start, tag_stop, arrays
            grade[rows] = -mantissa if negative else mantissa
        if topics == 0 or not _same_bytes(w, fs[0], fe[0], topic_start[topics - 1], topic_stop[topics - 1]):
            topic_at[topics], topic_start[topics], topic_stop[topics] = rows, fs[0], fe[0]
            topics += 1
        start[rows], stop[rows] = fs[2] + base, fe[2] + base
        hashes[rows], line[rows] = field_hash(w, fs[2], fe[2]), lines - 1
        tag_start, tag_stop = fs[5], fe[5]
        rows += 1
    return OK, lines, rows, topics, n_rest, tag_start, tag_stop, arrays


@njit(nogil=True)
def _repeats(topic: np.ndarray, doc_hash: np.ndarray, n_topics: int, first: np.ndarray, later: np.ndarray) -> int:
    """How many rows repeat the topic and doc hash of an earlier row, written to first/later when they
    have room; -1 when a topic comes back after another one. One small table per topic (at most half
    full, linear probing), stamped with the topic's run number instead of cleared."""
    n, size = len(topic), 16
    seen = np.zeros(n_topics, dtype=np.bool_)
    stamp, keys, rows = np.full(size, -1, np.int64), np.empty(size, np.uint64), np.empty(size, np.int64)
    found, begin, run = 0, 0, 0
    while begin < n:
        end = begin + 1
        while end < n and topic[end] == topic[begin]:
            end += 1
        if seen[topic[begin]]:
            return -1
        seen[topic[begin]] = True
        mask = 16
        while mask < 2 * (end - begin):
            mask *= 2
        if mask > size:
            size = mask
            stamp, keys, rows = np.full(size, -1, np.int64), np.empty(size, np.uint64), np.empty(size, np.int64)
        mask -= 1
        for row in range(begin, end):
            slot = np.int64(doc_hash[row] & np.uint64(mask))
            while stamp[slot] == run and keys[slot] != doc_hash[row]:
                slot = (slot + 1) & mask
            if stamp[slot] == run:  # the same topic and doc hash as an earlier row
                if found < len(first):
                    first[found], later[found] = rows[slot], row
                found += 1
            stamp[slot], keys[slot], rows[slot] = run, doc_hash[row], row
        begin, run = end, run + 1
    return found


def repeated_pairs(topic: np.ndarray, doc_hash: np.ndarray, n_topics: int) -> tuple:  # type: ignore[type-arg]
    """`repeats.duplicates`' candidates: (status, first rows, later rows) of the rows whose topic and
    doc hash equal those of an earlier row (each paired with the latest such row). A topic's rows must
    be together (status NUMPY otherwise: numpy sorts them); each topic's table then fits in the CPU
    caches, where one table over all rows would not."""
    none = np.empty(0, dtype=np.int64)
    count = _repeats(topic, doc_hash, n_topics, none, none)
    if count < 0:
        return NUMPY, none, none
    first, later = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    if count:  # found again, written this time (only files with repeated lines pay a second pass)
        _repeats(topic, doc_hash, n_topics, first, later)
    return OK, first, later
