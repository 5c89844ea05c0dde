"""The TREC reader's numba path against its numpy path: the same tables, column by column and bit for
bit, the same problems, the same judging; and the compiled kernels cached on disk for the next process
(goldeval.jit). numba is in the test extras (`fast`), so both paths always run here."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from goldeval import jit
from goldeval.errors import InputErrors
from goldeval.metrics import trec_judge, trec_kernels
from goldeval.metrics.trec import evaluate_trec_files, parse_measures
from goldeval.trecio import TrecTable, fields, kernels, read_qrels_table, read_run_table
from goldeval.trecio import scan as scan_module
from goldeval.trecio.fields import words_view
from goldeval.trecio.numbers import POW5_HI, POW5_LO, POW10

pytestmark = pytest.mark.fast  # the numba kernels themselves (goldeval.trecio.kernels imports numba)


AWKWARD_RUN = (
    b"\xef\xbb\xbf# a comment line\n"
    b"q1 Q0 d1 1 12.5 tagA\r\n"
    b"  q1\tQ0\t d2  2\t-0.25 tagA extra columns\n"
    b"\n   \t\n"
    b"q2 Q0 d1 1 1e-3 tagA\n"
    b"q2 Q0 d3 2 +7 tagA\n"
    b"q2 Q0 d4 3 12.345678901234567 tagA\n"
    b"q2 Q0 d5 3 -0 tagA\n"
    b"q2 Q0 d6 3 -0.0000000000001 tagA\n"
    b"q2 Q0 d7 3 123456789012345 tagA\n"
    b"q2 Q0 d8 3 1234567890123456 tagA\n"
    b"#q2 Q0 d9 3 1 commented out\n"
    b"q1 Q0 d5 3 .5 tagA\n"
    b"q1 Q0 a-doc-id-longer-than-sixty-four-bytes-so-that-its-hash-takes-nine-words 4 5. tagA\n"
    b"q3 Q0 caf\xc3\xa9 1 -inf tagB\n"
    b"q3 Q0 \xff\xfe-latin1-\xe9 2 2E5 tagB\n"
    b"q3 Q0 ctrl\x01byte 3 1.5 tagB\x0b\n"
    b"q3\x0cQ0 d6 4 007 tagB\n"
    b"q3 Q0 d6-other 2 5. tagZ"  # no final newline; the run's tag is the last line's
)


def _tables(path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> tuple[TrecTable, TrecTable]:
    """The file read with numba, then with numpy (GOLDEVAL_NUMBA=0)."""
    read = read_run_table if kind == "run" else read_qrels_table
    monkeypatch.setenv(jit.ENV_SWITCH, "1")  # numba even for a small file
    assert jit.available()
    compiled = read(path)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    plain = read(path)
    monkeypatch.delenv(jit.ENV_SWITCH)
    return compiled, plain


def _assert_same_tables(a: TrecTable, b: TrecTable) -> None:
    assert (a.topics, a.tag, a.kind, len(a)) == (b.topics, b.tag, b.kind, len(b))
    for name in ("topic", "value", "doc_start", "doc_stop", "doc_hash", "line"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert x.tobytes() == y.tobytes(), name  # bit for bit: -0.0 and 0.0 differ here


def _assert_blocks_taken_by_numba(path: Path, kind: str) -> int:
    """Every block of the file is split by the kernel (none left to numpy), to the same block numpy
    makes; the number of blocks."""
    kernel = jit.compiled(kernels.split_block)
    source = scan_module._map(path, kind)
    count = 0
    for ext, base, size in scan_module._blocks(source):
        fast = scan_module._split_compiled(kernel, kind, ext, base, size)
        slow = scan_module._split_numpy(kind, ext, base, size)
        assert fast is not None, f"block at {base} was left to numpy"
        assert (fast.lines, fast.tag, fast.topic_names, fast.problems) == (slow.lines, slow.tag, slow.topic_names,
                                                                          slow.problems)  # fmt: skip
        assert np.array_equal(fast.topic_runs, slow.topic_runs)
        assert fast.columns.keys() == slow.columns.keys()
        for key, column in fast.columns.items():
            assert column.dtype == slow.columns[key].dtype and column.tobytes() == slow.columns[key].tobytes(), key
        count += 1
    return count


@pytest.fixture(params=[1 << 20, 300, 64], ids=["one-block", "small-blocks", "tiny-blocks"])
def block_bytes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(scan_module, "BLOCK_BYTES", request.param)
    return int(request.param)


def test_awkward_run_reads_the_same_with_and_without_numba(tmp_path: Path, block_bytes: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    path = tmp_path / "run"
    path.write_bytes(AWKWARD_RUN)
    assert _assert_blocks_taken_by_numba(path, "run") >= max(1, len(AWKWARD_RUN) // block_bytes)
    compiled, plain = _tables(path, "run", monkeypatch)
    _assert_same_tables(compiled, plain)
    assert compiled.tag == "tagZ" and compiled.topics == ["q1", "q2", "q3"]
    values = dict(zip(compiled.line.tolist(), compiled.value.tolist(), strict=True))
    assert values[8] == 12.345678901234567 and values[6] == 1e-3 and values[12] == 1234567890123456.0
    assert np.signbit(compiled.value[compiled.line == 9]).all()  # "-0" is -0.0, as float("-0")


def _random_run(rng: random.Random, lines: int, grouped: bool) -> bytes:
    """Run lines with every number form and doc ids of 1 to 70 bytes, some not UTF-8."""
    out = []
    for i in range(lines):
        topic = f"t{i * 7 // lines}" if grouped else f"t{rng.randint(0, 6)}"
        doc = bytes(rng.choice(b"abcXYZ019-_./\xc3\xa9\xff") for _ in range(rng.randint(1, 70)))
        score = rng.choice([f"{rng.uniform(-50, 50):.{rng.randint(0, 9)}f}", repr(rng.uniform(-1, 1)), f"{rng.uniform(0, 1):e}",
                            str(rng.randint(-3, 3)), repr(rng.uniform(-1e-9, 1e-9)), f"{rng.randint(0, 10**17)}"])  # fmt: skip
        sep = rng.choice([b" ", b"\t", b"  ", b" \t "])
        out.append(sep.join([topic.encode(), b"Q0", doc + b"%d" % i, str(i).encode(), score.encode(), b"run"]))
        if rng.random() < 0.05:
            out.append(rng.choice([b"", b"# comment", b"   "]))
    end = rng.choice([b"\n", b"\r\n"])
    return end.join(out) + rng.choice([end, b""])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_runs_read_the_same_with_and_without_numba(tmp_path: Path, seed: int, block_bytes: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    rng = random.Random(seed)
    path = tmp_path / "run"
    path.write_bytes(_random_run(rng, 400, grouped=seed % 2 == 0))
    _assert_blocks_taken_by_numba(path, "run")
    _assert_same_tables(*_tables(path, "run", monkeypatch))


def test_qrels_read_the_same_with_and_without_numba(tmp_path: Path, block_bytes: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    rng = random.Random(5)
    lines = [f"{rng.choice(['301', '302', 'x'])}{rng.choice([' ', chr(9), '   '])}0 doc-{i}-\u00e9 "
             f"{rng.choice(['-1', '0', '1', '2', '+3', '007', '-0'])}" for i in range(300)]  # fmt: skip
    path = tmp_path / "qrels"
    path.write_bytes(("\ufeff# judged by hand\r\n" + "\r\n".join(lines)).encode())
    _assert_blocks_taken_by_numba(path, "qrels")
    compiled, plain = _tables(path, "qrels", monkeypatch)
    _assert_same_tables(compiled, plain)
    assert compiled.value.dtype == np.int64 and set(compiled.value.tolist()) == {-1, 0, 1, 2, 3, 7}


@pytest.mark.parametrize(("kind", "text"), [
    ("qrels", b"1 0 d1 1\n1 0 d2\n1 0 d3 yes\n\n1 0 d1 2\n2 0 d1 1\n2 0 d1 1\n\xff 0 d9 1\n3 0 d4 1.5\n"),
    ("qrels", b"1 0 d1 1\n2 0 d1 1\n1 0 d1 1\n2 0 d2 1\n2 0 d1 0\n"),  # topics not together, repeats
    ("run", b"1 Q0 d1 1 2 x\n1 Q0 d2 2 nan x\n1 Q0 d1 3 1 x\n1 Q0 d4 1e999x x\n2 Q0 d1 1\n\xfe Q0 d 1 1 x\n"),
    ("run", b"1 Q0 d1 1 2 x\n1 Q0 d2 2 1 x\n1 Q0 d1 3 1 x\n1 Q0 d2 3 1 x\n1 Q0 d2 3 1 x\n"),  # repeats, together
    ("qrels", b"\xff 0 d1 1\n1 0 d2 1\n\xfe\xff 0 d1 2\n"),  # topics not UTF-8, in blocks the kernel takes
])  # fmt: skip
def test_problems_are_the_same_with_and_without_numba(tmp_path: Path, block_bytes: int, kind: str, text: bytes,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    path = tmp_path / kind
    path.write_bytes(text)
    read = read_run_table if kind == "run" else read_qrels_table
    messages = []
    for switch in ("1", "0"):
        monkeypatch.setenv(jit.ENV_SWITCH, switch)
        with pytest.raises(InputErrors) as info:
            read(path)
        messages.append([(p.line, p.reason, p.value, p.hint) for p in info.value.problems])
    assert messages[0] == messages[1] and messages[0]


@pytest.mark.parametrize("switch", ["1", "0"])
def test_a_short_doc_id_beside_a_long_one_still_matches_its_judgment(tmp_path: Path, switch: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Regression: numpy's hash mixed every field up to its block's longest id, so `d1` hashed one way in
    the qrels and another in a run block holding a longer id: the relevant result was missed (map 0)."""
    monkeypatch.setenv(jit.ENV_SWITCH, switch)
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 1.0 x\n1 Q0 a-doc-id-longer-than-eight-bytes 2 0.5 x\n")
    report = evaluate_trec_files(tmp_path / "qrels", tmp_path / "run", parse_measures(["map"]))
    assert report.summary() == [("map", "1.0000")]
    a = np.frombuffer(b"d1 a-doc-id-longer-than-eight-bytes" + bytes(8), dtype=np.uint8)
    alone, together = fields.field_hash(a, np.array([0]), np.array([2])), fields.field_hash(a, np.array([0, 3]),
                                                                                             np.array([2, 35]))  # fmt: skip
    assert alone[0] == together[0] == kernels.field_hash(words_view(a), 0, 2)


