"""goldeval.trecio, the one TREC reader: trec_eval's file rules on awkward files, the columnar judging
of `goldeval trec` against the dict path (and so against pytrec_eval, see test_metrics_pytrec_parity),
and messages that name the file, the line and the fix."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np
import pytest

from goldeval import memory
from goldeval.errors import InputError, InputErrors
from goldeval.metrics.trec import evaluate_trec, evaluate_trec_files, parse_measures
from goldeval.trecio import read_qrels, read_qrels_table, read_run, read_run_table
from goldeval.trecio import scan as scan_module


def _reference_run(text: str) -> tuple[dict[str, dict[str, float]], str]:
    """The rules of trec_eval's get_trec_results.c, line by line in Python."""
    run: dict[str, dict[str, float]] = {}
    tag = ""
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        run.setdefault(parts[0], {})[parts[2]] = float(parts[4])
        tag = parts[5]
    return run, tag


@pytest.fixture(params=[1 << 20, 300], ids=["one-block", "small-blocks"])
def block_bytes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run each test with the real block size and with blocks of a few lines (block boundaries everywhere)."""
    monkeypatch.setattr(scan_module, "BLOCK_BYTES", request.param)
    return int(request.param)


def test_whitespace_comments_crlf_bom_and_number_forms(tmp_path: Path, block_bytes: int) -> None:
    text = (
        "\ufeff# a comment line\n"
        "q1 Q0 d1 1 12.5 tagA\r\n"
        "  q1\tQ0\t d2  2\t-0.25 tagA extra columns\n"
        "\n"
        "q2 Q0 d1 1 1e-3 tagA\n"
        "q2 Q0 d3 2 +7 tagA\n"
        "q2 Q0 d4 3 12.345678901234567 tagA\n"
        "q1 Q0 d5 3 .5 tagA\n"
        "q3 Q0 caf\u00e9 1 -inf tagB\n"
        "q3 Q0 d6 2 5. tagZ"  # no final newline; the run's tag is the last line's
    )
    path = tmp_path / "run"
    path.write_text(text, encoding="utf-8")
    run, tag = read_run(path)
    expected, expected_tag = _reference_run(text.removeprefix("\ufeff"))
    assert (run, tag) == (expected, expected_tag) == (expected, "tagZ")
    assert list(run["q1"]) == ["d1", "d2", "d5"]  # file order kept
    assert run["q2"]["d4"] == 12.345678901234567  # 17 digits: the exact double


def test_random_files_equal_a_line_by_line_reader(tmp_path: Path, block_bytes: int) -> None:
    rng = random.Random(7)
    lines = []
    for i in range(300):
        topic = f"t{rng.randint(0, 20)}"
        score = rng.choice([f"{rng.uniform(-50, 50):.{rng.randint(0, 6)}f}", repr(rng.uniform(-1, 1)),
                            f"{rng.uniform(0, 1):e}", str(rng.randint(-3, 3))])  # fmt: skip
        sep = rng.choice([" ", "\t", "  ", " \t "])
        lines.append(sep.join([topic, "Q0", f"doc-{i}", str(i), score, "run"]))
    text = "\n".join(lines) + "\n"
    (tmp_path / "run").write_text(text)
    assert read_run(tmp_path / "run") == _reference_run(text)


@pytest.mark.parametrize("mapped_from", [0, 1 << 40], ids=["every-column-mapped", "numpy-arrays"])
def test_columns_in_memory_maps_of_their_own_read_as_numpy_arrays_do(tmp_path: Path, mapped_from: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Large columns live in anonymous memory maps (`memory.SMALL_PAGES_FROM`), small ones in numpy's arrays; with
    blocks of a few lines the columns grow many times, each growth copying what was read into the new map."""
    monkeypatch.setattr(memory, "SMALL_PAGES_FROM", mapped_from)
    monkeypatch.setattr(scan_module, "BLOCK_BYTES", 300)
    mapped: list[int] = []
    small_pages = memory.small_pages

    def spy(n: int, dtype: np.dtype) -> np.ndarray:
        mapped.append(n)
        return small_pages(n, dtype)

    monkeypatch.setattr(memory, "small_pages", spy)
    rng = random.Random(11)
    lines = [f"t{i // 7} Q0 doc-{i} {i} {rng.uniform(-1, 1)!r} run" for i in range(500)]
    lines += [f"t{i} Q0 d {i} 1.5 run" for i in range(200)]  # shorter rows at the end: the columns grow again
    text = "\n".join(lines) + "\n"
    (tmp_path / "run").write_text(text)
    assert read_run(tmp_path / "run") == _reference_run(text)
    table = read_run_table(tmp_path / "run")
    assert len(table.value) == 700 and table.line is not None and table.line.tolist() == list(range(1, 701))
    assert (len(mapped) > 10) == (mapped_from == 0)  # every growth of every column mapped, or none


def _random_trec_files(folder: Path, seed: int) -> tuple[Path, Path]:
    """Qrels and a run with many tied scores, graded and negative judgments, topics out of order,
    topics only in one file, ids that are prefixes of others and non-ASCII ids."""
    rng = random.Random(seed)
    pool = [f"doc-{j:03d}" for j in range(30)] + ["doc", "doc-0", "é-doc", "Z", "ü"]
    qrels, run = [], []
    for i in range(60):
        topic = f"{rng.randint(1, 400)}" if i % 9 else f"only-qrels-{i}"
        for doc in rng.sample(pool, rng.randint(1, 12)):
            qrels.append(f"{topic} 0 {doc} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}")
        if i % 11:
            for doc in rng.sample(pool, rng.randint(0, 30)):
                run.append(f"{topic} Q0 {doc} 0 {rng.choice(['1', '2', '2.0', '0.5', '-1', '3e0'])} sys")
    run += ["only-run Q0 doc-001 1 1.0 sys"]
    rng.shuffle(run)  # topics need not be contiguous
    for name, lines in (("qrels", qrels), ("run", run)):
        (folder / name).write_text("\n".join(_dedupe(lines)) + "\n", encoding="utf-8")
    return folder / "qrels", folder / "run"


