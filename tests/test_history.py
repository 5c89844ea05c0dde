"""The run history on a real SQLite file: every `goldeval eval` recorded, trends on one frozen version,
tags and references, and a run on a new version compared with the old on the shared questions only."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.golden.io import load_golden
from goldeval.history.db import History
from goldeval.metrics.definitions import Metric

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "data" / "corpus"
INCIDENTS = [("how do I undo git add", "git/git-reset.md"), ("take back the last commit I pushed", "git/git-revert.md")]


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A golden set of 11 answerable questions (enough for intervals), frozen as version 1."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY", raising=False)
    shutil.copy(REPO / "examples" / "data" / "golden_example.jsonl", tmp_path / "golden.jsonl")
    for text, doc in INCIDENTS:
        assert main(["golden", "add", "--golden", "golden.jsonl", "--question", text, "--expected", doc,
                     "--incident", "INC-1"]) == 0
    assert main(["golden", "freeze", "golden.jsonl"]) == 0
    return tmp_path


def _eval(*extra: str) -> int:
    return main(["eval", "--corpus", str(CORPUS), "--golden", "golden.jsonl", "--retriever", "bm25", "--k", "1,5",
                 "--workspace", "ws", "--resamples", "300", "--quiet", *extra])


def test_runs_on_one_frozen_version_show_their_trend(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval() == 0
    assert _eval("--option", "k1=0.5", "--option", "b=0.2") == 0
    assert "recorded run 2 in ws/history.sqlite" in capsys.readouterr().err
    with sqlite3.connect(project / "ws" / "history.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT COUNT(*) FROM question_ranks WHERE run_id = 2").fetchone()[0] == 13
    runs = History.of(project / "ws").runs()
    assert [(r.id, r.golden_version, r.retrievers) for r in runs] == [(2, 1, ["bm25"]), (1, 1, ["bm25"])]
    assert main(["history", "--workspace", "ws"]) == 0
    listed = capsys.readouterr().out
    assert "golden.jsonl" in listed and "bm25" in listed
    assert main(["history", "trend", "--workspace", "ws", "--metric", "mrr", "--json", "trend.json"]) == 0
    printed = capsys.readouterr().out
    assert "mrr over 2 run(s) on golden set version 1" in printed and "bm25: " in printed
    trend = json.loads((project / "trend.json").read_text())
    points = trend["retrievers"]["bm25"]
    assert [p["run"] for p in points] == [1, 2] and trend["golden_version"] == 1
    for p in points:
        assert p["low"] is not None and p["low"] <= p["value"] <= p["high"]
    second = History.of(project / "ws").scorecard(2)
    assert points[1]["value"] == pytest.approx(second.retrievers[0].metrics[Metric("mrr")])
    assert second.retrievers[0].config["options"]["k1"] == 0.5


def test_a_run_on_a_new_version_is_compared_on_the_shared_questions(project: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert _eval() == 0
    assert main(["history", "tag", "@last", "baseline", "--workspace", "ws"]) == 0
    assert main(["golden", "add", "--golden", "golden.jsonl", "--question", "delete a branch I no longer need",
                 "--expected", "git/git-branch.md", "--incident", "INC-2"]) == 0
    text = (project / "golden.jsonl").read_text()
    (project / "golden.jsonl").write_text(text.replace('"expected": ["git/git-commit.md"]',
                                                       '"expected": ["git/git-commit.md", "git/git-reset.md"]'))
    assert main(["golden", "freeze", "golden.jsonl"]) == 0
    assert load_golden(project / "golden.jsonl").version == 2
    assert _eval() == 0
    capsys.readouterr()
    code = main(["compare", "@baseline", "@last", "--workspace", "ws", "--markdown", "comment.md",
                 "--json", "cmp.json", "--resamples", "300"])
    assert code == 0
    err = capsys.readouterr().err
    assert ("compared on the 12 questions the runs share unchanged (of 13 and 14; golden set version 1 -> 2: "
            "1 added (inc-003), 1 relabelled (h05))") in err
    data = json.loads((project / "cmp.json").read_text())
    # 10 shared answerable questions, less the synthetic h09, which is beside the headline (issue 18)
    assert data["n_questions"] == 9 and data["n_beside"] == 1 and data["shared"]["added"] == ["inc-003"]
    assert data["shared"]["relabelled"] == ["h05"] and len(data["shared"]["questions"]) == 12
    comment = (project / "comment.md").read_text()
    assert comment.startswith("### goldeval: last vs baseline\n\n**What changed**")
    assert "Compared on the 12 questions the runs share unchanged" in comment
    assert main(["compare", "@last~1", "@last", "--workspace", "ws", "--resamples", "300"]) == 0
    assert main(["history", "export", "@baseline", "--out", "base.json", "--workspace", "ws"]) == 0
    assert json.loads((project / "base.json").read_text())["identity"]["golden_version"] == 1


SCHEMA_1_RANKS = """CREATE TABLE question_ranks (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    retriever TEXT NOT NULL,
    question TEXT NOT NULL,
    off_topic INTEGER NOT NULL,
    rank INTEGER,
    ranks TEXT NOT NULL,
    PRIMARY KEY (run_id, retriever, question)
)"""
"""The rank rows as goldeval 0.2 wrote them (history schema 1): a table, a row per question."""


def _rank_rows(path: Path, run_id: int) -> list[tuple[str, str, int, int | None, object]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT retriever, question, off_topic, rank, ranks FROM question_ranks WHERE run_id = ?",
                            (run_id,)).fetchall()
    return [(r, q, off, rank, json.loads(ranks)) for r, q, off, rank, ranks in rows]


def test_question_ranks_read_as_rows_and_a_schema_1_history_moves_to_them_when_next_written(project: Path) -> None:
    assert _eval() == 0
    path = project / "ws" / "history.sqlite"
    card = History.of(project / "ws").scorecard(1)
    expected = [(r.name, q.id, int(q.off_topic), q.rank, q.ranks) for r in card.retrievers for q in r.questions]
    assert len(expected) == 13 and any(q[2] for q in expected) and any(q[3] is None for q in expected)
    assert _rank_rows(path, 1) == expected
    with sqlite3.connect(path) as conn:  # the same history as goldeval 0.2 kept it
        conn.execute("DROP VIEW question_ranks")
        conn.execute(SCHEMA_1_RANKS)
        conn.executemany("INSERT INTO question_ranks VALUES (1, ?, ?, ?, ?, ?)",
                         [(r, q, off, rank, json.dumps(ranks)) for r, q, off, rank, ranks in expected])
        conn.execute("DROP TABLE rank_lists")
        conn.execute("PRAGMA user_version = 1")
    assert [r.id for r in History.of(project / "ws").runs()] == [1]  # read as it is
    assert _eval() == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        kinds = dict(conn.execute("SELECT name, type FROM sqlite_master WHERE name IN ('question_ranks', 'rank_lists')"))
    assert kinds == {"question_ranks": "view", "rank_lists": "table"}
    assert _rank_rows(path, 1) == expected  # in the order they were written
    assert [row[:3] for row in _rank_rows(path, 2)] == [row[:3] for row in expected]


def test_a_new_history_has_large_pages_and_an_older_one_keeps_its_own(project: Path) -> None:
    # each run is mostly one blob (its compressed results file): 4 KiB pages wrote it at twice the CPU (issue 23)
    assert _eval() == 0
    with sqlite3.connect(project / "ws" / "history.sqlite") as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 65536
    older = project / "older"
    older.mkdir()
    with sqlite3.connect(older / "history.sqlite") as conn:  # a history made with SQLite's default, as 0.2 made them
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE kept (x)")
    assert _eval("--workspace", str(older)) == 0 and _eval("--workspace", str(older)) == 0
    with sqlite3.connect(older / "history.sqlite") as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert [r.id for r in History.of(older).runs()] == [2, 1]


def test_references_that_name_nothing_say_what_exists(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--workspace", "ws"]) == 2
    assert "no run history yet" in capsys.readouterr().err
    assert _eval() == 0
    for ref, message in (("@last~3", "@last~3: the history holds 1 run(s)"), ("@nightly", "no run is tagged 'nightly'"),
                         ("@7", "no run 7 in the history"), ("@a b", "cannot read history reference")):
        assert main(["compare", ref, "@last", "--workspace", "ws"]) == 2
        assert message in capsys.readouterr().err
    assert main(["history", "tag", "@last", "last", "--workspace", "ws"]) == 2
    assert "cannot use 'last' as a tag" in capsys.readouterr().err


def test_no_history_when_switched_off(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDEVAL_NO_HISTORY", "1")
    assert _eval() == 0
    assert not (project / "ws" / "history.sqlite").exists()


def test_no_history_flag_records_nothing_and_json_writes_the_runs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--no-history` is the one flag (eval's as the sweep's); `history --json OUT` writes a file (issue 22)."""
    assert _eval("--no-history") == 0
    assert not (project / "ws" / "history.sqlite").exists()
    assert _eval() == 0
    assert main(["history", "--workspace", "ws", "--json", "runs.json"]) == 0
    runs = json.loads((project / "runs.json").read_text())
    assert [(r["id"], r["retrievers"]) for r in runs] == [(1, ["bm25"])]
    assert "wrote runs.json" in capsys.readouterr().err


