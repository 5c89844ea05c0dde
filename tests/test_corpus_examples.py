"""The corpus examples run and print what they promise."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.chdir(tmp_path)  # the evaluation workspace (.goldeval) goes here
    monkeypatch.setattr(sys, "argv", [name])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_load_and_chunk_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run("corpus_load_and_chunk.py", monkeypatch, tmp_path, capsys)
    assert "3 documents from" in out
    assert "warning: skipped 2 of 5 files: 1 empty, 1 non-utf8" in out
    assert "library/json.rst.txt#1" in out and "'json --- JSON encoder > Basic usage'" in out


def test_beir_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run("corpus_beir.py", monkeypatch, tmp_path, capsys)
    assert "3 documents, 2 judged questions in split 'test'" in out
    assert "hit@1          1.0000" in out


def test_cranfield_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run("corpus_cranfield.py", monkeypatch, tmp_path, capsys)
    assert out.startswith("1400 documents, 225 questions;")
    assert "question 4 (cran.qry .I 008)" in out
    assert "ndcg@10" in out
