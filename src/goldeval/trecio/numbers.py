"""Decimal numbers of TREC fields to float64, exactly as Python's `float` rounds them, a column at a time.

A decimal `[+-]digits[.digits][(e|E)[+-]digits]` is an integer w of its digits times 10^q. `combine` turns
(w, q) into the correctly rounded double:
- w < 2^53 and |q| <= 22: float(w) and 10^|q| are both exact, so one division or multiplication (correctly
  rounded by IEEE 754) is the answer (Clinger 1990, "How to read floating point numbers accurately");
- else, w up to 19 digits (below 2^64): Eisel-Lemire, as fast_float computes it (`compute_float`, Lemire
  2021, "Number parsing at a gigabyte per second", Softw. Pract. Exp. 51(8)): w normalised times a 128-bit
  truncated 5^q, which Mushtak and Lemire 2023 ("Fast number parsing without fallback") prove always
  enough for 19 digits, halfway cases and subnormals included; q < -342 is 0 and q > 308 is infinity.
Python writes a float with `repr`/`f"{x}"` in 17 significant digits at most, so that is every score a
Python program writes. Anything else (more than 19 significant digits, `inf`, `nan`, a field that is not a
number) goes to numpy's string cast, Python's correctly rounded `float`, one field at a time on error.
numba's reader (`kernels.decimal`) reads w and q itself and finishes every decimal in the kernel: Clinger's
step, else `kernels._eisel_lemire`, these steps one number at a time on the same table (`POW5_HI`, `POW5_LO`).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from goldeval.trecio.fields import padded

POW10 = 10.0 ** np.arange(23)
"""10^k for k <= 22, each exact (5^22 < 2^53): Clinger's fast path divides or multiplies by one of them."""
WIDTH = 24
"""Bytes of a field read column by column (`ext` must be readable that far past each field's start):
`-0.00012345678901234567` and `-1.2345678901234567e-305`, Python's longest, fit."""
MAX_DIGITS = 19
"""Significant digits that fit w in 64 bits (10^19 < 2^64), the most Eisel-Lemire takes."""
MIN_Q, MAX_Q = -342, 308
"""Powers of ten past which a nonzero decimal is 0 (below) or infinity (above) in float64."""
_U64 = np.uint64


def _powers_of_five() -> tuple[np.ndarray, np.ndarray]:
    """High and low 64 bits of 5^q normalised to 128 bits (top bit set) for q in [-342, 308]: truncated
    for q >= 0, rounded up from 2^b / 5^-q for q < 0 (fast_float's script/table_generation.py)."""
    table = []
    for q in range(MIN_Q, 0):
        power5 = 5**-q
        z = power5.bit_length() if power5 & (power5 - 1) else power5.bit_length() - 1  # smallest z, 2^z >= 5^-q
        c = 2 ** (z + 127 if q >= -27 else 2 * z + 128) // power5 + 1
        table.append(c >> max(0, c.bit_length() - 128))
    for q in range(0, MAX_Q + 1):
        power5 = 5**q
        shift = power5.bit_length() - 128
        table.append(power5 >> shift if shift > 0 else power5 << -shift)
    return (np.array([t >> 64 for t in table], dtype=_U64), np.array([t & ((1 << 64) - 1) for t in table], dtype=_U64))


POW5_HI, POW5_LO = _powers_of_five()
"""5^q for q in [-342, 308] in 128 bits (`_powers_of_five`), the table of both readers' Eisel-Lemire."""


