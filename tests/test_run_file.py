"""`Run.read_trec`: a TREC run file ranked by the one rule (`goldeval.ranking.ranked`), built from its
columns without a dict per topic, and with one str per distinct id."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from goldeval.errors import InputError
from goldeval.ranking import ranked
from goldeval.run import Run
from goldeval.trecio import read_run_table


def by_the_rule(lines: list[tuple[str, str, float]]) -> dict[str, list[tuple[str, float]]]:
    """What the file means, ranked by `ranked` one topic at a time (topics in order of first appearance)."""
    topics: dict[str, dict[str, float]] = {}
    for topic, doc, score in lines:
        topics.setdefault(topic, {})[doc] = score
    return {t: ranked(docs) for t, docs in topics.items()}


def write(path: Path, lines: list[tuple[str, str, float]]) -> Path:
    path.write_text("".join(f"{t} Q0 {d} {i} {s!r} tag\n" for i, (t, d, s) in enumerate(lines, 1)), encoding="utf-8")
    return path


def test_ties_unordered_lines_and_split_topics_rank_as_the_rule(tmp_path: Path) -> None:
    lines = [("q2", "b", 1.0), ("q1", "z", 0.5), ("q1", "a", 0.5), ("q2", "a", 1.0), ("q1", "é", 0.5),
             ("q2", "c", 2.0), ("q1", "m", 0.0), ("q1", "n", -0.0), ("q2", "ab", 1.0), ("q1", "top", 3.0)]
    run = Run.read_trec(write(tmp_path / "run.txt", lines))
    assert run.name == "tag" and list(run.results) == ["q2", "q1"]  # topics in order of first appearance
    assert run.results == by_the_rule(lines)
    assert run.results["q1"][:4] == [("top", 3.0), ("é", 0.5), ("z", 0.5), ("a", 0.5)]  # ties: id descending
    assert [d for d, _ in run.results["q1"][4:]] == ["n", "m"]  # 0.0 and -0.0 tie too


@pytest.mark.parametrize("seed", range(5))
def test_random_runs_with_many_ties_and_shared_ids_rank_as_the_rule(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    docs = [f"doc-{rng.randrange(10 ** rng.randint(1, 6))}-{'x' * rng.randint(0, 12)}" for _ in range(300)]
    lines = []
    for t in range(40):
        for doc in rng.sample(docs, rng.randint(1, 60)):
            lines.append((f"t{rng.randint(0, 25)}" if seed % 2 else f"t{t}", doc, float(rng.randint(0, 6)) / 4))
    unique = {(t, d): s for t, d, s in lines}  # a (topic, doc) pair once, as the file must have it
    lines = [(t, d, s) for (t, d), s in unique.items()]
    rng.shuffle(lines)
    run = Run.read_trec(write(tmp_path / "run.txt", lines))
    assert run.results == by_the_rule(lines) and list(run.results) == list(by_the_rule(lines))
    ids = [d for hits in run.results.values() for d, _ in hits]
    assert len({id(d) for d in ids}) == len(set(ids))  # one str object per distinct id


@pytest.mark.parametrize("rows_at_a_time", [1, 2, 3, 1 << 20])
def test_a_run_written_in_rank_order_is_taken_as_it_is_and_one_out_of_order_row_anywhere_is_seen(
        tmp_path: Path, rows_at_a_time: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import goldeval.ranking as ranking

    monkeypatch.setattr(ranking, "_SLICE", rows_at_a_time)  # the check goes in slices: a fault on any border is seen
    rng = random.Random(rows_at_a_time)
    lines = [(f"t{t}", f"d{rng.randrange(30)}", float(rng.randint(0, 3))) for t in range(6) for _ in range(8)]
    lines = [(t, d, s) for (t, d), s in {(t, d): s for t, d, s in lines}.items()]
    ranked_lines = [(t, d, s) for t, hits in by_the_rule(lines).items() for d, s in hits]
    assert ranking.ranked_order(*_columns(ranked_lines)) is None
    assert Run.read_trec(write(tmp_path / "run.txt", ranked_lines)).results == by_the_rule(lines)
    for at in range(1, len(ranked_lines)):  # each pair of neighbours swapped in turn: a score, a tie or a topic
        swapped = ranked_lines[: at - 1] + [ranked_lines[at], ranked_lines[at - 1]] + ranked_lines[at + 1 :]
        if by_the_rule(swapped) == {t: [(d, s) for u, d, s in swapped if u == t] for t in dict.fromkeys(u for u, _, _ in swapped)}:
            continue  # still in rank order (two topics' lists met)
        assert ranking.ranked_order(*_columns(swapped)) is not None, at


def _columns(lines: list[tuple[str, str, float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    codes: dict[str, int] = {}
    groups = np.array([codes.setdefault(t, len(codes)) for t, _, _ in lines], dtype=np.int32)
    return groups, np.array([s for _, _, s in lines]), np.array([d for _, d, _ in lines], dtype=object)


def test_a_doc_id_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 good 1 2.0 t\nq1 Q0 bad\xff 2 1.0 t\n")
    with pytest.raises(InputError) as caught:
        Run.read_trec(path)
    assert caught.value.line == 2 and "not UTF-8" in str(caught.value)


def test_line_numbers_counted_again_once_forgotten_equal_the_readers(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"# a comment\nq1 Q0 a 1 2.0 t\n\nq1 Q0 b 2 1.0 t\r\n   \nq2 Q0 a 1 0.5 t\n# end\nq2 Q0 c 2 0.25 t\n")
    table = read_run_table(path)
    assert table.line is not None
    read = table.line.tolist()
    table.forget_lines()
    assert [table.line_at(row) for row in range(len(table))] == read == [2, 4, 6, 8]


def test_a_bad_id_far_into_a_run_read_as_columns_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    lines = [f"q{i} Q0 d{i} 1 1.0 t\n".encode() for i in range(5000)]
    lines[4321] = b"q4321 Q0 bad\xfe 1 1.0 t\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(InputError) as caught:
        Run.read_trec(path)
    assert caught.value.line == 4322 and "not UTF-8" in str(caught.value)


def test_selections_of_a_run_file_gathered_batch_by_batch_stay_columns_and_mean_the_same(tmp_path: Path) -> None:
    lines = [(f"q{i % 7}", f"d{i}", float(i % 5)) for i in range(60)]
    whole = Run.read_trec(write(tmp_path / "run.txt", lines))
    expected = by_the_rule(lines)
    gathered = Run("t")
    for batch in (["q3", "q0"], ["q6"], ["q1", "q9", "q2"], ["q5", "q4"]):  # q9: not in the file
        assert whole.columns is not None
        gathered.update(Run("t", columns=whole.columns.select(batch, 4)))
    assert gathered.columns is not None and list(gathered) == ["q3", "q0", "q6", "q1", "q9", "q2", "q5", "q4"]
    assert gathered.results == {q: expected.get(q, [])[:4] for q in gathered.results}
    again = Run("t", columns=whole.columns.select(["q1", "q2"]))
    again.update(Run("t", columns=whole.columns.select(["q2"], 1)))  # a question twice: the later answer, as dicts
    assert again.results == {"q1": expected["q1"], "q2": expected["q2"][:1]}


def test_the_rows_holding_a_chunk_mark_are_the_same_found_alone_or_in_the_utf8_check(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("# a comment with # marks\nq1 Q0 a#1 1 2.0 t#x\nq1 Q0 é 2 1.0 t#x\nq2 Q0 b 1 0.5 t#x\n"
                    "q2 Q0 c#10 2 0.25 t#x\n", encoding="utf-8")
    alone = read_run_table(path).rows_holding("#")
    table = read_run_table(path)
    table.check_text(remember="#")
    assert table.rows_holding("#").tolist() == alone.tolist() == [0, 3]  # the tag's and comment's marks are no id's


def test_the_marks_found_as_the_reader_goes_are_those_of_a_pass_of_their_own(tmp_path: Path) -> None:
    # 3 MB: the reader's blocks are 1 MB, so marks fall in several blocks and on the last one
    lines = [f"q{i // 100} Q0 {'é' if i % 9973 == 5 else ''}d{i}{'#2' if i % 7919 == 3 else ''} {i % 100 + 1} "
             f"{1 / (i + 1)!r} t\n" for i in range(80_000)]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines), encoding="utf-8")
    assert path.stat().st_size > 3 << 20
    marked = read_run_table(path, sha256=True, marks="#")
    plain = read_run_table(path)
    plain.check_text(remember="#")
    holding = [i for i, line in enumerate(lines) if "#" in line.split()[2]]
    past = [i for i, line in enumerate(lines) if "é" in line]
    assert marked.held["#"].tolist() == plain.held["#"].tolist() == holding and len(holding) == 11
    assert marked.past_ascii is not None and plain.past_ascii is not None
    assert marked.past_ascii.tolist() == plain.past_ascii.tolist() == past and len(past) == 9
    marked.check_text(remember="#")  # nothing to read again: decodes the 9 ids
    bad = tmp_path / "bad.txt"
    bad.write_bytes(path.read_bytes().replace("é".encode(), b"\xff\xfe", 1))
    for table in (read_run_table(bad, marks="#"), read_run_table(bad)):
        with pytest.raises(InputError, match=r"bad.txt:6: run file is not UTF-8") as caught:
            table.check_text(remember="#")
        assert caught.value.line == 6