def test_the_kernel_leaves_a_block_it_does_not_take_to_numpy() -> None:
    kernel = jit.compiled(kernels.split_block)
    for text, kind in ((b"1 0 d1\n", "qrels"), (b"1 0 d1 1.0\n", "qrels"), (b"1 Q0 d 1 2\n", "run"),
                       (b"1 0 d 1 2 x\n1 0 d 1\n", "qrels")):  # fmt: skip
        ext = np.frombuffer(text + bytes(24), dtype=np.uint8)
        status, *_ = kernel(ext, words_view(ext), len(text), 0, kind == "run", POW10, POW5_HI, POW5_LO)
        assert status == kernels.NUMPY, text
        assert scan_module._split_compiled(kernel, kind, ext, 0, len(text)) is None


def _judging_files(folder: Path, rng: random.Random, per_topic: int) -> tuple[Path, Path]:
    """Qrels and a run with ties, graded and negative judgments, topics in both, one, or out of order."""
    qrels, run = [], []
    for topic in range(40):
        docs = [f"d{j}" for j in rng.sample(range(300), per_topic)]
        qrels += [f"{topic} 0 {d} {rng.choice([-1, 0, 1, 2])}" for d in docs[: per_topic // 2]]
        if topic % 7:
            run += [f"{topic} Q0 {d} 0 {rng.choice(['1', '2', '0.5', '-3'])} sys" for d in docs]
    if rng.random() < 0.5:
        rng.shuffle(run)
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    (folder / "run").write_text("\n".join(run) + "\n")
    return folder / "qrels", folder / "run"


@pytest.mark.parametrize(("seed", "per_topic"), [(0, 20), (1, 60), (2, 150)])
@pytest.mark.parametrize("compare_per_row", [32, 0])
def test_judging_is_the_same_with_and_without_numba(tmp_path: Path, seed: int, per_topic: int, compare_per_row: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """compare_per_row 0: ranks by numpy's sorted blocks even with numba (the budget exceeded)."""
    monkeypatch.setattr(trec_judge, "COMPARE_PER_ROW", compare_per_row)
    qrels, run = _judging_files(tmp_path, random.Random(seed), per_topic)
    request = parse_measures(["all_trec"])
    monkeypatch.setenv(jit.ENV_SWITCH, "1")
    compiled = evaluate_trec_files(qrels, run, request, complete=seed == 1)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    plain = evaluate_trec_files(qrels, run, request, complete=seed == 1)
    assert compiled.lines(per_query=True) == plain.lines(per_query=True)
    for (name, _, ours), (_, _, theirs) in zip(compiled.rows, plain.rows, strict=True):
        assert ours.tolist() == theirs.tolist() if ours.dtype == object else ours.tobytes() == theirs.tobytes(), name


def test_compiled_join_and_counts_equal_numpys() -> None:
    rng = np.random.default_rng(4)
    owner = rng.integers(0, 50, 2000)
    keys = rng.integers(0, 1 << 62, 2000, dtype=np.uint64)
    rows = np.arange(2000, dtype=np.int64) * 3
    q_of_run = np.concatenate((owner, rng.integers(0, 51, 3000)))  # 50: topics not evaluated
    run_keys = np.concatenate((keys, rng.integers(0, 1 << 62, 3000, dtype=np.uint64)))
    q_of_code = np.arange(51)[::-1].copy()  # the run's topic codes need not be the evaluated topics' order
    run_topic = 50 - q_of_run
    hits, match = jit.compiled(trec_kernels.hash_join)(owner, keys, rows, 50, q_of_code, run_topic, run_keys)
    assert hits.tolist() == list(range(2000)) and np.array_equal(match, rows)  # the others are not judged
    from goldeval.metrics.ranks import above_and_tied

    scores = rng.choice([0.5, 1.0, 2.0, -np.inf, np.inf], 600)
    lengths = np.array([100, 0, 200, 300])
    starts = np.cumsum(lengths) - lengths
    row = rng.choice([0, 2, 3], 80)
    score = scores[starts[row] + rng.integers(0, 100, 80)]
    ours = jit.compiled(trec_kernels.above_and_tied)(scores, starts, lengths, row, score)
    theirs = above_and_tied(scores, starts, lengths, row, score)
    assert np.array_equal(ours[0], theirs[0]) and np.array_equal(ours[1], theirs[1])


TREC_EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval"


@pytest.mark.parametrize("switch", ["1", "0"])
def test_trec_eval_test_vectors_through_both_paths(switch: str, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """trec_eval's own out.test and out.test.aq (every measure per topic), read and judged by numba
    (forced: these files are small) and by numpy."""
    from goldeval.cli import main

    for path, kind in ((TREC_EVAL / "qrels.test", "qrels"), (TREC_EVAL / "results.test", "run")):
        assert _assert_blocks_taken_by_numba(path, kind) >= 1
    monkeypatch.setenv(jit.ENV_SWITCH, switch)
    assert main(["trec", str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")]) == 0
    assert capsys.readouterr().out.splitlines() == (TREC_EVAL / "out.test").read_text().splitlines()
    assert main(["trec", "-q", "-m", "all_trec", str(TREC_EVAL / "qrels.test"), str(TREC_EVAL / "results.test")]) == 0
    ours = {tuple(part.strip() for part in line.split("\t")) for line in capsys.readouterr().out.splitlines()}
    reference = {tuple(part.strip() for part in line.split("\t"))
                 for line in (TREC_EVAL / "out.test.aq").read_text().splitlines()}  # fmt: skip
    assert ours == reference and len(ours) == 387


def test_numba_is_loaded_once_the_numpy_work_of_the_process_repays_it(tmp_path: Path) -> None:
    """Ski rental, each file's bytes counted once (regression: the join and the repeated-pairs check
    counted the files again, so one evaluation of 54 MB loaded numba, at 0.3 s of extra cost)."""
    qrels, run = _judging_files(tmp_path, random.Random(3), 20)
    total = qrels.stat().st_size + run.stat().st_size
    code = (
        "import io, sys, contextlib; from goldeval import jit; from goldeval.cli import main; "
        f"jit.LOAD_BYTES = {int(total * 1.5)}; loaded = []\n"
        "for _ in range(3):\n"
        "    with contextlib.redirect_stdout(io.StringIO()): assert main(['trec', sys.argv[1], sys.argv[2]]) == 0\n"
        "    loaded.append('numba' in sys.modules)\n"
        "print(loaded, jit._SPENT[0])"
    )
    out = subprocess.run([sys.executable, "-c", code, str(qrels), str(run)], capture_output=True, text=True,
                         check=True, env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert out.stdout.split() == ["[False,", "True,", "True]", str(total)]  # numpy once, then numba


# --- goldeval.jit: the compiled code cached on disk ---------------------------------------------------

_PROBE = (
    "import json, sys; from pathlib import Path; from goldeval import jit; from goldeval.trecio import kernels, "
    "read_run_table; t = read_run_table(sys.argv[1]); k = jit.compiled(kernels.split_block); "
    "print(json.dumps([len(t), sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()), "
    "k.stats.cache_path]))"
)


SOURCE = str(Path(jit.__file__).resolve().parents[1])
"""Where the goldeval under test is: a fresh process imports that one, not whichever is installed."""


def _probe(run: Path, cache_home: Path) -> list[object]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cache_home), "XDG_CACHE_HOME": str(cache_home), "PYTHONPATH": SOURCE}
    out = subprocess.run([sys.executable, "-c", _PROBE, str(run)], capture_output=True, text=True, check=True, env=env)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_a_second_process_loads_the_compiled_reader_from_the_cache_folder(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 2.5 x\n1 Q0 b 2 1.5 x\n")
    rows, hits, misses, folder = _probe(run, tmp_path / "cache")
    assert (rows, hits, misses) == (2, 0, 1)
    assert Path(str(folder)).parent == tmp_path / "cache" / "goldeval" / "numba"  # this install's folder in it
    assert Path(str(folder)).name.startswith("kernels-")
    assert list(Path(str(folder)).glob("kernels.split_block-*.nbi"))
    assert _probe(run, tmp_path / "cache") == [2, 1, 0, folder]  # loaded, not compiled, from the same folder


def test_an_unwritable_cache_folder_compiles_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    kernel = jit.compiled(trec_kernels.above_and_tied)
    assert type(kernel._cache).__name__ == "NullCache"  # numba's own: nothing written anywhere
    above, tied = kernel(np.array([3.0, 2.0, 2.0]), np.array([0]), np.array([3]), np.array([0, 0]), np.array([2.0, 3.0]))
    assert above.tolist() == [1, 0] and tied.tolist() == [2, 1]
    monkeypatch.setenv("GOLDEVAL_CACHE", str(tmp_path / "mine"))  # the user cache's own variable wins over XDG's
    moved = jit.compiled(trec_kernels.above_and_tied)
    assert Path(moved.stats.cache_path).parent == tmp_path / "mine" / "numba"


_KERNEL = """
from numba import njit  # noqa: F401 - numba is what the install compiles with

def doubled(values):
    total = 0.0
    for v in values:
        total += 2.0 * v
    return total
"""
_INSTALL_PROBE = (
    "import json, sys; import numpy as np; from goldeval import jit; import kernelmod; "
    "k = jit.compiled(kernelmod.doubled); value = k(np.arange(4.0)); "
    "print(json.dumps([value, sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()), k.stats.cache_path]))"
)


def _install(tmp_path: Path, name: str, comment: str) -> Path:
    """A stand-in for one install of a kernel module: the same kernel, names and line numbers, its file
    differing only by a trailing comment (as two goldeval versions whose kernel did not move would)."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "kernelmod.py").write_text(_KERNEL + f"# {comment}\n")
    return folder


def _run_install(install: Path, cache: Path) -> list[object]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cache), "GOLDEVAL_CACHE": str(cache),
           "PYTHONPATH": os.pathsep.join([str(install), SOURCE])}
    out = subprocess.run([sys.executable, "-c", _INSTALL_PROBE], capture_output=True, text=True, check=True, env=env)
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_two_installs_keep_their_own_compiled_kernels(tmp_path: Path) -> None:
    """Regression: numba's cache in the user cache had no folder per install, so two installs (two virtual
    environments, two goldeval versions) sharing a user cache threw each other's compiled code away: numba
    keeps one index per kernel name and discards one written from other source or by another numba."""
    cache = tmp_path / "user-cache"
    one, two = _install(tmp_path, "one", "install one"), _install(tmp_path, "two", "install two")
    first = _run_install(one, cache)
    second = _run_install(two, cache)
    assert first[:3] == second[:3] == [12.0, 0, 1]  # each compiled once
    for install, made in ((one, first), (two, second), (one, first)):  # alternating: each loads its own
        assert _run_install(install, cache) == [12.0, 1, 0, made[3]]  # (was [12.0, 0, 1]: compiled again)
    assert first[3] != second[3] and Path(str(first[3])).parent == Path(str(second[3])).parent == cache / "numba"
    same = tmp_path / "three"  # a third install of install one's code: the same compiled code, shared
    same.mkdir()
    (same / "kernelmod.py").write_bytes((one / "kernelmod.py").read_bytes())
    assert _run_install(same, cache) == [12.0, 1, 0, first[3]]


def test_a_kernel_folder_is_keyed_by_what_makes_compiled_code_incompatible(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    import numba

    parts = jit.compatibility(trec_kernels.hash_join)
    source = Path(trec_kernels.__file__).read_bytes()
    assert parts["source"] == hashlib.sha256(source).hexdigest()
    assert parts["numba"] == numba.__version__ and parts["python"] == sys.implementation.cache_tag
    assert parts["cpu"].split()[0].startswith(("x86_64", "aarch64", "arm64", "ppc64", "i686"))
    assert parts["goldeval"] and set(parts) == {"numba", "goldeval", "python", "cpu", "source"}
    folder = jit.kernel_folder(trec_kernels.hash_join)
    assert folder.parent == jit.cache_folder() and folder.name.startswith("trec_kernels-")


def test_the_switch_turns_numba_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    assert not jit.available() and jit.compiled(trec_kernels.hash_join) is None
    assert not jit.wanted(jit.LOAD_BYTES)


def test_numba_is_loaded_for_a_large_job_and_used_once_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(jit.ENV_SWITCH, raising=False)
    monkeypatch.delitem(sys.modules, "numba", raising=False)  # as in a fresh process (restored after)
    monkeypatch.setattr(jit, "_SPENT", [0])
    assert jit.wanted(jit.LOAD_BYTES) and not jit.wanted(jit.LOAD_BYTES - 1)
    assert jit.compiled(trec_kernels.hash_join, nbytes=1000) is None
    jit.record(jit.LOAD_BYTES - 1000)  # smaller jobs done in numpy add up: the next one repays loading
    assert not jit.wanted(999) and jit.wanted(1000)
    monkeypatch.setenv(jit.ENV_SWITCH, "1")
    assert jit.wanted(0)
    monkeypatch.delenv(jit.ENV_SWITCH)
    monkeypatch.setitem(sys.modules, "numba", __import__("numba"))
    assert jit.wanted(0)  # already paid for in this process


@pytest.mark.parametrize(("switch", "loaded"), [(None, False), ("1", True)])
def test_goldeval_trec_on_small_files_does_not_pay_for_loading_numba(switch: str | None, loaded: bool) -> None:
    """trec_eval's own test files take 0.4 s in numpy and 1.3 s when numba is loaded for them."""
    data = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval"
    code = ("import sys; from goldeval.cli import main; assert main(['trec', sys.argv[1], sys.argv[2]]) == 0; "
            "print('numba' in sys.modules)")
    env = {"PATH": "/usr/bin:/bin", **({jit.ENV_SWITCH: switch} if switch else {})}
    out = subprocess.run([sys.executable, "-c", code, str(data / "qrels.test"), str(data / "results.test")],
                         capture_output=True, text=True, check=True, env=env)  # fmt: skip
    assert "map" in out.stdout and out.stdout.strip().splitlines()[-1] == str(loaded)
