"""The C reader of Python dicts (`goldeval.metrics._locate`, issue 23): `judge_scores` gives exactly what the
Python reader gives on every input the C reader takes, and every other input goes to the Python reader whole.
trec_eval's numbers themselves are checked both ways in test_metrics_pytrec_parity.py."""

from __future__ import annotations

import dataclasses
import math
import random
from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
import pytrec_eval

from fast_paths import use_c_reader
from goldeval.errors import InputError
from goldeval.metrics import judge
from goldeval.metrics.compute import evaluate_scores
from goldeval.metrics.definitions import parse_metric
from goldeval.metrics.judge import Judged, judge_scores


def test_the_c_reader_is_built() -> None:
    # pip builds it wherever a C compiler is found (pyproject's ext-modules, optional); our CI image has gcc,
    # so a missing build here is a broken build, not a machine without a compiler.
    assert judge._clocate is not None, "goldeval.metrics._locate is not built: `pip install -e .` needs a C compiler"


def _judged(qrels: Any, run: Any, *, c: bool, monkeypatch: pytest.MonkeyPatch, expect_c: bool = True,
            **kwargs: Any) -> Judged:  # fmt: skip
    """judge_scores with the C reader (asserting whether it did the reading: `expect_c`) or with the Python one."""
    with monkeypatch.context() as m:
        use_c_reader(c, m)
        python_read = judge._read_python
        calls: list[int] = []

        def spy(*args: Any) -> Any:
            calls.append(1)
            return python_read(*args)

        m.setattr(judge, "_read_python", spy)
        out = judge_scores(qrels, run, **kwargs)
    assert bool(calls) == (not c or not expect_c), "the wrong reader read the dicts"
    return out


def _assert_same(a: Judged, b: Judged) -> None:
    for field in dataclasses.fields(Judged):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), field.name
        else:
            assert x == y, field.name


def _both(qrels: Any, run: Any, monkeypatch: pytest.MonkeyPatch, *, expect_c: bool = True, **kwargs: Any) -> Judged:
    c = _judged(qrels, run, c=True, monkeypatch=monkeypatch, expect_c=expect_c, **kwargs)
    _assert_same(c, _judged(qrels, run, c=False, monkeypatch=monkeypatch, **kwargs))
    return c


SCORES = [0.0, -0.0, 0.5, 0.5, 1.0, 1.0, 2.5, -1.0, math.inf, -math.inf, 3, 7, True, np.float64(0.5), 2**53 + 1]
"""Ties, both zeros, both infinities, ints (one past 2^53: rounded as numpy rounds it), a bool and numpy's float64
(a float subclass): everything the C reader reads itself."""


def _random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, Any]]]:
    rng = random.Random(seed)
    pool = [f"d{j:03d}" for j in range(60)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, Any]] = {}
    for i in range(150):
        qid = f"q{i}"
        if i % 13 != 5:
            marks = rng.sample(pool, rng.randint(0, 30))  # ids as strs of their own, not the run's (a file's, a database's)
            qrels[qid] = {(d + ".")[:-1]: rng.choice([-1, 0, 0, 1, 2, 3]) for d in marks}
        if i % 11 != 3:  # some questions have no list at all, some an empty one
            run[qid] = {d: rng.choice(SCORES) for d in rng.sample(pool, rng.choice([0, 1, 5, 30, 59]))}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(("level", "all_judged"), [(1, False), (1, True), (2, False), (3, True)])
