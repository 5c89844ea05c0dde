"""Review actions and the files they write; the one server's checks on who may read and write the review page."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.golden.io import load_golden
from goldeval.synth.candidates import read_candidates
from goldeval.synth.review import ReviewSession
from goldeval.web.app import make_server, start_in_thread
from goldeval.web.handler import TOKEN_HEADER
from hang_guard import HANG_GUARD
from synth_fixtures import write_corpus, write_golden

HAND_LINES = ['# my own comment line, kept as written\n',
              '{"id": "h1", "question": "put my half-done work aside", "expected": ["git/stash.md"]}\n']


def make_candidates(tmp: Path, n: int = 3) -> Path:
    code = main(["synth", "--corpus", str(write_corpus(tmp)), "--golden", str(write_golden(tmp)), "--llm",
                 "synth_fixtures:generate", "--min-chars", "100", "--n", str(n), "--out", str(tmp / "synth.jsonl"),
                 "--workspace", str(tmp / "ws"), "--quiet"])
    assert code == 0
    return tmp / "synth.jsonl"


def golden_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def test_only_accepted_questions_reach_the_golden_set(tmp_path: Path) -> None:
    candidates = make_candidates(tmp_path)
    golden = tmp_path / "mine.jsonl"
    golden.write_text("".join(HAND_LINES))
    times = iter(f"2025-01-0{i}T00:00:00Z" for i in range(1, 10))
    session = ReviewSession(candidates, golden, reviewer="ana", clock=lambda: next(times))
    a, b, c = (r["id"] for r in session.records)
    session.apply(a, {"action": "accept"})
    session.apply(b, {"action": "reject"})
    session.apply(c, {"action": "edit", "question": "  how do I   sort a spreadsheet by a column? "})
    session.apply(c, {"action": "expected", "docs": ["python/json.md"]})
    session.apply(c, {"action": "accept"})
    assert golden.read_text().startswith("".join(HAND_LINES))  # the user's own lines, byte for byte
    written = {r["id"]: r for r in golden_lines(golden)}
    assert set(written) == {"h1", a, c}
    edited = written[c]
    assert edited["question"] == "how do I sort a spreadsheet by a column?"
    assert edited["expected"][1:] == ["python/json.md"] and len(edited["expected"]) == 2
    p = edited["provenance"]
    assert p["kind"] == "synthetic" and p["reviewed_by"] == "ana" and p["reviewed_at"] == "2025-01-05T00:00:00Z"
    assert [h["action"] for h in p["history"]] == ["edit", "expected", "accept"]
    assert p["history"][0]["to"] == edited["question"] and p["history"][0]["from"] != edited["question"]
    assert "status" not in p and not any(k.startswith("_") for k in edited)
    loaded = load_golden(golden)  # the golden-set reader accepts what review wrote
    assert {q.id: q.source for q in loaded} == {"h1": "hand", a: "synthetic", c: "synthetic"}
    assert set(loaded.relevant(c)) == set(edited["expected"])
    kept = {r["id"]: r for r in read_candidates(candidates)}
    assert kept[b]["provenance"]["status"] == "rejected" and kept[b]["provenance"]["history"][0]["by"] == "ana"
    assert kept[c]["_leakage"]["rank_stale"] is True  # re-measured after the edit, not re-ranked


def test_taking_back_an_accept_takes_the_question_out_again(tmp_path: Path) -> None:
    session = ReviewSession(make_candidates(tmp_path, 2), tmp_path / "g.jsonl", reviewer="bo")
    qid = session.records[0]["id"]
    session.apply(qid, {"action": "accept"})
    assert [r["id"] for r in golden_lines(tmp_path / "g.jsonl")] == [qid]
    session.apply(qid, {"action": "reset"})
    assert golden_lines(tmp_path / "g.jsonl") == []


def test_bad_actions_change_nothing(tmp_path: Path) -> None:
    candidates = make_candidates(tmp_path, 1)
    before = candidates.read_text()
    session = ReviewSession(candidates, tmp_path / "g.jsonl", reviewer="bo")
    qid = session.records[0]["id"]
    with pytest.raises(InputError, match="unknown action"):
        session.apply(qid, {"action": "delete"})
    with pytest.raises(InputError, match="needs the new question text"):
        session.apply(qid, {"action": "edit", "question": "   "})
    with pytest.raises(InputError, match="list of document ids"):
        session.apply(qid, {"action": "expected", "docs": "python/json.md"})
    with pytest.raises(InputError, match="no candidate with id"):
        session.apply("nope", {"action": "accept"})
    assert candidates.read_text() == before and not (tmp_path / "g.jsonl").exists()


def test_a_golden_set_with_a_clashing_hand_written_id_is_refused(tmp_path: Path) -> None:
    candidates = make_candidates(tmp_path, 1)
    qid = read_candidates(candidates)[0]["id"]
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps({"id": qid, "question": "mine", "expected": ["a.md"]}) + "\n")
    with pytest.raises(InputError, match="already has a question with id .* that was not generated"):
        ReviewSession(candidates, golden, reviewer="bo")


def test_a_log_question_shows_its_log_and_locks_no_document(tmp_path: Path) -> None:
    """A `golden suggest` candidate has no source passage: the page gets no empty one but the log's figures,
    and the first document a reviewer adds can be taken out again (it was locked as if it were the source)."""
    provenance = {"kind": "log", "log": "queries.jsonl", "count": 4, "variants": ["delete a remote tag"],
                  "first_seen": "2026-11-02", "last_seen": "2026-11-09", "clicks": 1, "negative_feedback": 2,
                  "coverage": 0.41, "nearest_question": "h07", "created": "2026-11-30", "status": "unreviewed"}
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(json.dumps({"id": "log-1", "question": "delete a remote tag", "expected": [],
                                      "intent": "answerable", "provenance": provenance}) + "\n")
    session = ReviewSession(candidates, tmp_path / "g.jsonl", reviewer="ana")
    item = session.payload()["items"][0]
    assert item["passages"] == [] and item["locked"] == []
    assert item["log"] == {k: v for k, v in provenance.items() if k not in ("kind", "created", "status")}
    item = session.apply("log-1", {"action": "expected", "docs": ["git/git-tga.md", "git/git-tag.md"]})
    assert item["locked"] == []
    assert session.apply("log-1", {"action": "expected", "docs": ["git/git-tag.md"]})["expected"] == ["git/git-tag.md"]
    synthetic = ReviewSession(make_candidates(tmp_path, 1), tmp_path / "g2.jsonl", reviewer="ana").payload()["items"][0]
    assert synthetic["log"] is None and synthetic["locked"] == synthetic["expected"][:1]


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[Any, ReviewSession]]:
    session = ReviewSession(make_candidates(tmp_path, 2), tmp_path / "g.jsonl", reviewer="cy")
    server = make_server(review=session, port=0)
    thread = start_in_thread(server)
    yield server, session
    server.shutdown()
    server.server_close()
    thread.join(timeout=HANG_GUARD)


def request(server: Any, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=HANG_GUARD)
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, text


def token_of(server: Any) -> str:
    status, html = request(server, "GET", "/review")
    assert status == 200
    return html.split('name="goldeval-token" content="')[1].split('"')[0]


def test_the_server_writes_only_for_its_own_page(served: tuple[Any, ReviewSession]) -> None:
    server, session = served
    qid = session.records[0]["id"]
    token = token_of(server)
    assert len(token) >= 24
    accept = {"action": "accept"}
    assert request(server, "POST", f"/api/review/items/{qid}", accept)[0] == 403  # no token
    assert request(server, "POST", f"/api/review/items/{qid}", accept, {TOKEN_HEADER: "guess"})[0] == 403
    assert request(server, "POST", f"/api/review/items/{qid}", accept,
                   {TOKEN_HEADER: token, "Origin": "http://evil.example"})[0] == 403
    assert request(server, "POST", f"/api/review/items/{qid}", accept, {TOKEN_HEADER: token, "Host": "evil.example"})[0] == 403
    assert session.payload()["counts"]["accepted"] == 0
    status, text = request(server, "POST", f"/api/review/items/{qid}", accept, {TOKEN_HEADER: token})
    assert status == 200 and json.loads(text)["item"]["status"] == "accepted"
    status, text = request(server, "POST", f"/api/review/items/{qid}", {"action": "explode"}, {TOKEN_HEADER: token})
    assert status == 400 and "unknown action" in json.loads(text)["error"]


def test_a_content_length_that_is_no_number_is_answered_not_dropped(served: tuple[Any, ReviewSession]) -> None:
    """Regression: `int()` of the header raised inside the handler: no answer, a traceback on stderr."""
    server, session = served
    qid = session.records[0]["id"]
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=HANG_GUARD)
    conn.putrequest("POST", f"/api/review/items/{qid}")
    for name, value in (("Content-Type", "application/json"), (TOKEN_HEADER, token_of(server)), ("Content-Length", "ten")):
        conn.putheader(name, value)
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 413 and "body must be 1 to" in json.loads(response.read())["error"]
    conn.close()
    assert session.payload()["counts"]["accepted"] == 0


def test_the_server_serves_its_page_and_items_and_nothing_else(served: tuple[Any, ReviewSession]) -> None:
    server, session = served
    assert request(server, "GET", "/api/review/items")[0] == 403  # the items are the page's: read with its token
    status, text = request(server, "GET", "/api/review/items", headers={TOKEN_HEADER: token_of(server)})
    items = json.loads(text)["items"]
    assert status == 200 and [i["id"] for i in items] == [r["id"] for r in session.records]
    source = items[0]["passages"][0]
    assert source["role"] == "source" and source["highlights"]
    for path in ("/review.js", "/review.css"):
        assert request(server, "GET", path)[0] == 200
    for path in ("/../synth.jsonl", "/%2e%2e/g.jsonl", "/static/review.js", "/etc/passwd"):
        assert request(server, "GET", path)[0] == 404
    assert request(server, "GET", "/api/review/items/x", headers={TOKEN_HEADER: token_of(server)})[0] == 404
    assert request(server, "GET", "/api/review/items", headers={TOKEN_HEADER: token_of(server),
                                                                  "Host": "attacker.example:80"})[0] == 403