@pytest.mark.models
def test_lifecycle_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import runpy

    runpy.run_path(str(REPO / "examples" / "lifecycle_loop.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "Golden set: 1 label fixed, 6 pooled judgments, 1 question added since version 1." in out
    assert "compared on the 10 questions the runs share unchanged" in out and "history: 2 runs" in out


def test_a_damaged_history_is_a_warning_not_a_lost_evaluation(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "ws").mkdir()
    (project / "ws" / "history.sqlite").write_text("not a database")
    assert _eval("--json", "r.json") == 0
    assert "warning: the run was not recorded in the history" in capsys.readouterr().err
    assert (project / "r.json").exists()


def test_a_history_that_cannot_be_written_is_one_clean_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from golden_factory import make_golden
    from goldeval import evaluate
    from goldeval.history.db import record_run

    monkeypatch.delenv("GOLDEVAL_NO_HISTORY", raising=False)
    workspace = tmp_path / "ws\x1b[2J"  # a workspace path is the user's text: it must not clear the screen
    (workspace / "history.sqlite").mkdir(parents=True)  # a folder where the database file should be
    card = evaluate(lambda q, k: ["a.md"], make_golden([("q", "where is a", {"a.md": 1})]))
    assert record_run(card, workspace) is None
    err = capsys.readouterr().err
    assert err.startswith("goldeval: warning: the run was not recorded in the history")
    assert "\x1b" not in err and "\\x1b[2J" in err and err.count("\n") == 1