def test_the_readers_agree(seed: int, level: int, all_judged: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = _random_case(seed)
    judged = _both(qrels, run, monkeypatch, level=level, all_judged=all_judged)
    assert len(judged.q) > 100
    tied = sum(1 for q, marks in qrels.items() for d in marks if d in run.get(q, {})
               and sum(v == run[q][d] for v in run[q].values()) > 1)  # fmt: skip
    assert tied > 50  # ranks broken by id after the reader's counts


def test_long_lists_are_read_a_few_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # A batch holds at most 2^16 scores unless one list alone has more: lists of 40k and 70k cut the batches
    rng = random.Random(5)
    run = {f"q{i}": {f"d{j}": float(rng.randint(0, 999)) for j in range(n)} for i, n in enumerate([40_000, 40_000, 70_000, 3])}
    qrels = {q: {f"d{j}": rng.choice([0, 1, 2]) for j in rng.sample(range(len(docs)), min(len(docs), 25))}
             for q, docs in run.items()}  # fmt: skip
    judged = _both(qrels, run, monkeypatch, all_judged=True)
    assert len(judged.q) == 3 * 25 + 3


@pytest.mark.parametrize("located", [16, 17, 60])
def test_many_located_ids_in_one_list(located: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Past 16 located ids in a list the C reader sorts the list once and searches it; the ranks must be those
    # trec_eval gives (pytrec_eval embeds its C code), ties by id descending.
    rng = random.Random(located)
    docs = [f"d{j:03d}" for j in range(200)]
    run = {"q": {d: rng.choice([0.0, 0.25, 0.5, 0.5, 1.0, -math.inf]) for d in docs}, "r": {"x": 1.0}}
    qrels = {"q": {d: rng.choice([1, 2]) for d in rng.sample(docs, located)}, "r": {"x": 1}}
    judged = _both(qrels, run, monkeypatch)
    assert int((judged.q == 0).sum()) == located
    values = evaluate_scores(qrels, run, [parse_metric("map")])
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    assert values[parse_metric("map")][0] == pytest.approx(reference["q"]["map"], abs=1e-12)


class _OwnFloat(float):
    """A float subclass whose float() is another number: numpy reads float(value), so both readers must."""

    def __float__(self) -> float:
        return 42.0


def test_a_float_subclass_of_the_users_is_read_as_numpy_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its float() could run any code: the Python reader reads it (numpy's float64, a C type, is read in C: SCORES)
    run = {"q": {"a": _OwnFloat(0.0), "b": 1.0, "c": 50.0}}
    judged = _both({"q": {"a": 1}}, run, monkeypatch, expect_c=False)  # float() of it is 42: a ranks second
    assert list(judged.rank) == [2]


@pytest.mark.parametrize(
    ("case", "qrels", "run"),
    [
        ("a judgment as a float subclass", {"q": {"a": _OwnFloat(1.0)}}, {"q": {"a": 0.5, "b": 0.7}}),
        ("numpy float32 scores", {"q": {"a": 1}}, {"q": {"a": np.float32(0.1), "b": np.float32(0.2)}}),
        ("scores as texts (numpy parses them)", {"q": {"a": 1}}, {"q": {"a": "0.5", "b": "0.7"}}),
        ("a judgment as numpy's int64", {"q": {"a": np.int64(2)}}, {"q": {"a": 0.5, "b": 0.7}}),
        ("ids that are not str", {"q": {1: 1, 2: 1}}, {"q": {1: 0.5, 2: 0.7, 3: 0.9}}),
    ],
)
def test_objects_it_does_not_read_go_to_the_python_reader(case: str, qrels: Any, run: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    _both(qrels, run, monkeypatch, expect_c=False)


@pytest.mark.parametrize("make", [OrderedDict, MappingProxyType, lambda _: None], ids=["OrderedDict", "mapping proxy", "None"])
def test_other_mappings_are_made_dicts_and_read_in_c(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = {"q": make({"a": 1, "b": 0}) or {"a": 1, "b": 0}, "r": {"x": 1}}
    run = {"q": make({"a": 0.5, "b": 0.7, "c": 0.7}), "r": {"x": 1.0}}
    expected = [2, 3, 1] if run["q"] is not None else [1]
    assert list(_both(qrels, run, monkeypatch, all_judged=True).rank) == expected


def test_an_int_too_large_for_a_float_fails_as_numpy_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    for c in (True, False):
        with pytest.raises(OverflowError, match="too large"):
            _judged({"q": {"a": 1}}, {"q": {"a": 10**400}}, c=c, monkeypatch=monkeypatch, expect_c=False)


def test_nan_is_refused_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    run = {"p": {"x": 1.0, "y": math.nan}, "q": {"a": 1.0, "b": math.nan}, "r": {"c": math.nan}}
    qrels = {"p": {"x": 0}, "q": {"a": 1}, "r": {"c": 1}}  # p holds no relevant judgment: its list is not read
    for c in (True, False):
        with pytest.raises(InputError, match="question 'q': document 'b' has score NaN"):
            _judged(qrels, run, c=c, monkeypatch=monkeypatch)
    # read with every judgment, p's list is read too, and is the first with a NaN
    for c in (True, False):
        with pytest.raises(InputError, match="question 'p': document 'y' has score NaN"):
            _judged(qrels, run, c=c, monkeypatch=monkeypatch, all_judged=True)


def test_a_none_score_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # numpy reads None as NaN; the error names the document and says None (it was a bare StopIteration)
    for c in (True, False):
        with pytest.raises(InputError, match="question 'q': document 'a' has score None"):
            _judged({"q": {"b": 1}}, {"q": {"b": 1.0, "a": None}}, c=c, monkeypatch=monkeypatch, expect_c=False)


def test_a_nan_before_an_object_for_python_fails_as_the_python_reader_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # The C reader reads on past a NaN: a later score only numpy reads (a text) sends the whole call to Python,
    # which then fails as it would alone (numpy's error on the text, the NaN not reached).
    run = {"p": {"a": math.nan}, "q": {"a": "not a number"}}
    qrels = {"p": {"a": 1}, "q": {"a": 1}}
    errors = []
    for c in (True, False):
        with pytest.raises(ValueError) as caught:
            _judged(qrels, run, c=c, monkeypatch=monkeypatch, expect_c=False)
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1] and errors[0][0] is not InputError


def test_buffers_of_the_wrong_size_are_refused() -> None:
    assert judge._clocate is not None
    rows, judged = [{"a": 1.0}], [{"a": 1, "b": 0}]
    cells = [np.empty(2), np.empty(2), np.empty(2, dtype=np.int64), np.empty(1, dtype=np.int64)]
    with pytest.raises(ValueError, match="tied: 8 bytes, expected 16"):
        judge._clocate.locate(rows, judged, 1.0, *cells)
    with pytest.raises(ValueError, match="differ in length"):
        judge._clocate.sizes(rows, judged * 2, np.empty(1, dtype=np.int64), np.empty(2, dtype=np.int64))
