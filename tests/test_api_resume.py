"""The embedding cache with an API model, through `goldeval eval` in a subprocess and the stand-in server
(tests/api_standin.py): an unchanged re-run makes 0 requests, a run killed half-way resumes paying only for
what it had not stored, and the key is in no file, line or page goldeval writes (issue 19)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from api_standin import eval_command, kill_at_request, run_ok, standin
from sweep_fixtures import write_inputs

pytestmark = [pytest.mark.api, pytest.mark.models]

KEY = "sk-standin-resume-5a4b3c2d1e0f"



def _command(folder: Path, url: str, workspace: Path, out: Path, *extra: str) -> list[str]:
    return eval_command(folder, f"dense:openai:minilm-standin?base_url={url}/v1&batch_size=2&concurrency=2",
                        workspace, out, *extra)


def _env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": KEY}


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return run_ok(command, _env())


def _means(path: Path) -> dict[str, float]:
    return json.loads(path.read_text(encoding="utf-8"))["retrievers"][0]["metrics"]


def test_an_unchanged_rerun_makes_no_request_and_the_key_is_written_nowhere(minilm, tmp_path: Path) -> None:
    with standin(minilm, key=KEY) as server:
        first = _run(_command(tmp_path, server.url, tmp_path / "ws", tmp_path / "first.json"))
        paid = server.requests
        assert paid == 7 + 8  # 13 passages and 15 questions, 2 a request
        again = _run(_command(tmp_path, server.url, tmp_path / "ws", tmp_path / "again.json"))
        searched = _run(_command(tmp_path, server.url, tmp_path / "ws", tmp_path / "searched.json", "--no-cache"))
        assert server.requests == paid  # the stored run, then the embedding cache: not one request
    assert _means(tmp_path / "again.json") == _means(tmp_path / "searched.json") == _means(tmp_path / "first.json")
    api = json.loads((tmp_path / "first.json").read_text())["retrievers"][0]["config"]["api"]
    assert api["requests"] == paid
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    for done in (first, again, searched):
        assert KEY not in done.stdout + done.stderr
    shown = " ".join(first.stdout.split())  # the terminal wraps lines
    assert "openai:minilm-standin: 15 API request(s), " in shown and "no price in the table" in shown


def test_a_killed_run_resumes_paying_only_for_the_rest(minilm, tmp_path: Path) -> None:
    # one server (its URL is part of the model's identity), held after 4 answered requests: with chunks of
    # 4 passages (batch_size 2 x concurrency 2), 2 chunks are stored when the fifth request comes
    with standin(minilm, key=KEY) as server:
        _run(_command(tmp_path / "full", server.url, tmp_path / "full-ws", tmp_path / "full.json"))
        full = server.requests
        command = _command(tmp_path / "cut", server.url, tmp_path / "ws", tmp_path / "cut.json")
        killed = kill_at_request(server, command, _env(), 4)
        assert not (tmp_path / "cut.json").exists()
        _run(_command(tmp_path / "cut", server.url, tmp_path / "ws", tmp_path / "resumed.json"))
        assert server.requests - killed == full - 4  # what the killed run had stored is not paid again
    assert _means(tmp_path / "resumed.json") == _means(tmp_path / "full.json")


def test_dry_run_estimates_what_the_run_sends_and_sends_nothing(minilm, tmp_path: Path) -> None:
    with standin(minilm, key=KEY) as server:
        command = _command(tmp_path, server.url, tmp_path / "ws", tmp_path / "dry.json")
        rerank = f"rerank:bm25>api:rerank-2?url={server.url}/v1/rerank&top=5"
        dry = _run([*command, "--retriever", rerank, "--dry-run"])
        assert server.requests == 0 and not (tmp_path / "dry.json").exists()
        assert "dense:openai:minilm-standin" in dry.stdout and "15 request(s), 28 text(s) to send (0 cached)" in dry.stdout
        assert f"{rerank}: 15 request(s)" in dry.stdout  # one a question; rerank-2 has a list price
        assert "no price in the table" in dry.stdout
        _run(command)
        assert server.requests == 15  # the estimate was the count
        again = _run([*command, "--dry-run"])
        assert server.requests == 15 and "0 request(s), 0 text(s) to send (28 cached)" in again.stdout


def test_a_sweep_over_an_api_model_estimates_runs_and_reruns_for_free(minilm, tmp_path: Path) -> None:
    corpus, golden = write_inputs(tmp_path / "inputs")
    with standin(minilm, key=KEY) as server:
        command = [sys.executable, "-m", "goldeval", "sweep", "--corpus", str(corpus), "--golden", str(golden),
                   "--retriever", "dense,bm25", "--model", "openai:minilm-standin", "--chunking", "none,120:30",
                   "--option", f"base_url={server.url}/v1", "--workspace", str(tmp_path / "ws"),
                   "--json", str(tmp_path / "sweep.json"), "--no-history", "--resamples", "200"]
        dry = _run([*command, "--dry-run"])
        assert server.requests == 0 and not (tmp_path / "sweep.json").exists()
        estimated = int(dry.stdout.split("dense:openai:minilm-standin: ")[1].split(" request")[0])
        _run(command)
        assert server.requests == estimated  # the passages of both chunkings, the questions, the latency probes
        _run(command)
        assert server.requests == estimated  # stored runs and vectors: nothing sent again
    cells = json.loads((tmp_path / "sweep.json").read_text(encoding="utf-8"))["cells"]
    dense = [c for c in cells if "openai" in c["label"]]
    assert len(dense) == 2 and all(c["cost"]["api_tokens"] > 0 and c["cost"]["api_dollars"] is None for c in dense)
    assert all(c["cost"]["api_dollars"] == 0.0 for c in cells if c not in dense)  # bm25 costs no API dollar
