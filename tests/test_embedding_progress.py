"""Long embedding stages say how far they are (issue 19: the sweep's 11-minute embedding stage printed
nothing): the sweep's stage and eval's embedding, through goldeval.progress, on a captured stream (not a
terminal: a line per step with GOLDEVAL_PROGRESS_EVERY=0, and a last line with the time it took)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from goldeval.evaluation import evaluate
from goldeval.sweep import Grid, Settings, embed, sweep
from sweep_fixtures import tiny_corpus, tiny_golden

GRID = Grid(chunking=("none", "120:30"), retriever=("dense",), model=("wordllama",))
SETTINGS = Settings(k=(1, 5), resamples=100, headline="ndcg@5")
LINE = re.compile(r"goldeval: sweep: embedding \(wordllama\): ([\d,]+)/([\d,]+) texts \(\d+%\)")


def _sweep(workspace: Path, *, progress: bool) -> None:
    sweep(GRID, tiny_golden(), corpus=tiny_corpus(), settings=SETTINGS, workspace=workspace, record_history=False,
          progress=progress)


@pytest.mark.models  # the grid's dense stage is wordllama
def test_the_sweeps_embedding_stage_reports_as_shards_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GOLDEVAL_PROGRESS_EVERY", "0")
    monkeypatch.setattr(embed, "SHARD_TEXTS", 8)  # small shards: a shard a batch on the tiny corpus
    _sweep(tmp_path / "ws", progress=True)
    err = capsys.readouterr().err
    steps = [(int(a.replace(",", "")), int(b.replace(",", ""))) for a, b in LINE.findall(err)]
    announced = re.search(r"goldeval sweep: embedding (\d+) texts in (\d+) shard\(s\) \(wordllama\)", err)
    assert announced is not None, err
    total, shards = int(announced[1]), int(announced[2])
    assert shards >= math.ceil(total / 8) and len(steps) == shards - 1, err  # a line a shard but the last
    assert all(t == total for _, t in steps) and [d for d, _ in steps] == sorted({d for d, _ in steps})
    assert 0 < steps[0][0] < total
    assert re.search(rf"goldeval: sweep: embedding \(wordllama\): {total:,} texts in \d+ s", err), err


@pytest.mark.models
def test_a_quiet_sweep_prints_no_embedding_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GOLDEVAL_PROGRESS_EVERY", "0")
    _sweep(tmp_path / "ws", progress=False)  # what `goldeval sweep --quiet` passes
    assert "embedding" not in capsys.readouterr().err


@pytest.mark.models  # wordllama
def test_evals_embedding_reports_how_far_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GOLDEVAL_PROGRESS_EVERY", "0")
    evaluate("dense:wordllama?batch_size=4", tiny_golden(), corpus=tiny_corpus(), k=(1,), workspace=tmp_path,
             progress=True)
    err = capsys.readouterr().err.splitlines()
    steps = [line for line in err if line.startswith("goldeval: embedding passages (wordllama): ")]
    assert len(steps) >= 3 and re.match(r"goldeval: embedding passages \(wordllama\): 4/\d+ passages \(\d+%\)", steps[0])
    assert re.match(r"goldeval: embedding passages \(wordllama\): \d+ passages in \d+ s", steps[-1]), steps
