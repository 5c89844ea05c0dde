"""Progress on stderr: a bar on a terminal, periodic lines with an estimate in a log (issue 13, item 6)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from goldeval.progress import ProgressLog, duration, progress_bar, progress_callback
from goldeval.retrievers.encoders.function import FunctionEncoder
from hang_guard import HANG_GUARD


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_log_gets_a_line_every_interval_with_the_rate_and_the_time_left() -> None:
    clock, out = Clock(), io.StringIO()
    log = ProgressLog("searching (bm25)", 1000, unit="questions", stream=out, every=10, clock=clock)
    clock.now += 4
    log.advance(100)  # 4 s in: too soon for a line
    assert out.getvalue() == ""
    clock.now += 6
    log.advance(100)  # 10 s, 200 done: 20/s, 800 left: 40 s
    assert out.getvalue() == "goldeval: searching (bm25): 200/1,000 questions (20%), 20/s, about 40 s left\n"
    clock.now += 190
    log.advance(800)
    log.finish()
    assert out.getvalue().splitlines()[-1] == "goldeval: searching (bm25): 1,000 questions in 3 min 20 s (5.0/s)"


def test_quick_work_prints_nothing() -> None:
    clock, out = Clock(), io.StringIO()
    log = ProgressLog("x", 10, unit="questions", stream=out, every=15, clock=clock)
    clock.now += 1
    log.advance(10)
    log.finish()
    assert out.getvalue() == ""


def test_durations_read_as_a_person_says_them() -> None:
    assert [duration(s) for s in (0.4, 42, 164, 3900)] == ["0 s", "42 s", "2 min 44 s", "1 h 05 min"]


def test_progress_bar_writes_lines_when_the_stream_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDEVAL_PROGRESS_EVERY", "0")
    out = io.StringIO()
    with progress_bar("searching (mine)", total=3, stream=out) as advance:
        for _ in range(3):
            advance(1)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("goldeval: searching (mine): 1/3 questions (33%), ") and "left" in lines[0]
    assert lines[-1].startswith("goldeval: searching (mine): 3 questions in ")
    with progress_bar("off", total=3, stream=out, enabled=False) as advance:
        advance(3)
    assert "off" not in out.getvalue()


def test_a_callback_api_reports_through_the_same_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOLDEVAL_PROGRESS_EVERY", "0")
    out = io.StringIO()
    report = progress_callback("rendering the stdlib docs", unit="modules", stream=out)
    for done in (50, 120, 199):
        report(done, 199)
    report(199, 199)  # after the end: nothing more
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("goldeval: rendering the stdlib docs: 50/199 modules (25%)")
    assert lines[-1].startswith("goldeval: rendering the stdlib docs: 199 modules in ") and len(lines) == 3


def test_encoders_report_through_goldeval_progress(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """One rule: an encoder's progress is the same lines, not a bar of its own."""
    monkeypatch.setenv("GOLDEVAL_PROGRESS_EVERY", "0")
    encoder = FunctionEncoder(lambda texts: np.ones((len(texts), 4)), name="ones")
    encoder.batch_size = 100
    encoder.encode([f"text {i}" for i in range(300)], kind="passage")
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("goldeval: embedding passages (ones): 100/300 passages (33%)")
    assert err[-1].startswith("goldeval: embedding passages (ones): 300 passages in ")


def test_eval_prints_progress_lines_when_stderr_is_a_pipe(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[1] / "examples" / "data"
    env = {**os.environ, "GOLDEVAL_PROGRESS_EVERY": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "goldeval", "eval", "--corpus", str(examples / "corpus"), "--golden",
         str(examples / "golden_example.jsonl"), "--no-stats", "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    assert "goldeval: searching (bm25): 11 questions in " in done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["retrievers"][0]["name"] == "bm25"
    quiet = subprocess.run(
        [sys.executable, "-m", "goldeval", "eval", "--corpus", str(examples / "corpus"), "--golden",
         str(examples / "golden_example.jsonl"), "--no-stats", "--quiet"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert "searching" not in quiet.stderr
