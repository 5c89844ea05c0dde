"""The one page server in Chromium (issue 22): `goldeval serve RESULTS --golden G --candidates C`, started from
the real command line, serves the scorecard, the pool and the review on one port; each page does one real
action (a label fix, a judgment, a review accepted) and the golden set, its changelog and the candidates file
say so. Every request the pages make stays on that one origin and none is refused (the icon included)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import ARTIFACTS, browser, new_page, page, screenshot, wait_until  # noqa: F401 - fixtures
from goldeval.golden.changelog import read_changes
from goldeval.golden.io import load_golden
from goldeval.synth.candidates import read_candidates
from hang_guard import HANG_GUARD
from lifecycle_fixtures import World, card_of, world  # noqa: F401 - fixture
from test_review_session import make_candidates

pytestmark = pytest.mark.browser


@pytest.fixture()
def served(world: World, tmp_path: Path) -> Iterator[tuple[str, str, Path, Path]]:  # noqa: F811
    """The real `goldeval serve` with every page; yields (its stdout line, the base URL, golden, candidates)."""
    golden = world.golden_copy(tmp_path / "g")
    candidates = make_candidates(tmp_path, 1)
    env = {**os.environ, "GOLDEVAL_NO_HISTORY": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "goldeval", "serve", str(world.results), "--golden", str(golden),
                             "--candidates", str(candidates), "--by", "ana", "--port", "0"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, (line, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield line, found.group(0), golden, candidates
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def watch(pg: Any) -> list[tuple[str, int]]:
    """Every response the page receives, as (url, status)."""
    seen: list[tuple[str, int]] = []
    pg.on("response", lambda response: seen.append((response.url, response.status)))
    return seen


def test_one_server_serves_every_page_and_each_one_writes(page: Any, served: Any, world: World) -> None:  # noqa: F811
    line, base, golden, candidates = served
    assert f"serving the scorecard at {base}, pool at {base}pool, review at {base}review" in line
    seen = watch(page)
    page.set_viewport_size({"width": 1280, "height": 900})

    # the scorecard at /: a label fix from a miss
    search = card_of(world)["retrievers"][1]
    q = next(q for q in search["questions"] if not q["off_topic"] and (q["rank"] is None or q["rank"] > 1) and q["top"])
    doc = next(d for h in q["top"][:1] if (d := h.get("doc", h["id"])) not in q["expected"])
    page.goto(base + f"#k=1&run=1&q={q['id']}")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#fix-reason", "this page answers it too")
    page.locator(f'#fixes .fix-btn[data-fix="also_answers"][data-doc="{doc}"]').click()
    wait_until(page, "document.querySelector('#fix-status') && document.querySelector('#fix-status').textContent.startsWith('Saved')")
    assert [(c.action, c.question, c.doc, c.by) for c in read_changes(golden)] == [("also_answers", q["id"], doc, "ana")]

    # the pool at /pool, same port: a passage judged not relevant
    page.goto(base + "pool")
    page.wait_for_selector("#main:not([hidden])")
    qid, passage = page.text_content("#qid"), page.text_content("#passage-id")
    assert load_golden(golden).grades(qid).get(passage) is None  # unjudged until now
    assert "nDCG counts the grade" in page.text_content("#grades")
    page.keyboard.press("n")
    page.wait_for_selector('body[data-saved="1"]', state="attached")
    assert load_golden(golden).grades(qid)[passage] == 0
    assert [(c.question, c.doc, c.grade, c.pool != "") for c in read_changes(golden)][-1] == (qid, passage, 0, True)
    screenshot(page, "app-pool-1280.png")

    # the review at /review, same port: a candidate accepted into the same golden set
    page.goto(base + "review")
    page.wait_for_selector("#main:not([hidden])")
    (record,) = read_candidates(candidates)
    assert page.text_content("#question") == record["question"]
    page.keyboard.press("a")
    page.wait_for_selector('body[data-saved="1"]', state="attached")
    assert record["id"] in {question.id for question in load_golden(golden)}
    assert read_candidates(candidates)[0]["provenance"]["status"] == "accepted"

    assert page.page_errors == []
    assert seen and all(url.startswith(base) for url, _ in seen), seen  # one origin, one port
    assert [(url, status) for url, status in seen if status >= 400] == []
    icon = page.evaluate("fetch('/favicon.ico').then(r => [r.status, r.headers.get('content-type')])")
    assert icon == [200, "image/svg+xml; charset=utf-8"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_item_pages_fit_390_px_in_both_colour_schemes(browser: Any, served: Any, scheme: str) -> None:  # noqa: F811
    _, base, _, _ = served
    context, pg = new_page(browser, viewport={"width": 390, "height": 844}, color_scheme=scheme)
    try:
        for name in ("pool", "review"):
            pg.goto(base + name)
            pg.wait_for_selector("#main:not([hidden])")
            assert pg.evaluate("document.documentElement.scrollWidth") <= 390, name  # no sideways scroll
            reason = pg.locator("#reason" if name == "pool" else "#question").bounding_box()
            assert reason["x"] >= 0 and reason["x"] + reason["width"] <= 390, name
            background = pg.evaluate("getComputedStyle(document.body).backgroundColor")
            assert (background == "rgb(18, 21, 27)") == (scheme == "dark"), (name, background)  # the scorecard's --bg
            ARTIFACTS.mkdir(exist_ok=True)
            pg.screenshot(path=str(ARTIFACTS / f"app-{name}-390-{scheme}.png"), full_page=True)
        assert pg.page_errors == []
    finally:
        context.close()
