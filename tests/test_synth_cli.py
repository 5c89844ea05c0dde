"""`goldeval synth` with an offline `module:function` backend: the files it writes, re-runs, the demo hook,
the help texts and the runnable example."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.golden.io import load_golden
from goldeval.synth.candidates import read_candidates, write_candidates
from goldeval.synth.demo import ENABLE_HINT, ENV_BACKEND, demo_synthetic
from hang_guard import HANG_GUARD
from synth_fixtures import question_for, write_corpus, write_golden

REPO = Path(__file__).resolve().parents[1]


def synth(tmp: Path, *extra: str) -> int:
    return main(["synth", "--corpus", str(write_corpus(tmp)), "--golden", str(write_golden(tmp)),
                 "--llm", "synth_fixtures:generate", "--min-chars", "100", "--out", str(tmp / "synth.jsonl"),
                 "--workspace", str(tmp / "ws"), "--quiet", *extra])


def test_candidates_are_a_golden_set_of_unreviewed_synthetic_questions(tmp_path: Path) -> None:
    assert synth(tmp_path, "--n", "5") == 0
    golden = load_golden(tmp_path / "synth.jsonl")  # the golden-set reader takes the file as it is
    assert len(golden) == 5
    records = {r["id"]: r for r in read_candidates(tmp_path / "synth.jsonl")}
    for q in golden:
        r = records[q.id]
        assert q.source == "synthetic" and q.intent == "answerable"
        assert q.provenance.details["status"] == "unreviewed"
        assert list(golden.relevant(q.id)) == [r["_source"]["doc"]]
        assert q.question == question_for(r["_source"]["text"]).strip()
        assert set(r["_leakage"]) >= {"content_share", "longest_copy", "copied_phrase", "repeats_heading", "source_rank"}
        assert all(o["doc"] != r["_source"]["doc"] and o["ranks"]["bm25"] >= 1 for o in r["_others"])


def test_uncovered_skips_documents_a_hand_written_question_lists(tmp_path: Path) -> None:
    assert synth(tmp_path, "--n", "50", "--uncovered") == 0
    docs = {r["_source"]["doc"] for r in read_candidates(tmp_path / "synth.jsonl")}
    assert docs and not docs & {"git/stash.md", "python/time.md"}  # the hand-written set covers these two


def test_a_rerun_adds_new_questions_and_keeps_review_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert synth(tmp_path, "--n", "2") == 0
    records = read_candidates(tmp_path / "synth.jsonl")
    records[0]["provenance"]["status"] = "rejected"
    write_candidates(tmp_path / "synth.jsonl", records)
    capsys.readouterr()
    assert synth(tmp_path, "--n", "4") == 0
    assert "2 call(s) made" in capsys.readouterr().err  # the first two replies come from the cache
    again = read_candidates(tmp_path / "synth.jsonl")
    assert len(again) == 4 and again[0]["provenance"]["status"] == "rejected"
    assert [r["id"] for r in again[:2]] == [r["id"] for r in records]


def test_no_backend_says_how_to_configure_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(ENV_BACKEND, raising=False)
    code = main(["synth", "--corpus", str(write_corpus(tmp_path)), "--out", str(tmp_path / "o.jsonl")])
    assert code == 2
    err = capsys.readouterr().err
    assert "no backend given" in err and ENV_BACKEND in err and "openai:MODEL" in err


def test_the_backend_can_come_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_BACKEND, "synth_fixtures:generate")
    code = main(["synth", "--corpus", str(write_corpus(tmp_path)), "--min-chars", "100", "--n", "1", "--quiet",
                 "--out", str(tmp_path / "o.jsonl"), "--workspace", str(tmp_path / "ws")])
    assert code == 0 and len(read_candidates(tmp_path / "o.jsonl")) == 1


def test_demo_hook_generates_beside_the_hand_written_set_or_says_how(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeval.corpus import load_corpus

    corpus = load_corpus(write_corpus(tmp_path))
    hand = load_golden(write_golden(tmp_path))
    monkeypatch.delenv(ENV_BACKEND, raising=False)
    assert demo_synthetic(corpus, hand, workspace=tmp_path / "ws") is None
    assert "GOLDEVAL_SYNTH_BACKEND" in ENABLE_HINT and "no generated set" in ENABLE_HINT
    monkeypatch.setenv(ENV_BACKEND, "synth_fixtures:generate")
    demo = demo_synthetic(corpus, hand, workspace=tmp_path / "ws", n=3, min_chars=100)
    assert demo is not None and demo.path.is_file()
    assert len(demo.golden) == 3 and all(q.source == "synthetic" for q in demo.golden)
    assert set(demo.leakage.sets) == {"synthetic", "hand"} and "hit_at_5" in demo.leakage.gap()


@pytest.mark.parametrize("command", ["synth", "review"])
def test_help_explains_the_command(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    words = ["--llm", "--dry-run", "anthropic:MODEL", "module:function", "environment"] if command == "synth" else [
        "--golden", "accept", "reject", "edit", "1-9"]
    for word in words:
        assert word in out


def test_the_example_runs_offline() -> None:
    done = subprocess.run([sys.executable, str(REPO / "examples" / "synth_offline.py")], capture_output=True,
                          text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    assert "leakage" in done.stdout and "synthetic" in done.stdout and "reviewed golden set: 1 question" in done.stdout


def test_leakage_json_is_written(tmp_path: Path) -> None:
    assert synth(tmp_path, "--n", "3", "--leakage-json", str(tmp_path / "leak.json")) == 0
    data = json.loads((tmp_path / "leak.json").read_text())
    assert set(data) >= {"sets", "gap", "questions", "retriever", "depth"}
    assert data["sets"]["synthetic"]["questions"] == 3
