"""`goldeval trec`: options, trec_eval's conventions on small hand-made files, and bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.metrics.trec import parse_measures, read_run

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 x 1\n2 0 y -1\n"
RUN = "1 Q0 a 1 3.0 mine\n1 Q0 b 2 2.0 mine\n1 Q0 c 3 1.0 mine\n9 Q0 a 1 1.0 mine\n"


def _files(tmp_path: Path, qrels: str = QRELS, run: str = RUN) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[tuple[str, str], str], str]:
    code = main(["trec", *argv])
    captured = capsys.readouterr()
    table = {}
    for line in captured.out.splitlines():
        name, topic, value = line.split("\t")
        table[(name.strip(), topic)] = value
    return code, table, captured.err


def test_only_topics_in_both_files_count_and_c_averages_over_all(tmp_path: Path, capsys) -> None:
    qrels, run = _files(tmp_path)
    # Topic 1: a (rel 1) at rank 1, b non-relevant, c (rel 2) at rank 3: AP = (1 + 2/3) / 2.
    code, table, _ = _run(capsys, "-m", "map", "-m", "num_q", "-m", "runid", qrels, run)
    assert code == 0
    assert table == {("runid", "all"): "mine", ("num_q", "all"): "1", ("map", "all"): "0.8333"}
    _, table, _ = _run(capsys, "-c", "-m", "map", "-m", "num_q", "-m", "num_rel", qrels, run)
    assert table == {("num_q", "all"): "2", ("num_rel", "all"): "3", ("map", "all"): "0.4167"}


def test_per_topic_lines_with_q(tmp_path: Path, capsys) -> None:
    qrels, run = _files(tmp_path)
    _, table, _ = _run(capsys, "-q", "-c", "-m", "P.1,3", "-m", "num_ret", qrels, run)
    assert table == {
        ("num_ret", "1"): "3", ("P_1", "1"): "1.0000", ("P_3", "1"): "0.6667",
        ("num_ret", "2"): "0", ("P_1", "2"): "0.0000", ("P_3", "2"): "0.0000",
        ("num_ret", "all"): "3", ("P_1", "all"): "0.5000", ("P_3", "all"): "0.3333",
    }  # fmt: skip


def test_relevance_level_option(tmp_path: Path, capsys) -> None:
    qrels, run = _files(tmp_path)
    _, table, _ = _run(capsys, "-l", "2", "-m", "recip_rank", "-m", "num_rel", qrels, run)
    assert table == {("num_rel", "all"): "1", ("recip_rank", "all"): "0.3333"}


def test_comments_extra_columns_and_blank_lines_are_read(tmp_path: Path, capsys) -> None:
    run = "# a comment\n1 Q0 c 1 1.0 mine extra\n\n1 Q0 a 2 3.0 mine\n"
    qrels, run_path = _files(tmp_path, run=run)
    _, table, _ = _run(capsys, "-m", "recip_rank", qrels, run_path)
    assert table == {("recip_rank", "all"): "1.0000"}


def test_all_trec_prints_every_family_member(tmp_path: Path, capsys) -> None:
    code, table, err = _run(capsys, "-m", "all_trec", *_files(tmp_path))
    assert code == 0 and err == ""
    for name in ("bpref", "iprec_at_recall_0.50", "G", "Rndcg", "ndcg_rel", "infAP", "rbp", "unj_20", "set_F"):
        assert (name, "all") in table, name


@pytest.mark.parametrize(
    ("run", "message"),
    [("1 Q0 a 1 3.0\n", r"run:1: expected 6 fields `topic Q0 docno rank score tag`, found 5"),
     ("1 Q0 a 1 3.0 x\n1 Q0 b 2 high x\n", r"run:2: score `high` is not a number"),
     ("1 Q0 a 1 3.0 x\n1 Q0 b 2 nan x\n", r"run:2: score `nan` is not a number"),
     ("1 Q0 a 1 3.0 x\n1 Q0 a 2 2.0 x\n", r"run:2: `a` is retrieved twice for topic `1` \(also on line 1\)"),
     ("\n", r"run: the run file has no results")],
)  # fmt: skip
def test_bad_run_files_name_file_line_and_value(tmp_path: Path, capsys, run: str, message: str) -> None:
    qrels, run_path = _files(tmp_path, run=run)
    with pytest.raises(InputError, match=message):
        read_run(run_path)
    assert main(["trec", qrels, run_path]) == 2
    assert "goldeval: error:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("qrels", "message"),
    [("1 0 a\n", r"qrels:1: expected 4 fields"), ("1 0 a 1\n1 0 b yes\n", r"qrels:2: relevance `yes` is not an integer"),
     ("1 0 a 1\n1 0 a 0\n", r"qrels:2: `a` is judged twice for topic `1` with different grades \(1 and 0\)"),
     ("1 0 a 1\n1 0 a 1\n", r"qrels:2: `a` is judged twice for topic `1` \(also on line 1\)")],
)  # fmt: skip
def test_bad_qrels_files(tmp_path: Path, capsys, qrels: str, message: str) -> None:
    assert main(["trec", *_files(tmp_path, qrels=qrels)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("goldeval: error: ") and len(err.splitlines()) >= 2  # message and hint
    assert re.search(message, err)


def test_missing_file_and_no_common_topic(tmp_path: Path, capsys) -> None:
    assert main(["trec", str(tmp_path / "nope"), str(tmp_path / "nope2")]) == 2
    assert "qrels file not found" in capsys.readouterr().err
    qrels, run = _files(tmp_path, run="7 Q0 a 1 1.0 x\n")
    assert main(["trec", qrels, run]) == 2
    assert "no topic has both judgments and results" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("spec", "message"),
    [("ndgc_cut.10", "unknown trec_eval measure 'ndgc_cut'"), ("dcg", "'dcg' is not computed by goldeval"),
     ("P.0", "must be positive integers"), ("P.5,5", "duplicate cut-offs"), ("map.3", "takes no parameters"),
     ("P.five", "cannot read the parameters")],
)  # fmt: skip
def test_bad_measures(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_measures([spec])


def test_unknown_measure_suggests_the_closest(tmp_path: Path, capsys) -> None:
    assert main(["trec", "-m", "ndgc_cut.10", *_files(tmp_path)]) == 2
    assert "did you mean 'ndcg_cut'?" in capsys.readouterr().err


def test_measure_syntax_sorts_cutoffs_and_keeps_trec_order() -> None:
    request = parse_measures(["ndcg_cut.20,5", "map", "official"])
    assert request.params["ndcg_cut"] == (5.0, 20.0)
    assert request.ordered()[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert request.ordered()[-1] == "ndcg_cut"


def test_help(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["trec", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "trec_eval" in out and "-m MEASURE" in out and "ndcg_cut" in out


def test_non_utf8_run_is_an_input_error(tmp_path: Path) -> None:
    qrels, run = _files(tmp_path)
    Path(run).write_bytes(b"1 Q0 caf\xe9 1 1.0 x\n")
    with pytest.raises(InputError, match="run file is not UTF-8 text"):
        read_run(run)


def test_topics_may_come_in_any_order(tmp_path: Path, capsys) -> None:
    run = "1 Q0 b 1 2.0 x\n2 Q0 x 1 1.0 x\n1 Q0 a 1 3.0 x\n"
    _, table, _ = _run(capsys, "-q", "-m", "num_ret", *_files(tmp_path, run=run))
    assert table == {("num_ret", "1"): "2", ("num_ret", "2"): "1", ("num_ret", "all"): "3"}


def test_relstring_and_utility(tmp_path: Path, capsys) -> None:
    run = RUN + "2 Q0 y 1 5.0 mine\n2 Q0 unjudged 2 4.0 mine\n2 Q0 x 3 3.0 mine\n"
    _, table, _ = _run(capsys, "-q", "-m", "relstring", "-m", "utility", *_files(tmp_path, run=run))
    # Topic 2: y is judged -1 ("in the pool, unjudged": '.'), the next is not judged at all ('-').
    assert table == {
        ("relstring", "1"): "'102'", ("utility", "1"): "1.0000",
        ("relstring", "2"): "'.-1'", ("utility", "2"): "-1.0000",
        ("utility", "all"): "0.0000",
    }  # fmt: skip


def test_max_docs_and_no_summary(tmp_path: Path, capsys) -> None:
    qrels, run = _files(tmp_path)
    # -M 2 keeps a (rel 1) and b (rel 0) of topic 1: c (rel 2) at rank 3 is cut.
    _, table, _ = _run(capsys, "-M", "2", "-m", "num_ret", "-m", "num_rel_ret", "-m", "map", qrels, run)
    assert table == {("num_ret", "all"): "2", ("num_rel_ret", "all"): "1", ("map", "all"): "0.5000"}
    _, table, _ = _run(capsys, "-q", "-n", "-m", "num_ret", qrels, run)
    assert table == {("num_ret", "1"): "3"}
    assert main(["trec", "-M", "0", qrels, run]) == 2
    assert "-M must be at least 1" in capsys.readouterr().err