def _dedupe(lines: list[str]) -> list[str]:
    seen, out = set(), []
    for line in lines:
        key = tuple(line.split()[:3:2])
        if key not in seen:
            seen.add(key)
            out.append(line)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("complete", "level", "max_docs"), [(False, 1, None), (True, 2, None), (False, 1, 7)])
def test_columnar_judging_equals_the_dict_path(tmp_path: Path, block_bytes: int, seed: int, complete: bool,
                                               level: int, max_docs: int | None) -> None:  # fmt: skip
    qrels_path, run_path = _random_trec_files(tmp_path, seed)
    request = parse_measures(["all_trec"])
    from_files = evaluate_trec_files(qrels_path, run_path, request, complete=complete, level=level, max_docs=max_docs)
    run, tag = read_run(run_path)
    from_dicts = evaluate_trec(read_qrels(qrels_path), run, request, runid=tag, complete=complete, level=level,
                               max_docs=max_docs)  # fmt: skip
    assert from_files.topics == from_dicts.topics
    assert from_files.lines(per_query=True) == from_dicts.lines(per_query=True)
    for (name, _, ours), (_, _, theirs) in zip(from_files.rows, from_dicts.rows, strict=True):
        if ours.dtype.kind == "f":
            np.testing.assert_array_equal(ours, theirs, err_msg=name)


def test_ties_break_by_doc_id_bytes_descending(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 ab 1\n1 0 a 1\n1 0 \u00e9 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1.0 x\n1 Q0 ab 2 1.0 x\n1 Q0 \u00e9 3 1.0 x\n1 Q0 b 4 1.0 x\n")
    report = evaluate_trec_files(tmp_path / "qrels", tmp_path / "run", parse_measures(["relstring"]))
    # strcmp order, descending: "é" (0xC3...) > "b" > "ab" > "a"; relstring shows the judgments by rank.
    assert report.per_topic() == [("relstring", "1", "'1-11'")]


def test_every_problem_is_listed_with_its_line(tmp_path: Path, block_bytes: int) -> None:
    path = tmp_path / "qrels"
    path.write_bytes(b"1 0 d1 1\n1 0 d2\n1 0 d3 yes\n\n1 0 d1 2\n2 0 d1 1\n2 0 d1 1\n\xff 0 d9 1\n3 0 d4 1.5\n")
    with pytest.raises(InputErrors) as info:
        read_qrels(path)
    assert [(p.line, p.reason) for p in info.value.problems] == [
        (2, "expected 4 fields `qid iter docno rel`, found 3"),
        (3, "relevance `yes` is not an integer"),
        (5, "`d1` is judged twice for topic `1` with different grades (1 and 2)"),
        (7, "`d1` is judged twice for topic `2` (also on line 6)"),
        (8, "topic id is not UTF-8 text"),
        (9, "relevance `1.5` is not an integer"),
    ]
    assert all(p.path == str(path) and p.hint for p in info.value.problems)


def test_a_wrong_file_stops_at_twenty_problems(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("1 0 d 1\n" * 500)  # a qrels file given as the run
    with pytest.raises(InputErrors) as info:
        read_run_table(tmp_path / "run")
    assert len(info.value.problems) == 20
    assert "is this a qrels file given as the run?" in str(info.value)


def test_missing_empty_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run file not found"):
        read_run(tmp_path / "nope")
    (tmp_path / "empty").write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="the qrels file has no judgments"):
        read_qrels_table(tmp_path / "empty")
    with pytest.raises(InputError, match="is a folder, not a file"):
        read_run(tmp_path)


def test_padded_rows_are_each_fields_bytes_then_zeros_near_the_end_of_the_bytes_too() -> None:
    from goldeval.trecio.fields import padded

    rng = np.random.default_rng(23)
    for _ in range(2000):
        data = rng.integers(1, 256, int(rng.integers(0, 40))).astype(np.uint8)
        start = rng.integers(0, max(len(data), 1), int(rng.integers(0, 8)))
        stop = np.minimum(start + rng.integers(0, 10, len(start)), len(data))
        width = int(rng.integers(0, 12))
        rows = [bytes(data[s:e])[:max(width, 1)].ljust(max(width, 1), b"\0") for s, e in zip(start, stop, strict=True)]
        assert [bytes(row) for row in padded(data, start, stop, width)] == rows


@pytest.mark.parametrize("block_bytes", [97, 1 << 20])  # many blocks (each hashed as the scan passes it), or one
@pytest.mark.parametrize("shape", ["plain", "bom", "no-final-newline", "crlf"])
def test_the_sha256_taken_as_a_run_is_read_is_sha256sums(tmp_path: Path, block_bytes: int, shape: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan_module, "BLOCK_BYTES", block_bytes)
    rng = random.Random(5)
    text = "".join(f"t{i // 9} Q0 doc-{i} {i % 9 + 1} {rng.uniform(-5, 5)!r} run\n" for i in range(400))
    data = {"plain": text.encode(), "bom": b"\xef\xbb\xbf" + text.encode(), "no-final-newline": text.encode()[:-1],
            "crlf": text.replace("\n", "\r\n").encode()}[shape]
    (tmp_path / "run").write_bytes(data)
    table = read_run_table(tmp_path / "run", sha256=True)
    assert table.sha256 == hashlib.sha256(data).hexdigest() and len(table) == 400
    assert read_run_table(tmp_path / "run").sha256 is None  # not asked: not taken
