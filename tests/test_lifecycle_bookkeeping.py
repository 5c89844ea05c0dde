"""Lifecycle bookkeeping (issue 18, item 8), through the commands a user runs: a run belongs to the version
whose content it was scored on, whenever that version was frozen; every question `goldeval review` accepts
is a changelog line, so the scorecard counts it."""

from __future__ import annotations

import http.client
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from goldeval.cli import main
from goldeval.golden.changelog import read_changes
from goldeval.history.db import History
from goldeval.synth.review import ReviewSession
from goldeval.web.app import make_server, start_in_thread
from goldeval.web.handler import TOKEN_HEADER
from hang_guard import HANG_GUARD
from synth_fixtures import write_corpus, write_golden

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "data" / "corpus"


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY", raising=False)
    shutil.copy(REPO / "examples" / "data" / "golden_example.jsonl", tmp_path / "golden.jsonl")
    return tmp_path


def _eval(corpus: Path = CORPUS, *extra: str) -> int:
    return main(["eval", "--corpus", str(corpus), "--golden", "golden.jsonl", "--retriever", "bm25", "--k", "1,5",
                 "--workspace", "ws", "--resamples", "200", "--quiet", *extra])


def test_a_run_made_before_its_set_was_frozen_belongs_to_that_version(project: Path) -> None:
    assert main(["golden", "freeze", "golden.jsonl"]) == 0  # version 1
    assert _eval() == 0  # run 1, on version 1
    assert main(["golden", "add", "--golden", "golden.jsonl", "--question", "how do I undo git add",
                 "--expected", "git/git-reset.md", "--incident", "INC-7"]) == 0
    assert _eval() == 0  # run 2: the edited set, not frozen yet
    assert _eval() == 0  # run 3: the same content
    assert main(["golden", "freeze", "golden.jsonl"]) == 0  # version 2: what runs 2 and 3 were scored on
    assert main(["history", "trend", "--workspace", "ws", "--golden-version", "2", "--metric", "mrr",
                 "--json", "v2.json"]) == 0
    v2 = json.loads((project / "v2.json").read_text())
    assert [r["id"] for r in v2["runs"]] == [2, 3] and v2["golden_version"] == 2
    assert not any("not frozen" in n for n in v2["notes"])
    assert main(["history", "trend", "--workspace", "ws", "--metric", "mrr", "--json", "latest.json"]) == 0
    assert json.loads((project / "latest.json").read_text())["golden_version"] == 2  # the newest version
    assert main(["history", "trend", "--workspace", "ws", "--golden-version", "1", "--metric", "mrr", "--json", "v1.json"]) == 0
    assert [r["id"] for r in json.loads((project / "v1.json").read_text())["runs"]] == [1]
    # the history lists each run under the version its content is
    assert [(r.id, r.golden_version) for r in History.of(project / "ws").runs()] == [(3, 2), (2, 2), (1, 1)]


def _post(server: Any, path: str, body: Any, token: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=HANG_GUARD)
    conn.request("POST", path, body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json", TOKEN_HEADER: token})
    status = conn.getresponse().status
    conn.close()
    return status


def _token(server: Any) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=HANG_GUARD)
    conn.request("GET", "/review")
    html = conn.getresponse().read().decode()
    conn.close()
    return html.split('name="goldeval-token" content="')[1].split('"')[0]


def test_questions_accepted_in_review_reach_the_changelog_and_the_scorecard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    corpus, golden = write_corpus(tmp_path), write_golden(tmp_path)
    assert main(["golden", "freeze", str(golden), "--by", "ana"]) == 0
    assert main(["synth", "--corpus", str(corpus), "--golden", str(golden), "--llm", "synth_fixtures:generate",
                 "--min-chars", "100", "--n", "3", "--out", "synth.jsonl", "--workspace", "ws", "--quiet"]) == 0
    session = ReviewSession(tmp_path / "synth.jsonl", golden, reviewer="cy")
    server = make_server(review=session, port=0)
    thread = start_in_thread(server)
    try:
        token = _token(server)
        ids = [r["id"] for r in session.records]
        for qid in ids:
            assert _post(server, f"/api/review/items/{qid}", {"action": "accept"}, token) == 200
        assert _post(server, f"/api/review/items/{ids[2]}", {"action": "reset"}, token) == 200  # taken back
        assert _post(server, f"/api/review/items/{ids[1]}", {"action": "edit", "question": "how is a stash kept?"},
                     token) == 200
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=HANG_GUARD)
    changes = read_changes(golden)
    assert [(c.action, c.question, c.by, c.version) for c in changes] == [
        ("added", ids[0], "cy", 1), ("added", ids[1], "cy", 1), ("added", ids[2], "cy", 1),
        ("removed", ids[2], "cy", 1), ("edited", ids[1], "cy", 1)]
    assert main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--retriever", "bm25", "--k", "1,5",
                 "--workspace", "ws", "--resamples", "200", "--quiet", "--json", "results.json"]) == 0
    summary = json.loads((tmp_path / "results.json").read_text())["golden"]["changes"]
    assert summary["text"] == ("0 labels fixed, 3 questions added, 1 question removed, 1 question edited "
                               "since version 1 (not frozen yet)")
