"""The small things of issue 24 that confused readers of the scorecard page, in a real Chromium at 1366 px
and 390 px: bpref shown, long retriever names whole, the judged@k table's columns the same at every k, the
notes a quiet line, the sticky bar opaque, the tabs moving with the arrow keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import (  # noqa: F401 - fixtures
    QUESTIONS,
    browser,
    new_page,
    open_page,
    overlap_search,
    page,
    serving,
    set_k,
    shown_metrics,
    tiny_corpus,
)

pytestmark = pytest.mark.browser
LONG = "overlap-search-over-title-and-text-with-a-long-descriptive-name-k20-no-stemming-v2"
NOTE = "read from stored runs in .goldeval/runs (the retrievers were not run again)"


@pytest.fixture(scope="module")
def judged_card(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The tiny evaluation with judged-not-relevant passages (so bpref is computed) and a long name."""
    from goldeval.evaluation import evaluate
    from goldeval.golden.model import GoldenSet, Qrels, Question

    questions = [Question(qid, text, "answerable" if expected else "off_topic", tuple(tags), line=i + 1)
                 for i, (qid, text, expected, tags) in enumerate(QUESTIONS)]
    grades = {qid: dict(expected) if isinstance(expected, dict) else {e: 1 for e in expected}
              for qid, _, expected, _ in QUESTIONS if expected}
    grades["q01"]["git/branch.md"] = 0  # judged: not what the question asks
    grades["q06"]["python/os.md"] = 0
    golden = GoldenSet(questions, Qrels.from_grades(grades), path="tiny-golden.jsonl")
    card = evaluate({"bm25": "bm25", LONG: overlap_search}, golden, corpus=tiny_corpus(), k=(1, 3, 5, 10), depth=20,
                    workspace=tmp_path_factory.mktemp("ws"))
    data = card.to_dict()
    data["notes"] = [NOTE]
    return data


@pytest.fixture(scope="module")
def judged_url(judged_card: dict[str, Any]) -> Iterator[str]:
    from goldeval.report.page import results_payload

    with serving(results_payload([judged_card])) as url:
        yield url


def test_bpref_is_shown_and_long_names_are_whole(page: Any, judged_url: str, judged_card: dict[str, Any]) -> None:  # noqa: F811
    runs = judged_card["retrievers"]
    assert all("bpref" in r["metrics"] for r in runs)
    open_page(page, judged_url)
    shown = shown_metrics(page)
    for i, r in enumerate(runs):
        assert shown[(i, "bpref")][1] == f"{r['metrics']['bpref']:.3f}"
        flat = page.locator(f'#k-plot svg[data-metric="bpref"] g[data-run="{i}"] circle').evaluate_all("ps => ps.map(p => Number(p.dataset.value))")
        assert flat and set(flat) == {r["metrics"]["bpref"]}  # drawn flat: no k
    name = page.locator('.mt-run[data-run="1"] .mt-run-name')
    assert name.inner_text() == LONG
    assert name.evaluate("n => n.scrollWidth <= n.clientWidth && n.getBoundingClientRect().width > 0")  # not cut
    assert page.page_errors == []


def test_the_judged_table_keeps_its_columns_at_every_k(page: Any, judged_url: str, judged_card: dict[str, Any]) -> None:  # noqa: F811
    open_page(page, judged_url)
    heads = []
    for k in range(1, judged_card["depth"] + 1):
        set_k(page, k)
        texts = page.locator("#judged .judged-table thead th").all_inner_texts()
        heads.append([t.replace(f"@{k}", "@k") for t in texts])
        for i, r in enumerate(judged_card["retrievers"]):
            cell = page.locator(f'#judged .judged-table tr[data-run="{i}"] td[data-metric="hit"]').inner_text()
            range_ = r["ranges"].get(f"hit@{k}")
            past = r["returned"]["cut_short"] and k > r["returned"]["max"]  # past what it returned: n/a
            assert cell == ("n/a" if past else f"{range_[0]:.3f} – {range_[1]:.3f}" if range_ else "—"), (k, cell)
    assert heads[0] and all(h == heads[0] for h in heads)  # the same columns whatever k
    assert page.page_errors == []