def _mul128(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 128-bit products a * b of uint64 arrays, as (high, low) 64-bit halves (32-bit limbs)."""
    m32 = _U64(0xFFFFFFFF)
    a0, a1, b0, b1 = a & m32, a >> _U64(32), b & m32, b >> _U64(32)
    p00, p01, p10 = a0 * b0, a0 * b1, a1 * b0
    mid = (p00 >> _U64(32)) + (p01 & m32) + (p10 & m32)
    high = a1 * b1 + (p01 >> _U64(32)) + (p10 >> _U64(32)) + (mid >> _U64(32))
    return high, (mid << _U64(32)) | (p00 & m32)


def _bit_length(w: np.ndarray) -> np.ndarray:
    """Bits of each uint64 w >= 1 (int64): from float(w)'s exponent, one less where rounding reached 2^k."""
    exponent = np.minimum((w.astype(np.float64).view(_U64) >> _U64(52)).astype(np.int64) - 1023, 63)
    return exponent + ((w >> exponent.astype(_U64)) != 0)


def eisel_lemire(w: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The float64 nearest w * 10^q (ties to even) for uint64 w and int64 q: fast_float's compute_float
    for binary64, one numpy operation over every number at a time."""
    values = np.zeros(len(w), dtype=np.float64)
    values[(w != 0) & (q > MAX_Q)] = np.inf
    live = np.flatnonzero((w != 0) & (q >= MIN_Q) & (q <= MAX_Q))
    if not len(live):
        return values
    w, q = w[live], q[live]
    lz = 64 - _bit_length(w)
    w = w << lz.astype(_U64)
    index = q - MIN_Q
    high, low = _mul128(w, POW5_HI[index])
    wider = np.flatnonzero(high & _U64(0x1FF) == _U64(0x1FF))  # 55 bits not yet sure: add the next 64 bits
    if len(wider):
        extra, _ = _mul128(w[wider], POW5_LO[index[wider]])
        summed = low[wider] + extra
        high[wider] += (summed < extra).astype(_U64)
        low[wider] = summed
    upper = (high >> _U64(63)).astype(np.int64)
    shift = (upper + 9).astype(_U64)
    mantissa = high >> shift
    power2 = ((217706 * q) >> 16) + 63 + upper - lz + 1023
    # halfway between two floats only when the dropped bits are all zero (possible for -4 <= q <= 23)
    tie = (low <= 1) & (q >= -4) & (q <= 23) & ((mantissa & _U64(3)) == 1) & ((mantissa << shift) == high)
    mantissa &= ~tie.astype(_U64)
    bits = _normal(mantissa, power2)
    sub = power2 <= 0
    if sub.any():
        bits[sub] = _subnormal(mantissa[sub], power2[sub])
    values[live] = bits.view(np.float64)
    return values


def _normal(mantissa: np.ndarray, power2: np.ndarray) -> np.ndarray:
    """Bits of the normal double: 54 bits rounded to 53 (up; ties made even before), infinity past 0x7FE."""
    mantissa = (mantissa + (mantissa & _U64(1))) >> _U64(1)
    carry = mantissa >= _U64(1 << 53)
    mantissa = np.where(carry, _U64(1 << 52), mantissa) & _U64((1 << 52) - 1)
    power2 = power2 + carry
    inf = power2 >= 0x7FF
    return np.where(inf, _U64(0x7FF << 52), mantissa | (np.maximum(power2, 0).astype(_U64) << _U64(52)))


def _subnormal(mantissa: np.ndarray, power2: np.ndarray) -> np.ndarray:
    """Bits of a subnormal double (or the smallest normal one, where rounding reaches it), or 0."""
    shift = 1 - power2
    mantissa = mantissa >> np.minimum(shift, 63).astype(_U64)
    mantissa = np.where(shift >= 64, _U64(0), (mantissa + (mantissa & _U64(1))) >> _U64(1))
    return mantissa | ((mantissa >= _U64(1 << 52)).astype(_U64) << _U64(52))


def combine(w: np.ndarray, q: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """The float64 `float` reads from each decimal w * 10^q (w uint64 below 10^19, q int64), negated
    where `negative` (so "-0" is -0.0): Clinger's exact step where it applies, else Eisel-Lemire."""
    values = np.empty(len(w), dtype=np.float64)
    small = (w < _U64(1 << 53)) & (q >= -22) & (q <= 22)
    down, up = small & (q <= 0), small & (q > 0)
    np.divide(w, POW10[np.clip(-q, 0, 22)], out=values, where=down)
    if up.any():
        values[up] = w[up].astype(np.float64) * POW10[q[up]]
    rest = np.flatnonzero(~small)
    if len(rest):
        values[rest] = eisel_lemire(w[rest], q[rest])
    np.negative(values, out=values, where=negative)
    return values


def decimals(ext: np.ndarray, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per field: (w, the integer of its digits before any exponent (uint64); q, its power of ten
    (int64); negative; has a dot or an exponent; digits before the exponent; plain: the field is
    `[+-]digits[.digits][(e|E)[+-]digits]` with 1 to 19 significant digits (w exact) and an exponent
    of 1 to 4 digits). The fields' first WIDTH bytes (`ext` readable that far past each start) as a
    (column, field) matrix, classified at once; only w is accumulated column by column (this is the
    largest part of a scan, so it does as few operations as it can)."""
    length = np.minimum(stop - start, 255).astype(np.uint8)
    width = int(min(length.max(initial=0), WIDTH))
    column = np.arange(width, dtype=np.uint8)[:, None]
    byte = np.ascontiguousarray(sliding_window_view(ext, width)[start].T)  # rows of bytes, then columns
    inside = column < length
    value = byte - 48
    digit = (value < 10) & inside
    dot = (byte == ord(".")) & inside
    dots, dot_at = dot.sum(axis=0, dtype=np.uint8), (dot * column).sum(axis=0, dtype=np.uint8)  # its column if one
    is_e = ((byte | 32) == ord("e")) & inside
    e_count = is_e.sum(axis=0, dtype=np.uint8)
    e_at = np.where(e_count > 0, (is_e * column).sum(axis=0, dtype=np.uint8), length)  # the e's column if one
    first = byte[0] if width else np.zeros(len(start), dtype=np.uint8)
    signed = (first == ord("-")) | (first == ord("+"))
    power, exp_signed, exp_digits = _exponents(ext, start, stop, e_count == 1, e_at)
    count = digit.sum(axis=0, dtype=np.uint8) - exp_digits  # before the e
    # plain: every byte a digit, a dot before the e, the signs first and after the e (any other byte leaves a gap)
    plain = ((count + dots + signed + e_count + exp_signed + exp_digits == length) & (count >= 1) & (dots <= 1)
             & (e_count <= 1) & (dot_at <= e_at) & (exp_digits <= 4) & ((e_count == 0) | (exp_digits >= 1))
             & (stop - start <= WIDTH))  # fmt: skip
    w = np.zeros(len(start), dtype=_U64)
    mantissa_digit = digit & (column < e_at) if e_count.any() else digit
    times, plus = mantissa_digit * np.uint8(9) + np.uint8(1), value * mantissa_digit
    for j in range(width):
        w *= times[j]
        w += plus[j]
    q = power - np.where(dots > 0, e_at - dot_at - 1, 0).astype(np.int64)
    long = np.flatnonzero(plain & (count > MAX_DIGITS))
    if len(long):  # leading zeros are not significant (0.00012345678901234567: 21 digits, 17 of them)
        plain[long] = count[long] - _leading_zeros(ext, start[long], stop[long]) <= MAX_DIGITS
    return w, q, first == ord("-"), (dots > 0) | (e_count > 0), count, plain


def _exponents(ext: np.ndarray, start: np.ndarray, stop: np.ndarray, one_e: np.ndarray,
               e_at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """(the signed power after the e, whether it has a sign, the bytes after the e and its sign) of the
    fields with one e; zeros for the others. The power is read from the last 4 bytes (the others are
    checked to be digits by `decimals`)."""
    n = len(start)
    power, exp_signed, exp_digits = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool), np.zeros(n, dtype=np.uint8)
    rows = np.flatnonzero(one_e)
    if not len(rows):
        return power, exp_signed, exp_digits
    at, end = start[rows] + e_at[rows], stop[rows]
    sign = ext[at + 1]
    exp_signed[rows] = ((sign == ord("-")) | (sign == ord("+"))) & (at + 1 < end)
    exp_digits[rows] = end - at - 1 - exp_signed[rows]
    found = np.zeros(len(rows), dtype=np.int64)
    for k in range(4):
        digit = ext[np.maximum(end - 1 - k, 0)].astype(np.int64) - 48
        found += np.where(exp_digits[rows] > k, digit, 0) * 10**k
    power[rows] = np.where(sign == ord("-"), -found, found)
    return power, exp_signed, exp_digits


def _leading_zeros(ext: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Zero digits before the first other digit of each plain field (its sign and dot are not digits)."""
    field = padded(ext, start, stop, WIDTH)
    nonzero = (field >= ord("1")) & (field <= ord("9"))
    first = np.where(nonzero.any(axis=1), np.argmax(nonzero, axis=1), WIDTH)  # all zeros: all leading
    before = np.arange(WIDTH) < first[:, None]
    return np.count_nonzero((field == ord("0")) & before, axis=1)


def parse_floats(ext: np.ndarray, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores: (float64 values, which fields are not numbers or are NaN), each value what Python's
    `float` gives: `combine` for decimals with or without an exponent, numpy's string cast for the rest."""
    w, q, negative, _, _, plain = decimals(ext, start, stop)
    values = combine(w, q, negative)
    rest = np.flatnonzero(~plain)
    bad = np.zeros(len(values), dtype=bool)
    if len(rest):
        width = int((stop[rest] - start[rest]).max())
        raw = padded(ext, start[rest], stop[rest], width).view(f"S{width}").ravel()
        try:
            with np.errstate(over="ignore"):  # 1e999 is inf, as float() says, without a warning
                values[rest] = raw.astype(np.float64)
        except ValueError:  # find which ones, one by one (only on the error path)
            for i, text in zip(rest.tolist(), raw.tolist(), strict=True):
                try:
                    values[i] = float(text)
                except ValueError:
                    bad[i] = True
        bad[rest] |= np.isnan(values[rest])
    return values, bad


def parse_ints(ext: np.ndarray, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Judgments: (int64 values, which fields are not `[+-]digits`, up to 15 digits)."""
    w, _, negative, not_integer, count, plain = decimals(ext, start, stop)
    w = w.astype(np.int64)
    return np.where(negative, -w, w), ~plain | not_integer | (count > 15)
