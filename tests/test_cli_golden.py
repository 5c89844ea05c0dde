"""`goldeval golden`: check, import and export as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "data"
CRANFIELD = ROOT.parent / "shared" / "data" / "cranfield"
TREC = ROOT.parent / "shared" / "data" / "trec_eval"


def test_check_summarises_a_valid_set(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["golden", "check", str(EXAMPLES / "golden_example.jsonl"), "--corpus", str(EXAMPLES / "corpus")])
    assert code == 0
    out = capsys.readouterr().out
    assert "ok: 9 answerable + 2 off-topic questions, every judged id found in" in out
    assert "  11 judgments (0 judged not relevant); 2 question(s) with more than one relevant answer; sources: 10 hand, 1 synthetic" in out


def test_check_reports_every_problem_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        '{"id": "a", "question": "stash", "expected": ["git/git-stsh.md"]}\n'
        '{"id": "a", "question": "", "expected": []}\n'
    )
    assert main(["golden", "check", str(golden), "--corpus", str(EXAMPLES / "corpus")]) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl:1" in err and "git/git-stash.md" in err  # the suggestion
    assert "golden.jsonl:2" in err and "duplicate" in err


def test_import_cranfield_then_check_against_its_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cranfield.jsonl"
    assert main(["golden", "import", "--from", str(CRANFIELD), "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert len(records) == 225
    # cranqrel's first line is "1 184 2": query 1, document 184, code 2 -> graded 3
    assert records[0]["id"] == "1" and records[0]["expected"]["184"] == 3
    assert main(["golden", "check", str(out), "--corpus", str(CRANFIELD)]) == 0


def test_import_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "golden.jsonl"
    out.write_text("precious\n")
    assert main(["golden", "import", "--from", str(CRANFIELD), "--out", str(out)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert out.read_text() == "precious\n"


def test_trec_round_trip_through_the_cli(tmp_path: Path) -> None:
    qrels, topics = tmp_path / "g.qrels", tmp_path / "g.tsv"
    assert main(["golden", "export", str(EXAMPLES / "golden_example.jsonl"), "--qrels", str(qrels), "--topics", str(topics)]) == 0
    back = tmp_path / "back.jsonl"
    assert main(["golden", "import", "--qrels", str(qrels), "--topics", str(topics), "--out", str(back)]) == 0
    original = [json.loads(line) for line in (EXAMPLES / "golden_example.jsonl").read_text().splitlines()[1:]]
    # off-topic questions have no qrels to carry them; the synthetic h09 is left out as the headline leaves it
    answerable = {r["id"]: r for r in original if r["expected"] and r.get("source") != "synthetic"}
    again = {r["id"]: r for r in (json.loads(line) for line in back.read_text().splitlines()) if "id" in r}
    assert set(again) == set(answerable) and "h09" not in again
    assert again["h02"]["expected"] == {"git/git-reset.md": 2, "git/git-commit.md": 1}


def test_import_trec_needs_topics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["golden", "import", "--qrels", str(TREC / "qrels.test"), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--qrels needs --topics" in capsys.readouterr().err


def test_import_keeps_a_topic_with_nothing_relevant_answerable_and_export_writes_its_zeros(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, topics = tmp_path / "in.qrels", tmp_path / "topics.tsv"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 a 0\n")
    topics.write_text("1\tone\n2\tnothing relevant\n")
    out = tmp_path / "g.jsonl"
    assert main(["golden", "import", "--qrels", str(qrels), "--topics", str(topics), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"wrote {out}: 2 answerable + 0 off-topic questions" in captured.out
    assert "have judged documents but none relevant (kept as answerable" in captured.err
    assert main(["golden", "check", str(out)]) == 0
    assert "ok: 2 answerable + 0 off-topic questions" in capsys.readouterr().out
    back = tmp_path / "back.qrels"
    assert main(["golden", "export", str(out), "--qrels", str(back)]) == 0
    assert back.read_text() == qrels.read_text()
    assert f"wrote {back}: 3 judgments of 2 question(s)" in capsys.readouterr().out