def test_notes_are_a_quiet_line_and_the_sticky_bar_is_opaque(page: Any, judged_url: str) -> None:  # noqa: F811
    open_page(page, judged_url)
    notes = page.locator("#notes")
    assert NOTE in notes.inner_text()
    style = notes.evaluate("n => { const s = getComputedStyle(n); return [s.backgroundColor, parseFloat(s.fontSize)]; }")
    assert style[0] in ("rgba(0, 0, 0, 0)", "transparent") and style[1] <= 12.5  # no yellow warning box
    bar = page.locator("#controls").evaluate("n => { const s = getComputedStyle(n); return [s.backgroundColor, s.backdropFilter]; }")
    assert bar[0].startswith("rgb(") and bar[1] == "none"  # rgb, never rgba: nothing shows through
    assert page.page_errors == []


def test_the_tabs_move_with_the_arrow_keys(page: Any, judged_url: str) -> None:  # noqa: F811
    open_page(page, judged_url)
    visible = page.locator("#tabs [role=tab]:not([hidden])").evaluate_all("ts => ts.map(t => t.dataset.tab)")
    page.focus('#tabs [data-tab="questions"]')
    page.keyboard.press("ArrowRight")
    assert page.evaluate("[window.goldeval.state.tab, document.activeElement.dataset.tab]") == [visible[1], visible[1]]
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # from the first, round to the last
    assert page.evaluate("window.goldeval.state.tab") == visible[-1]
    page.keyboard.press("Home")
    assert page.evaluate("window.goldeval.state.tab") == visible[0]
    assert page.locator('#tabs [data-tab="questions"]').get_attribute("tabindex") == "0"
    assert page.locator('#tabs [data-tab="compare"]').get_attribute("tabindex") == "-1"  # one tab stop
    assert page.page_errors == []


def test_390_px_every_new_view_fits(browser: Any, judged_url: str, tmp_path: Path) -> None:  # noqa: F811
    context, pg = new_page(browser, viewport={"width": 390, "height": 844})
    try:
        open_page(pg, judged_url)
        for tab in ("questions", "side", "compare", "breakdown"):
            pg.click(f'#tabs [data-tab="{tab}"]')
            assert pg.evaluate("document.documentElement.scrollWidth") <= 390, tab
        name = pg.locator('.mt-run[data-run="1"] .mt-run-name')
        assert name.evaluate("n => n.scrollWidth <= n.clientWidth && n.getBoundingClientRect().right <= 390")
        for selector in ("#copy-link", "#export-metrics", "#k-slider"):
            b = pg.locator(selector).bounding_box()
            assert b and b["x"] >= 0 and b["x"] + b["width"] <= 390, selector
        assert pg.page_errors == []
    finally:
        context.close()


def test_a_formula_in_a_question_stays_text_in_the_csv(page: Any, judged_card: dict[str, Any]) -> None:  # noqa: F811
    import copy
    import csv

    from goldeval.report.page import results_payload

    formula = '=HYPERLINK("http://127.0.0.1/x","click")'
    card = copy.deepcopy(judged_card)
    for r in card["retrievers"]:
        for q in r["questions"]:
            if q["id"] == "q03":
                q["question"] = formula
    with serving(results_payload([card])) as url:
        open_page(page, url)
        with page.expect_download() as info:
            page.click("#export-questions")
        with open(info.value.path(), newline="", encoding="utf-8") as f:
            rows = {row["id"]: row for row in csv.DictReader(f)}
    assert rows["q03"]["question"] == "'" + formula  # a spreadsheet shows it, never runs it
    assert rows["q01"]["question"] == next(q["question"] for q in card["retrievers"][0]["questions"] if q["id"] == "q01")
    assert page.page_errors == []
