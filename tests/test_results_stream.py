"""The results JSON written as a stream from a new scorecard's columns (issue 23) is, byte for byte, the JSON
the json module writes of the scorecard's dict, before and after its questions are made as objects and after
the file is read back; a non-finite number is refused and a credential redacted as in every other writer;
and `goldeval eval` on a run file writes its file, its history and its terminal table from the columns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fast_paths import ORJSON, use_orjson
from golden_factory import make_golden
from goldeval import evaluate
from goldeval.cli import main
from goldeval.scorecard import Scorecard, writer
from goldeval.scorecard.columns import QuestionColumns
from goldeval.scorecard.writer import dumps_strict, rank_list, scorecard_chunks, scorecard_to_dict
from goldeval.textsafe import keep_secret

ROWS = [
    ("q1", 'where is "a" \u00e9\u4e2d', {"a.md": 2, "b.md": 0}, ("x", "y\u00e9")),  # quotes, non-ASCII, a judged 0
    ("q2", "where is c", {"c.md": 1}, (), "synthetic"),
    ("q3", "tab\there and a newline\n", {"b.md": 1, "z.md": 3}),  # z.md is never retrieved
    ("q4", "chunks of a document", {"a.md": 1}),  # the run returns two chunks of a.md: one hit, one repeat
    ("q5", "not in the run", {"a.md": 1}),
    ("off", "nothing about this", {}),
    ("q6", "from a log", {"d\u00e9.md": 1}, (), "log"),  # a non-ASCII id
]
RUN = """q1 Q0 b.md 1 0.9 t
q1 Q0 a.md 2 0.5 t
q1 Q0 c.md 3 0.5 t
q2 Q0 c.md 1 -0.0 t
q2 Q0 a.md 2 0.0 t
q3 Q0 c.md 1 12.345678901234567 t
q3 Q0 b.md 2 1e-07 t
q4 Q0 a.md#1 1 3 t
q4 Q0 a.md#2 2 2 t
q4 Q0 e.md 3 1 t
off Q0 a.md 1 7.25 t
q6 Q0 e.md 1 2 t
q6 Q0 d\u00e9.md 2 1 t
"""


def card_from_columns(tmp_path: Path) -> Scorecard:
    run = tmp_path / "run.trec"
    run.write_text(RUN, encoding="utf-8")

    def flaky(question: str, k: int) -> list[tuple[str, float]]:
        if question == "where is c":
            raise RuntimeError("down")
        return [("d.md", 2.0), ("a.md", 1.5), ("a.md#3", 1.0)][:k]

    golden = make_golden(ROWS, path=str(tmp_path / "g.jsonl"))
    return evaluate({"file": f"run:{run}", "flaky": flaky}, golden, k=(1, 2), depth=3)


def as_json(card: Scorecard) -> bytes:
    return dumps_strict(scorecard_to_dict(card), indent=None).encode("utf-8")


def test_the_stream_is_the_json_modules_text_of_the_dict_before_and_after_the_questions_are_made(tmp_path: Path) -> None:
    card = card_from_columns(tmp_path)
    assert all(r.columns is not None for r in card.retrievers)
    streamed = b"".join(scorecard_chunks(card))
    assert streamed == as_json(card)
    data = json.loads(streamed)
    q4 = data["retrievers"][0]["questions"][3]
    assert [(h["id"], h["doc"], h["counted"]) for h in q4["top"]] == [  # the top max(k) = 2 kept
        ("a.md#1", "a.md", "relevant"), ("a.md#2", "a.md", "repeat")]
    assert data["retrievers"][1]["questions"][1]["error"] == "RuntimeError: down"
    assert [q["top"][0]["score"] for q in data["retrievers"][0]["questions"][1:3]] == [0.0, 12.345678901234567]
    assert str(data["retrievers"][0]["questions"][1]["top"][0]["score"]) == "-0.0"
    ranks = [rank_list(r) for r in card.retrievers]  # the history's text
    made = [r.questions for r in card.retrievers]  # the objects, made from the columns
    assert all(r.columns is None for r in card.retrievers)
    assert b"".join(scorecard_chunks(card)) == as_json(card) == streamed
    assert [rank_list(r) for r in card.retrievers] == ranks
    assert json.loads(ranks[0])[0] == ["q1", False, 3, {"a.md": 3}]  # tied at 0.5: c.md (id descending) first
    card.save(tmp_path / "r.json")
    loaded = Scorecard.load(tmp_path / "r.json")
    assert [r.questions for r in loaded.retrievers] == made
    assert b"".join(scorecard_chunks(loaded)) == streamed


def test_a_non_finite_number_is_refused_not_written(tmp_path: Path) -> None:
    card = card_from_columns(tmp_path)
    columns = card.retrievers[0].columns
    assert columns is not None
    columns.values[0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite number"):
        card.save(tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_a_registered_credential_is_redacted_in_the_stream(tmp_path: Path) -> None:
    secret = "tok-5b1f0e77-stream-secret"
    keep_secret(secret)
    golden = make_golden([("q1", f"why does {secret} leak", {"a.md": 1})])
    card = evaluate(lambda q, k: [("a.md", 1.0)], golden, k=1, depth=1)
    assert card.retrievers[0].columns is not None
    streamed = b"".join(scorecard_chunks(card)).decode("utf-8")
    assert secret not in streamed and "why does *** leak" in streamed


def test_eval_on_a_run_file_never_makes_a_record_per_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: QuestionColumns) -> None:
        raise AssertionError("a QuestionResult per question was made")

    monkeypatch.setattr(QuestionColumns, "results", refuse)
    monkeypatch.setattr(QuestionColumns, "question", refuse)
    (tmp_path / "g.jsonl").write_text("".join(json.dumps({"id": r[0], "question": r[1], "expected": r[2]}) + "\n"
                                              for r in ROWS if r[2]), encoding="utf-8")  # fmt: skip
    (tmp_path / "run.trec").write_text(RUN, encoding="utf-8")
    code = main(["eval", "--golden", str(tmp_path / "g.jsonl"), "--retriever", f"run:{tmp_path / 'run.trec'}",
                 "--no-stats", "--quiet", "--workspace", str(tmp_path / "ws"), "--json", str(tmp_path / "r.json")])
    assert code == 0
    assert json.loads((tmp_path / "r.json").read_text())["retrievers"][0]["n_answerable"] == 6
    assert (tmp_path / "ws" / "history.sqlite").exists()


def test_the_history_keeps_the_results_file_it_was_given_and_makes_the_same_bytes_without_it(tmp_path: Path) -> None:
    from goldeval.history.db import History

    card = card_from_columns(tmp_path)
    card.save(tmp_path / "r.json")
    history = History(tmp_path / "history.sqlite")
    with_file, without = history.record(card, written=tmp_path / "r.json"), history.record(card)
    kept = [history.scorecard(run) for run in (with_file, without)]
    assert b"".join(scorecard_chunks(kept[0])) == b"".join(scorecard_chunks(kept[1]))
    assert [q.id for q in kept[0].retrievers[0].questions] == [r[0] for r in ROWS]


@pytest.mark.parametrize("isal", [False, pytest.param(True, marks=pytest.mark.fast)])
def test_a_run_recorded_by_either_compressor_is_the_results_file_read_back_by_zlib(
        tmp_path: Path, isal: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3
    import sys
    import zlib

    from goldeval.history import db

    if isal:  # the `fast` extra's ISA-L deflate, which history uses where it is installed
        from isal import isal_zlib

        assert type(db._packer()) is type(isal_zlib.compressobj(1))
    else:
        monkeypatch.setitem(sys.modules, "isal", None)  # as without the extra
        assert type(db._packer()) is type(zlib.compressobj(1))
    card = card_from_columns(tmp_path)
    card.save(tmp_path / "r.json")
    history = db.History(tmp_path / "history.sqlite")
    run = history.record(card, written=tmp_path / "r.json")
    with sqlite3.connect(tmp_path / "history.sqlite") as conn:
        (blob,) = conn.execute("SELECT scorecard FROM runs WHERE id = ?", (run,)).fetchone()
    assert zlib.decompress(blob) == (tmp_path / "r.json").read_bytes()
    assert b"".join(scorecard_chunks(history.scorecard(run))) == (tmp_path / "r.json").read_bytes()


@pytest.mark.parametrize("block", [1, 2, writer.BLOCK])
@pytest.mark.parametrize("numba", ["0", pytest.param("1", marks=pytest.mark.fast)])  # numpy's layout, numba's copy
@pytest.mark.parametrize("orjson", ORJSON)  # every float, or each value once
def test_results_laid_out_as_bytes_or_one_by_one_are_the_json_modules_text(tmp_path: Path, block: int, numba: str,
                                                                          orjson: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "BLOCK", block)
    monkeypatch.setenv("GOLDEVAL_NUMBA", numba)
    use_orjson(writer, orjson, monkeypatch)
    run = tmp_path / "run.trec"
    run.write_text("a Q0 plain.md 1 3.5 t\na Q0 \u00e9t\u00e9.md 2 2.25 t\nb Q0 q\"uote.md 1 1 t\nb Q0 x.md 2 0.5 t\n"
                   "c Q0 back\\\\slash.md 1 2 t\nd Q0 z.md 1 1e-300 t\nd Q0 y.md 2 -4 t\n"
                   "f Q0 nul\x00.md 1 1 t\nf Q0 w.md 2 0.5 t\ng Q0 ctl\x01.md 1 1 t\n", encoding="utf-8")  # control bytes
    golden = make_golden([("a", "first", {"\u00e9t\u00e9.md": 2}), ("b", "second", {'q"uote.md': 1}),
                          ("c", "third", {"x.md": 1}), ("e", "none returned", {"x.md": 1}), ("d", "fourth", {"y.md": 3}),
                          ("f", "fifth", {"w.md": 1}), ("g", "sixth", {"ctl\x01.md": 1})])
    card = evaluate(f"run:{run}", golden, k=(1, 2), depth=2)
    streamed = b"".join(scorecard_chunks(card))
    assert streamed == as_json(card)
    tops = [[(h["id"], h["counted"]) for h in q["top"]] for q in json.loads(streamed)["retrievers"][0]["questions"]]
    assert tops == [[("plain.md", "unjudged"), ("\u00e9t\u00e9.md", "relevant")], [('q"uote.md', "relevant"), ("x.md", "unjudged")],
                    [("back\\\\slash.md", "unjudged")], [], [("z.md", "unjudged"), ("y.md", "relevant")],
                    [("nul\x00.md", "unjudged"), ("w.md", "relevant")], [("ctl\x01.md", "relevant")]]


def _awkward_floats() -> np.ndarray:
    """Floats of every magnitude, the edges of repr's positional layout (1e-4, 1e16) one ulp either side, zeros of
    both signs, subnormals, the largest, integers, 17-digit scores and random bit patterns."""
    rng = np.random.default_rng(8)
    edges = [x for e in (1e-4, 1e16, 1e-5, 1e15, 1.0) for x in (np.nextafter(e, 0), e, np.nextafter(e, np.inf))]
    special = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 2.0**53, 2.0**53 + 2,
               0.1, 1 / 3, 100.0, -1e300, 12.345678901234567, 9999999999999998.0]
    mantissas = rng.random(50_000) * 10.0 ** rng.integers(-12, 20, 50_000) * rng.choice([-1, 1], 50_000)
    bits = rng.integers(0, 2**63, 50_000, dtype=np.int64).view(np.float64)
    values = np.concatenate((edges, np.negative(edges), special, mantissas, bits, rng.gamma(4.0, 3.0, 20_000)))
    return values[np.isfinite(values)]


@pytest.mark.parametrize("orjson", ORJSON)
def test_floats_are_written_as_the_json_module_writes_them(orjson: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    use_orjson(writer, orjson, monkeypatch)
    values = _awkward_floats()
    texts = writer.float_texts(values)
    assert texts == [json.dumps(v) for v in values.tolist()]
    plain = values[(np.abs(values) >= 1e-4) & (np.abs(values) < 1e16) | (values == 0)]  # orjson's buffer, cut
    for some in (values, plain, plain[:1]):  # as rows of bytes (`float_rows`): the same texts, zeros after each
        rows, lengths = writer.float_rows(some)
        assert [bytes(row[:n]).decode() for row, n in zip(rows, lengths, strict=True)] == [json.dumps(v) for v in some.tolist()]
        assert not rows[np.arange(rows.shape[1]) >= lengths[:, None]].any()
    assert writer.float_texts(np.array([np.nan, np.inf, 1.5])) == ["nan", "inf", "1.5"]  # refused before, never null
    assert writer.float_texts(np.zeros(0)) == []


@pytest.mark.fast
def test_numbas_layout_of_the_top_lists_is_numpys_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeval import jit
    from goldeval.scorecard import hit_kernels

    rng = np.random.default_rng(4)
    names = ["a.md", "dossier/\u00e9t\u00e9.md", "x#3", "\u4e2d.txt", "long-" + "z" * 40, "b", "r\u00e9sum\u00e9"]
    lines, rows = [], []
    for q in range(300):  # many blocks of the writer; questions with 0 to 12 results, some ids judged
        docs = rng.choice(len(names) * 9, size=int(rng.integers(0, 13)), replace=False)
        scores = np.sort(rng.gamma(2.0, 3.0, len(docs)))[::-1].tolist()
        lines += [f"q{q} Q0 {names[d % len(names)]}-{d} {r} {s!r} t" for r, (d, s) in enumerate(zip(docs, scores, strict=True), 1)]
        judged = {f"{names[d % len(names)]}-{d}": int(rng.integers(0, 4)) for d in docs[: int(rng.integers(0, 4))]}
        rows.append((f"q{q}", f"question {q}", judged or {"unretrieved.md": 1}))
    run = tmp_path / "run.trec"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    card = evaluate(f"run:{run}", make_golden(rows), k=(1, 5, 10), depth=12)
    monkeypatch.setenv("GOLDEVAL_NUMBA", "0")
    in_numpy = b"".join(scorecard_chunks(card))
    monkeypatch.setenv("GOLDEVAL_NUMBA", "1")
    assert jit.compiled(hit_kernels.lay_hits, nbytes=0) is not None
    assert b"".join(scorecard_chunks(card)) == in_numpy == as_json(card)


def test_a_scorecard_dropped_frees_its_columns_at_once_without_the_cycle_collector(tmp_path: Path) -> None:
    # at 100k questions the columns are 400 MB: held in a cycle, they waited for a full collection
    import gc
    import weakref

    card = card_from_columns(tmp_path)
    columns = card.retrievers[0].columns
    assert columns is not None and card.retrievers[0].scored["q1"][0] == {"a.md": 2, "b.md": 0}
    gone = weakref.ref(columns)
    gc.collect()
    gc.disable()
    try:
        del card, columns
        assert gone() is None
    finally:
        gc.enable()
