"""The rerank score cache with a rerank API, through `goldeval eval` and `goldeval sweep` in subprocesses and the
stand-in server (tests/api_standin.py), counted at the server: an unchanged re-run sends no request, a run killed
half-way resumes sending only the questions it had not stored, with the same scores bit for bit, the key is in
no file goldeval writes, and the sweep's cost axis prices the rerank API's requests (issue 19)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from api_standin import StandIn, eval_command, kill_at_request, run_ok, standin
from sweep_fixtures import write_inputs

pytestmark = [pytest.mark.api, pytest.mark.models]

KEY = "sk-standin-rerank-resume-9f8e7d6c5b4a"



def _command(folder: Path, url: str, workspace: Path, out: Path, *extra: str) -> list[str]:
    spec = f"rerank:bm25>api:standin-rerank?url={url}/v1/rerank&key_env=RERANK_KEY&concurrency=2&top=5"
    return eval_command(folder, spec, workspace, out, *extra)


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return run_ok(command, {**os.environ, "RERANK_KEY": KEY})


def _scores(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Each question's ranking with its scores' exact bits (a float's hex form)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {q["id"]: [(h["id"], float(h["score"]).hex()) for h in q["top"]] for q in data["retrievers"][0]["questions"]}


def _asked(server: StandIn) -> int:
    """Questions the server was asked to rerank (a request a question)."""
    return len({body["query"] for body in server.bodies})


def test_an_unchanged_rerun_sends_nothing_and_reads_the_same_scores(minilm, tmp_path: Path) -> None:
    with standin(minilm, key=KEY) as server:
        first = _run(_command(tmp_path, server.url, tmp_path / "ws", tmp_path / "first.json"))
        paid = server.requests
        assert paid == _asked(server) > 0  # one request a question that BM25 finds something for
        again = _run(_command(tmp_path, server.url, tmp_path / "ws", tmp_path / "again.json"))
        assert server.requests == paid  # every pair read from the rerank score cache
    assert _scores(tmp_path / "again.json") == _scores(tmp_path / "first.json")
    recorded = json.loads((tmp_path / "again.json").read_text())["retrievers"][0]["config"]["reranker"]["api"]
    assert recorded["requests"] == 0 and recorded["tokens_estimated"] == 0  # what this run paid: nothing
    assert any((tmp_path / "ws" / "rerank-scores").rglob("*.gsemb"))
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in first.stdout + first.stderr + again.stdout + again.stderr


def test_a_killed_run_resumes_paying_only_for_the_rest(minilm, tmp_path: Path) -> None:
    # concurrency 2: the reranker stores every 2 questions; the server holds every request after 4 answered,
    # so 2 chunks (4 questions) are stored when the fifth request comes, and the run is killed there
    with standin(minilm, key=KEY) as server:
        _run(_command(tmp_path / "full", server.url, tmp_path / "full-ws", tmp_path / "full.json"))
        full = server.requests
        command = _command(tmp_path / "cut", server.url, tmp_path / "ws", tmp_path / "cut.json")
        killed = kill_at_request(server, command, {**os.environ, "RERANK_KEY": KEY}, 4)
        assert not (tmp_path / "cut.json").exists()
        _run(_command(tmp_path / "cut", server.url, tmp_path / "ws", tmp_path / "resumed.json"))
        assert server.requests - killed == full - 4  # the 4 questions the killed run stored are not paid again
    assert _scores(tmp_path / "resumed.json") == _scores(tmp_path / "full.json")  # bit for bit


def _estimate(text: str) -> int:
    """The 4-bytes-a-token estimate, written out here: ceil(UTF-8 bytes / 4), at least 1."""
    return max(1, math.ceil(len(text.encode("utf-8")) / 4))


def test_the_sweeps_cost_axis_prices_the_rerank_api(minilm, tmp_path: Path) -> None:
    corpus, golden = write_inputs(tmp_path / "inputs")
    prices = tmp_path / "prices.toml"
    prices.write_text('[model."api:standin-rerank"]\nper_thousand_requests = 2.0\n', encoding="utf-8")
    questions = {json.loads(line)["question"] for line in golden.read_text().splitlines() if line.strip()}
    with standin(minilm, key=KEY) as server:
        command = [sys.executable, "-m", "goldeval", "sweep", "--corpus", str(corpus), "--golden", str(golden),
                   "--retriever", "bm25", "--chunk", "none", "--rerank", "0,3",
                   "--reranker", f"api:standin-rerank?url={server.url}/v1/rerank", "--option", "key_env=RERANK_KEY",
                   "--option", f"prices={prices}", "--workspace", str(tmp_path / "ws"),
                   "--json", str(tmp_path / "sweep.json"), "--no-history", "--resamples", "200"]
        dry = _run([*command, "--dry-run"])
        assert server.requests == 0 and not (tmp_path / "sweep.json").exists()
        estimated = int(dry.stdout.split("/v1/rerank&top=3: ")[1].split(" request")[0])
        _run(command)
        assert estimated >= server.requests  # an upper bound: every question, its probe and the warm-up
        sent = {(b["query"], tuple(b["documents"])) for b in server.bodies if b["query"] in questions}
        paid = server.requests
        _run(command)
        assert server.requests == paid  # stored runs: nothing sent again
    assert {q for q, _ in sent} and len({q for q, _ in sent}) == len(sent)  # one body a question (probes repeat it)
    assert max(len(docs) for _, docs in sent) == 3  # the dial's top=3, after the reranker's own url= option
    # each question is timed alone once more, its pairs scored afresh: the latency is the reranker's, not a cache read
    assert paid >= 2 * len(sent)
    cells = {c["dials"]["rerank"]: c for c in json.loads((tmp_path / "sweep.json").read_text())["cells"]}
    assert cells[0]["cost"]["api_dollars"] == 0.0 and cells[0]["cost"]["api_tokens"] == 0  # bm25 alone: free
    cost: dict[str, Any] = cells[3]["cost"]
    assert cost["api_tokens"] == sum(_estimate(q) + sum(_estimate(d) for d in docs) for q, docs in sent)
    assert cost["api_dollars"] == pytest.approx(len(sent) * 2.0 / 1000)  # $2 a thousand searches
