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
from goldeval.web.review import make_review_server, start_in_thread
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
    server = make_review_server(ReviewSession(candidates, golden, reviewer="playwright"), port=0)
    thread = start_in_thread(server)
    yield server.url, candidates, golden, records
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def saved(pg: Any, count: int) -> None:
    """Wait until the page has saved `count` actions (a selector: the page's CSP forbids eval)."""
    pg.wait_for_selector(f'body[data-saved="{count}"]', state="attached", timeout=15000)


def test_keyboard_review_writes_only_accepted_questions(page: Any, review_url: Any) -> None:  # noqa: F811
    url, candidates, golden, records = review_url
    first, hostile, third = records
    page.goto(url)
    page.wait_for_selector("#main:not([hidden])", timeout=15000)
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
