"""`goldeval review` in a real Chromium: keyboard only, accept one, reject one, edit one; only the accepted
questions reach the golden set, with provenance and the reviewer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import browser, page, screenshot  # noqa: F401 - pytest fixtures
from goldeval.synth.candidates import read_candidates, write_candidates
from goldeval.synth.review import ReviewSession
from goldeval.web.app import make_server, start_in_thread
from hang_guard import HANG_GUARD
from test_review_session import make_candidates

pytestmark = pytest.mark.browser

XSS = '<img src=x onerror="window.__xss=1">how do I <b>escape</b> this'


@pytest.fixture()
def review_url(tmp_path: Path) -> Iterator[tuple[str, Path, Path, list[dict[str, Any]]]]:
    candidates = make_candidates(tmp_path, 3)
    records = read_candidates(candidates)
    records[1]["question"] = XSS  # a hostile question must show as text
    write_candidates(candidates, records)
    golden = tmp_path / "reviewed.jsonl"
    server = make_server(review=ReviewSession(candidates, golden, reviewer="playwright"), port=0)
    thread = start_in_thread(server)
    yield server.page_url("review"), candidates, golden, records
    server.shutdown()
    server.server_close()
    thread.join(timeout=HANG_GUARD)


def saved(pg: Any, count: int) -> None:
    """Wait until the page has saved `count` actions (a selector: the page's CSP forbids eval)."""
    pg.wait_for_selector(f'body[data-saved="{count}"]', state="attached")


def test_keyboard_review_writes_only_accepted_questions(page: Any, review_url: Any) -> None:  # noqa: F811
    url, candidates, golden, records = review_url
    first, hostile, third = records
    page.goto(url)
    page.wait_for_selector("#main:not([hidden])")
    assert page.text_content("#question") == first["question"]
    assert page.locator("#source-text mark").count() > 0  # the question's words, marked in its passage
    assert page.text_content("#position") == "question 1 of 3"

    other = first["_others"][0]["doc"]
    page.keyboard.press("1")  # take the first other possible answer as expected too
    saved(page, 1)
    assert page.locator("#others li.selected").count() == 1
    assert other in page.text_content("#expected")
    page.keyboard.press("a")  # accept, and move on
    saved(page, 2)
    assert page.text_content("#question") == XSS  # shown as text, not run
    assert page.evaluate("window.__xss") is None and page.locator("#question img").count() == 0
    page.keyboard.press("r")  # reject, and move on
    saved(page, 3)
    assert page.text_content("#question") == third["question"]

    page.keyboard.press("e")
    page.fill("#edit-text", "which command moves me to another line of work")
    page.keyboard.press("Enter")
    saved(page, 4)
    assert page.text_content("#question") == "which command moves me to another line of work"
    page.keyboard.press("a")
    saved(page, 5)
    page.keyboard.press("k")
    page.keyboard.press("ArrowLeft")
    assert page.text_content("#position") == "question 1 of 3" and page.text_content("#status") == "accepted"
    assert page.text_content("#counts") == "2 accepted · 1 rejected · 0 to review"
    screenshot(page, "review.png")
    assert page.page_errors == []

    written = [json.loads(line) for line in golden.read_text().splitlines()]
    assert [r["id"] for r in written] == [first["id"], third["id"]]
    accepted, edited = written
    assert accepted["expected"] == [first["expected"][0], other]
    assert [h["action"] for h in accepted["provenance"]["history"]] == ["expected", "accept"]
    assert edited["question"] == "which command moves me to another line of work"
    assert edited["expected"] == third["expected"]
    assert edited["provenance"]["reviewed_by"] == "playwright"
    assert [h["action"] for h in edited["provenance"]["history"]] == ["edit", "accept"]
    assert edited["provenance"]["history"][0]["from"] == third["question"]
    kept = {r["id"]: r for r in read_candidates(candidates)}
    assert kept[hostile["id"]]["provenance"]["status"] == "rejected"
    assert kept[hostile["id"]]["question"] == XSS


@pytest.fixture()
def log_review(tmp_path: Path) -> Iterator[tuple[str, Path, list[dict[str, Any]]]]:
    """A real `golden suggest` run on a search log (minilm), its candidates reviewed beside a generated one."""
    from goldeval.cli import main
    from test_suggest import GOLDEN, _write_log

    log = _write_log(tmp_path / "queries.jsonl")
    suggested = tmp_path / "suggested.jsonl"
    assert main(["golden", "suggest", "--from-log", str(log), "--golden", str(GOLDEN), "--out", str(suggested),
                 "--workspace", str(tmp_path / "ws")]) == 0
    records = read_candidates(make_candidates(tmp_path, 1)) + read_candidates(suggested)
    candidates = tmp_path / "mixed.jsonl"
    write_candidates(candidates, records)
    golden = tmp_path / "reviewed.jsonl"
    server = make_server(review=ReviewSession(candidates, golden, reviewer="playwright"), port=0)
    thread = start_in_thread(server)
    yield server.page_url("review"), golden, records
    server.shutdown()
    server.server_close()
    thread.join(timeout=HANG_GUARD)


def searched(p: dict[str, Any]) -> str:
    """What the page should say of a log question's searches, spelled out from its provenance."""
    when = f" between {p['first_seen']} and {p['last_seen']}" if p["first_seen"] != p["last_seen"] else f" on {p['last_seen']}"
    feedback = f" · {p['negative_feedback']} with negative feedback" if p["negative_feedback"] else ""
    return f"searched {p['count']} times{when}{feedback}"


@pytest.mark.models
def test_a_log_question_shows_where_it_was_searched_not_an_empty_passage(page: Any, log_review: Any) -> None:  # noqa: F811
    """Regression: a candidate from `golden suggest` has no source passage, and the page showed an empty
    "Source passage" box (and an empty list of other answers) in its place."""
    url, golden, records = log_review
    synthetic, logged = records[0], records[1]
    p = logged["provenance"]
    assert p["kind"] == "log" and not logged["expected"] and p["negative_feedback"] and p["first_seen"] != p["last_seen"]
    page.goto(url)
    page.wait_for_selector("#main:not([hidden])")
    assert page.is_visible("#source-box") and page.is_hidden("#log-box")  # the generated question: its passage
    page.keyboard.press("j")
    assert page.text_content("#question") == logged["question"]
    assert page.is_hidden("#source-box") and page.is_hidden("#others-box")
    assert page.is_visible("#log-box")
    assert page.text_content("#log-box h3") == f"From the search log {p['log']}"
    assert page.text_content("#log-searches") == searched(p)
    assert page.locator("#log-variants li").all_text_contents() == p["variants"]
    assert page.text_content("#log-coverage") == (f"Closest golden question: {p['nearest_question']} "
                                                  f"(cosine similarity {p['coverage']:.2f}).")
    page.keyboard.press("a")  # no expected document yet: refused, and said why
    page.wait_for_selector("#error:not([hidden])")
    assert "has no expected document yet" in page.text_content("#error")
    page.fill("#add-doc", "git/git-tga.md")  # a typo, taken out again: nothing locks a log question's documents
    page.press("#add-doc", "Enter")
    saved(page, 1)
    assert page.is_hidden("#error")  # a saved action clears the refusal before it, as on the pool page
    page.click('#expected button[title="remove git/git-tga.md"]')
    saved(page, 2)
    assert page.locator("#expected li").count() == 0
    page.fill("#add-doc", "git/git-tag.md")
    page.press("#add-doc", "Enter")
    saved(page, 3)
    assert page.locator("#expected li").all_text_contents() == ["git/git-tag.md×"]
    page.keyboard.press("a")
    saved(page, 4)
    screenshot(page, "review-log.png")
    page.keyboard.press("k")
    assert page.text_content("#status") == "accepted" and page.is_hidden("#source-box") and page.is_visible("#log-box")
    page.keyboard.press("k")  # back on the generated question: its passage again, no log box
    assert page.is_visible("#source-box") and page.is_hidden("#log-box")
    assert page.text_content("#source-text") == synthetic["_source"]["text"]
    assert page.page_errors == []
    written = {r["id"]: r for r in (json.loads(line) for line in golden.read_text().splitlines())}
    assert written[logged["id"]]["expected"] == ["git/git-tag.md"]
    assert written[logged["id"]]["provenance"]["kind"] == "log"
