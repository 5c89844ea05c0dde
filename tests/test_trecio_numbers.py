"""Scores read by the TREC reader equal Python's `float` bit for bit, on both paths (numba's kernel and
numpy's columns), for the digits Python writes (`repr`, 17 significant digits) and adversarial ones:
exact halfway cases, 17 to 19 digits, exponents, subnormals, the edges of the range, negative zero and
mantissas too long for 64 bits; and the 19-digit decimals take the fast path (Eisel-Lemire), not the
string cast, so these tests check the fast path's arithmetic, not numpy's."""

from __future__ import annotations

import random
import re
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from goldeval import jit
from goldeval.errors import InputErrors
from goldeval.trecio import fields, kernels, numbers, read_run_table
from goldeval.trecio import scan as scan_module

pytestmark = pytest.mark.fast  # both paths side by side: goldeval.trecio.kernels imports numba

HARD = [
    "0", "-0", "+0", "-0.0", "0e0", "-0e-999", "0.000", "-.0e5", "000000000000000000000", "1", "-1", ".5", "5.",
    "+.5e1", "1E5", "1e+05", "1e-0005", "0.1", "0.3", "1e23", "8.589973e9", "7.0e-10", "2.5", "0.1e-0",
    "9007199254740993", "9007199254740992.5", "9007199254740995", "18014398509481985", "36028797018963971",
    "9223372036854775807", "9223372036854775808", "9999999999999999999", "1234567890123456789",
    "12345678901234567890", "18446744073709551615", "18446744073709551616", "0.12345678901234567",
    "12.345678901234567", "-12.345678901234567", "0.00012345678901234567", "-0.00012345678901234567",
    "1.2345678901234567e-05", "1.2345678901234567e+16", "-1.2345678901234567e-305", "7.2057594037927933e16",
    "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308", "2.225073858507201e-308",
    "2.2250738585072009e-308", "4.9406564584124654e-324", "4.9e-324", "5e-324", "2.4703282292062327e-324",
    "2.4703282292062328e-324", "-2.4703282292062328e-324", "1e-323", "3e-324", "1e-400", "-1e-400",
    "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e308", "1e309", "-1e309",
    "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330"
    "28641669288791094655554785194040263065748867150582068479e-0", "1e12345", "inf", "-inf", "Infinity", "1_000.5",
    "1.00000000000000011102230246251565404236316680908203125", "1.00000000000000011102230246251565404236316680908203124",
    "1.00000000000000011102230246251565404236316680908203126", "0." + "0" * 30 + "1", "1" + "0" * 40,
    "3.141592653589793238462643383279502884197169399375105820974944", "123456789012345678901234567890e-20",
]  # fmt: skip
"""Hand-picked: Clinger's and Eisel-Lemire's edges, the subnormal and overflow boundaries (including the
2.2250738585072011e-308 that once hung PHP and Java), 2^53 + 1 and other halfway integers, and numbers
over 19 digits or 24 bytes, which go to the string cast."""


def _halfway(rng: random.Random) -> list[str]:
    """Decimals exactly halfway between two adjacent doubles (ties go to the even one), and one unit of
    their last digit either side: (2m + 1) 2^(e-1) for a 53-bit m, written with at most 19 digits."""
    out = []
    for _ in range(400):
        m, e = rng.randrange(1 << 52, 1 << 53), rng.randint(-3, 12)
        tie = Fraction(2 * m + 1) * Fraction(2) ** (e - 1)
        k = 0
        while tie.denominator != 1:
            tie, k = tie * 10, k + 1
        out += [f"{int(tie) + d}e-{k}" for d in (-1, 0, 1)]
    for q in range(0, 23):  # ties at positive powers of ten: 2m + 1 = r 5^q, 54 bits (q <= 22 has some)
        low, high = (1 << 53) // 5**q + 1, (1 << 54) // 5**q  # odd r in [low, high]: r 5^q has 54 bits
        for r in {rng.randint(low, high) | 1 for _ in range(5)}:
            if not (1 << 53) < r * 5**q < 1 << 54:
                continue
            d = r * 2 ** rng.randint(0, 3)
            out += [f"{d + delta}e{q}" for delta in (-1, 0, 1) if len(str(d + delta)) <= 19]
    return out


def _random(rng: random.Random, n: int) -> list[str]:
    """Every double's repr (random bits), random 17-19 digit decimals at every exponent, fixed forms."""
    out = []
    while len(out) < n:
        kind = rng.randrange(6)
        if kind == 0:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if x == x:  # not NaN (a NaN is a bad score, tested elsewhere)
                out.append(rng.choice([repr(x), f"{x}", str(x)]))
        elif kind == 1:
            out.append(f"{rng.randrange(10**16, 10**19)}e{rng.randint(-360, 330)}")
        elif kind == 2:
            out.append(repr(rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 300)))
        elif kind == 3:
            out.append(f"{rng.uniform(-1000, 1000):.{rng.randint(0, 20)}f}")
        elif kind == 4:
            out.append(repr(rng.uniform(0, 1) * 2.0**-1022 * rng.choice([1, 1e-5, 1e-10, 1e-15])))  # subnormals
        else:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 19)))
            cut = rng.randint(0, len(digits))
            out.append(f"{rng.choice(['', '-', '+'])}{digits[:cut]}.{digits[cut:]}e{rng.choice(['', '-', '+'])}{rng.randint(0, 400)}")
    return out


def _run_file(folder: Path, scores: list[str]) -> Path:
    path = folder / "run"
    path.write_text("".join(f"q{i // 100} Q0 d{i} 1 {s} tag\n" for i, s in enumerate(scores)))
    return path


def _assert_float_equal(path: Path, scores: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The run read by numba (forced) and by numpy: each value float(text), bit for bit."""
    expected = np.array([float(s) for s in scores]).view(np.uint64)
    for switch in ("1", "0"):
        monkeypatch.setenv(jit.ENV_SWITCH, switch)
        got = read_run_table(path).value.view(np.uint64)
        wrong = np.flatnonzero(got != expected)
        assert not len(wrong), [(switch, scores[i], got[i].view(np.float64), expected[i].view(np.float64)) for i in wrong[:5]]
    monkeypatch.delenv(jit.ENV_SWITCH)


def _columns(scores: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    text = ("\n".join(scores) + "\n").encode()
    lengths = np.array([len(s) for s in scores])
    start = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
    return np.frombuffer(text + bytes(numbers.WIDTH), dtype=np.uint8), start, start + lengths


def test_hand_picked_edges_equal_float_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_float_equal(_run_file(tmp_path, HARD), HARD, monkeypatch)


def test_halfway_cases_equal_float_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scores = _halfway(random.Random(7))
    assert len(scores) > 1200
    _assert_float_equal(_run_file(tmp_path, scores), scores, monkeypatch)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_decimals_equal_float_on_both_paths(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    scores = _random(random.Random(seed), 6000)
    _assert_float_equal(_run_file(tmp_path, scores), scores, monkeypatch)


_FAST = re.compile(r"[+-]?(?P<int>\d*)\.?(?P<frac>\d*)([eE][+-]?\d{1,4})?")


def _fast(text: str, width: int = numbers.WIDTH) -> bool:
    """Whether `text` is a decimal the fast path takes: at most 19 significant digits and `width` bytes
    (numba's kernel has no width limit)."""
    match = _FAST.fullmatch(text)
    digits = match["int"] + match["frac"] if match else ""
    return bool(digits) and len(text) <= width and len(digits.lstrip("0")) <= 19


def test_decimals_of_19_digits_take_the_fast_path_on_both_paths() -> None:
    """Regression (issue 23): 16 and 17 digits went to numpy's string cast, 3x the cost of a scan. Here
    only numbers over 19 significant digits or 24 bytes (and inf) are left to it."""
    rng = random.Random(3)
    scores = HARD + _halfway(rng) + _random(rng, 3000)
    fast = [s for s in scores if _fast(s)]
    assert len(fast) > 0.9 * len(scores) and "9007199254740993" in fast and "1.2345678901234567e-05" in fast
    *_, plain = numbers.decimals(*_columns(scores))
    assert [s for s, p in zip(scores, plain, strict=True) if p] == fast
    for s in scores:
        a = np.frombuffer(s.encode() + bytes(8), dtype=np.uint8)
        assert kernels.decimal(a, 0, len(s))[0] == _fast(s, width=1000), s


def test_combine_is_float_of_digits_and_power() -> None:
    rng = random.Random(11)
    w = [rng.randrange(1, 10**19) for _ in range(5000)] + [1, 10**19 - 1, 2**53, 2**53 + 1, 2**64 - 1, 0]
    q = [rng.randint(-400, 400) for _ in range(len(w))]
    q[-6:] = [-400, 310, 0, -1, -19, 5]
    values = numbers.combine(np.array(w, dtype=np.uint64), np.array(q, dtype=np.int64), np.zeros(len(w), dtype=bool))
    assert values.tolist() == [float(f"{a}e{b}") for a, b in zip(w, q, strict=True)]


@pytest.mark.parametrize("text", ["1e", "e5", "1.2.3", "1e5.0", "--1", "1e+-5", "1e5e5", ".e1", "-", "nan"])
def test_malformed_numbers_are_errors_on_both_paths(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run"
    path.write_text(f"q1 Q0 d1 1 0.5 x\nq1 Q0 d2 2 {text} x\n")
    for switch in ("1", "0"):
        monkeypatch.setenv(jit.ENV_SWITCH, switch)
        with pytest.raises(InputErrors, match=f"score `{re.escape(text)}` is not a number"):
            read_run_table(path)


def test_a_block_of_full_precision_scores_is_read_in_the_kernel(tmp_path: Path) -> None:
    """Regression: numba's kernel sent every score over 15 digits to numpy's string cast, later to numpy's
    Eisel-Lemire; now it reads them itself and leaves numpy only what is not a decimal."""
    scores = [repr(random.Random(i).uniform(0, 30)) for i in range(2000)] + ["1.5e-07", "inf"]
    assert sum(len(s.replace(".", "").lstrip("0")) >= 17 for s in scores) > 500  # w past 2^53: not Clinger's
    path = _run_file(tmp_path, scores)
    kernel = jit.compiled(kernels.split_block)
    ext, base, size = next(scan_module._blocks(scan_module._map(path, "run")))
    status, _, rows, _, n_rest, _, _, arrays = kernel(ext, fields.words_view(ext), size, base, True, numbers.POW10,
                                                      numbers.POW5_HI, numbers.POW5_LO)  # fmt: skip
    assert status == kernels.OK and rows == len(scores) and n_rest == 1
    rest, rest_start, rest_stop = (array[:n_rest] for array in arrays[9:])  # inf only, left to numpy
    assert rest.tolist() == [len(scores) - 1] and bytes(ext[int(rest_start[0]) : int(rest_stop[0])]) == b"inf"
    block = scan_module._split_compiled(kernel, "run", ext, base, size)
    assert block is not None and block.columns["value"].tolist() == [float(s) for s in scores]
