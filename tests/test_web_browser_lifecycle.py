"""The page's lifecycle views in a real Chromium (issues 10 and 11): synthetic leakage beside hand-written,
judged@k and the metric ranges, the run history's trend, and label fixes from a miss written into the
golden set and its changelog. Every page shows real evaluations (lifecycle_fixtures.py); the page
computes nothing, so each shown value is compared with what Python wrote."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import (  # noqa: F401 - fixtures
    ARTIFACTS,
    browser,
    new_page,
    open_page,
    page,
    screenshot,
    serving,
    set_k,
    wait_until,
)
from goldeval.golden.changelog import read_changes
from goldeval.golden.io import load_golden
from goldeval.report.lifecycle import leakage_view
from goldeval.web.live import ResultsFiles
from lifecycle_fixtures import World, card_of, world  # noqa: F401 - fixture

pytestmark = pytest.mark.browser


def served(results: Path, **options: Any) -> AbstractContextManager[str]:
    """`goldeval serve RESULTS [--golden G] [--workspace W]` in a thread."""
    return serving(ResultsFiles([results]), **options)


@contextmanager
def narrow(browser: Any) -> Iterator[Any]:  # noqa: F811
    context, pg = new_page(browser, viewport={"width": 390, "height": 844}, device_scale_factor=2)
    try:
        yield pg
    finally:
        context.close()


def wide(page: Any) -> Any:  # noqa: F811
    page.set_viewport_size({"width": 1280, "height": 900})
    return page


def test_synthetic_tab_shows_python_leakage_and_the_measured_gap(page: Any, browser: Any, world: World) -> None:  # noqa: F811
    view = leakage_view(card_of(world))
    assert view is not None
    with served(world.results) as url:
        open_page(wide(page), url)
        page.click('#tabs [data-tab="synthetic"]')
        body = page.locator("#syn-body")
        assert "How much easier are the synthetic questions?" in body.inner_text()
        heads = body.locator(".leak-table thead th").all_inner_texts()
        assert heads == ["leakage", "synthetic (5)", "hand (13)", "gap (synthetic − hand)"]
        rows = body.locator(".leak-table tbody tr").evaluate_all(
            "rs => rs.map(r => [...r.children].map(c => c.textContent))")
        assert rows == [[r["label"], r["values"]["synthetic"], r["values"]["hand"], r["gap"]] for r in view["rows"]]
        gap = body.locator(".gap-table tbody tr").evaluate_all("rs => rs.map(r => [...r.children].map(c => c.textContent))")
        assert gap == [[r["metric"], r["hand"], r["synthetic"], r["gap"], f"beyond noise ({r['gap_ci']})" if r["beyond_noise"]
                        else "within noise"] for r in view["metric_gap"]["bm25"]["rows"]]
        assert "never pooled" in body.text_content()
        screenshot(page, "lifecycle-synthetic-1280.png")
        page.click('#run-picker .chip[data-run="1"]')  # the other retriever: its own measured gap
        assert body.locator(".gap-table tbody tr th").first.inner_text() == view["metric_gap"]["overlap_search"]["rows"][0]["metric"]
        assert body.locator(".gap-table tbody td.gap").first.inner_text() == view["metric_gap"]["overlap_search"]["rows"][0]["gap"]
        body.locator("details.extras summary").click()
        body.locator('.leak-questions button:text("syn-01")').click()  # a question opens in the Questions tab
        assert page.locator("#details .d-question").inner_text() == "how does git stash pop bring my uncommitted changes back later"
        assert page.page_errors == []
        with narrow(browser) as pg:
            open_page(pg, url + "#tab=synthetic")
            assert pg.evaluate("document.documentElement.scrollWidth") <= 390
            screenshot(pg, "lifecycle-synthetic-390.png")
            assert pg.page_errors == []


def test_no_synthetic_tab_without_leakage(page: Any, tmp_path: Path) -> None:  # noqa: F811
    from browser_fixtures import evaluate_tiny
    from goldeval.scorecard import Scorecard

    path = tmp_path / "plain.json"
    Scorecard.from_dict(evaluate_tiny(tmp_path, stats=True)).save(path)
    with served(path) as url:
        open_page(page, url + "#tab=synthetic")
        assert page.locator('#tabs [data-tab="synthetic"]').is_hidden()
        assert page.locator('#tabs [data-tab="trend"]').is_hidden()
        assert page.locator('#tabs [data-tab="questions"]').get_attribute("aria-selected") == "true"
        assert page.page_errors == []


def test_judged_at_k_and_the_ranges_follow_k(page: Any, world: World) -> None:  # noqa: F811
    card = card_of(world)
    with served(world.results) as url:
        open_page(wide(page), url)
        box = page.locator("#judged")
        assert box.is_visible() and "How much rests on judged passages?" in box.inner_text()
        for k in (1, 5, 10):
            set_k(page, k)
            for i, r in enumerate(card["retrievers"]):
                row = box.locator(f'tr[data-run="{i}"]')
                assert row.locator("td").first.inner_text() == f"{r['judged'][k - 1]:.3f}"
                assert float(row.locator("td").first.get_attribute("data-judged")) == r["judged"][k - 1]
                low, high = r["ranges"][f"hit@{k}"]
                assert row.locator('td[data-metric="hit"]').inner_text() == f"{low:.3f} – {high:.3f}"
                assert row.locator('td[data-metric="mrr"]').inner_text() == "{:.3f} – {:.3f}".format(*r["ranges"]["mrr"])
                band = page.locator(f'.mcell[data-run="{i}"][data-metric="precision"] .range-band')
                lo, hi = r["ranges"][f"precision@{k}"]
                assert band.is_visible() == (hi > lo)
        set_k(page, 12)  # judged@k is kept up to the largest computed k; ranges only at computed ks
        assert box.locator('tr[data-run="0"] td').first.inner_text() == "—"
        assert "judged@k is kept up to k = 10; ranges at a cut-off are computed at k = 1, 3, 5, 10" in box.inner_text()
        assert f"goldeval pool results.json --golden {card['golden']['path']}" in box.inner_text()
        set_k(page, 5)
        screenshot(page, "lifecycle-judged-1280.png")
        assert page.page_errors == []


def test_a_shipped_golden_set_gets_no_command_that_would_edit_it(page: Any, world: World, tmp_path: Path) -> None:  # noqa: F811
    import json

    card = card_of(world)
    card["golden"]["shipped"] = True  # as `goldeval demo` marks its set, which lives inside goldeval
    results = tmp_path / "results.json"
    results.write_text(json.dumps(card))
    q = next(q for q in card["retrievers"][1]["questions"] if not q["off_topic"] and (q["rank"] is None or q["rank"] > 1))
    with served(results) as url:
        open_page(wide(page), url + f"#k=1&run=1&q={q['id']}")
        judged = page.locator("#judged").inner_text()
        assert "ships with goldeval and is not edited from here" in judged
        assert "goldeval pool results.json" not in judged and "--golden " + card["golden"]["path"] not in judged
        fixes = page.locator("#fixes").inner_text()
        assert "ships with goldeval and is not edited from here" in fixes
        assert "--golden " + card["golden"]["path"] not in fixes and "goldeval serve results.json" not in fixes
        assert page.page_errors == []


def test_trend_after_two_recorded_evaluations(page: Any, browser: Any, world: World) -> None:  # noqa: F811
    from goldeval.history.db import History
    from goldeval.history.trend import trend_payload

    with served(world.results, workspace=world.workspace) as url:
        open_page(wide(page), url)
        page.click('#tabs [data-tab="trend"]')
        body = page.locator("#trend-body")
        assert body.locator("h3").inner_text() == "hit@5 over 2 runs on golden-set version 1"
        page.select_option("#trend-metric", "mrr")
        expected = trend_payload(History.of(world.workspace), metric="mrr", version=1)
        points = body.locator(".trend-point").evaluate_all(
            "gs => gs.map(g => [g.dataset.name, Number(g.dataset.run), Number(g.dataset.value), g.querySelectorAll('line.ci').length])")
        assert sorted(map(tuple, points)) == sorted((name, p["run"], p["value"], 3) for name, pts in expected["retrievers"].items() for p in pts)
        rows = body.locator(".trend-table tbody tr").evaluate_all("rs => rs.map(r => [...r.children].map(c => c.textContent))")
        v1, v2 = (p for p in expected["retrievers"]["overlap_search"])
        assert rows[0][0] == "run 1" and rows[1][0] == "run 2"
        assert rows[0][3] == f"{v1['value']:.3f} ({v1['low']:.3f} to {v1['high']:.3f})" and rows[1][3].startswith(f"{v2['value']:.3f}")
        screenshot(page, "lifecycle-trend-1280.png")
        assert page.page_errors == []
        with narrow(browser) as pg:
            open_page(pg, url + "#tab=trend")
            assert pg.locator("#trend-body svg.trend-chart").is_visible()
            assert pg.evaluate("document.documentElement.scrollWidth") <= 390
            screenshot(pg, "lifecycle-trend-390.png")
            assert pg.page_errors == []


def test_the_trend_switches_between_frozen_versions(page: Any, world: World, tmp_path: Path) -> None:  # noqa: F811
    import shutil
    from dataclasses import replace

    from goldeval.history.db import History
    from goldeval.scorecard import Scorecard

    workspace = tmp_path / "ws"
    shutil.copytree(world.workspace, workspace)
    later = Scorecard.from_dict(card_of(world))  # a run on the set's next frozen version
    later.identity = replace(later.identity, golden_version=2, golden_fingerprint="f" * 64)
    History.of(workspace).record(later)
    with served(world.results, workspace=workspace) as url:
        open_page(wide(page), url + "#tab=trend")
        body = page.locator("#trend-body")
        assert body.locator("h3").inner_text() == "hit@5 over 2 runs on golden-set version 1"  # the served file's
        assert page.locator("#trend-version option").all_inner_texts() == ["version 2", "version 1"]
        page.select_option("#trend-version", "2")
        assert body.locator("h3").inner_text() == "hit@5 over 1 run on golden-set version 2"
        page.select_option("#trend-metric", "mrr")  # the version picked stays picked
        assert body.locator("h3").inner_text() == "mrr over 1 run on golden-set version 2"
        assert body.locator(".trend-table tbody tr").count() == 1
        assert page.page_errors == []


def test_a_label_fix_from_the_page_is_written_to_the_golden_set_and_its_changelog(page: Any, browser: Any, world: World, tmp_path: Path) -> None:  # noqa: F811
    card = card_of(world)
    search = card["retrievers"][1]
    q = next(q for q in search["questions"] if not q["off_topic"] and (q["rank"] is None or q["rank"] > 1) and q["top"])
    doc = next(d for h in q["top"][:1] if (d := h.get("doc", h["id"])) not in q["expected"])
    golden = world.golden_copy(tmp_path / "g")
    with served(world.results, golden=golden, judge="ana") as url:
        open_page(wide(page), url + f"#k=1&run=1&q={q['id']}")
        fixes = page.locator("#fixes")
        assert "Is this miss a labelling error?" in fixes.text_content()
        button = fixes.locator(f'.fix-btn[data-fix="also_answers"][data-doc="{doc}"]')
        button.click()  # no reason yet: refused in the page, nothing written
        assert "Write a reason first" in page.locator("#fix-status").inner_text() and read_changes(golden) == []
        page.fill("#fix-reason", "this page answers <b>it</b> too")
        page.evaluate("window.GE.update()")  # a re-render (k moved, data reloaded) keeps what was typed
        assert page.locator("#fix-reason").input_value() == "this page answers <b>it</b> too"
        button.click()
        wait_until(page, "document.querySelector('#fix-status') && document.querySelector('#fix-status').textContent.startsWith('Saved')")
        # the header counts the fix at once, as the server's changelog summary says (it used to stay stale)
        assert "1 label fixed since version 1 (not frozen yet)" in page.locator("#context").inner_text()
        changes = read_changes(golden)
        assert [(c.action, c.question, c.doc, c.grade, c.reason, c.by) for c in changes] == \
            [("also_answers", q["id"], doc, 1, "this page answers <b>it</b> too", "ana")]
        assert load_golden(golden).relevant(q["id"])[doc] == 1
        assert fixes.locator(f'.fix-btn[data-doc="{doc}"]').is_disabled()
        assert "this page answers <b>it</b> too" in fixes.locator(".fix-done").inner_text()  # text, not markup
        assert page.locator("#fix-reason").input_value() == ""  # submitted: a fresh reason for the next fix
        page.evaluate("window.GE.update()")
        assert page.locator("#fix-status").inner_text().startswith("Saved: also answers")
        screenshot(page, "lifecycle-fix-1280.png")
        # scrolled inside the page in one step: the live page may re-render #fixes between a locator's
        # resolve and its scroll, which detached the element on a loaded machine (issue 17)
        page.evaluate("document.querySelector('#fixes').scrollIntoView()")
        page.locator("#details").screenshot(path=str(ARTIFACTS / "lifecycle-fix-details-1280.png"))
        page.reload()  # the recorded fix is there after a reload (read back from the changelog)
        page.wait_for_selector("body[data-ready=true]")
        assert "also answers" in page.locator("#fixes .fix-done").inner_text()
        assert page.page_errors == []
        with narrow(browser) as pg:
            open_page(pg, url + f"#k=1&run=1&q={q['id']}")
            box = pg.locator("#details").bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390
            pg.evaluate("document.querySelector('#fixes').scrollIntoView()")
            pg.screenshot(path=str(ARTIFACTS / "lifecycle-fix-390.png"))  # the drawer as the reader sees it
            assert pg.page_errors == []
    # re-scored on the fixed set: the scorecard says what changed since the frozen version
    from goldeval.scorecard import Scorecard
    from lifecycle_fixtures import evaluate_world, overlap_search

    rescored = tmp_path / "rescored.json"
    Scorecard.from_dict(evaluate_world(golden, tmp_path / "cache", ["bm25", overlap_search])).save(rescored)
    with served(rescored) as url:
        open_page(page, url)
        assert "1 label fixed since version 1 (not frozen yet)" in page.locator("#judged .judged-changes").inner_text()
        assert "1 label fixed since version 1" in page.locator("#context").inner_text()
        assert page.page_errors == []


def test_without_golden_the_fix_buttons_are_absent_and_the_panel_says_how(page: Any, world: World) -> None:  # noqa: F811
    card = card_of(world)
    q = next(q for q in card["retrievers"][1]["questions"] if not q["off_topic"] and (q["rank"] is None or q["rank"] > 1))
    with served(world.results) as url:
        open_page(page, url + f"#k=1&run=1&q={q['id']}")
        fixes = page.locator("#fixes")
        assert fixes.locator(".fix-btn").count() == 0 and page.locator("#fix-reason").count() == 0
        assert f"goldeval serve results.json --golden {card['golden']['path']}" in fixes.inner_text()
        hit = next(x for x in card["retrievers"][1]["questions"] if x["rank"] == 1)
        page.click(f'#q-body tr[data-qid="{hit["id"]}"]')
        assert page.locator("#fixes").count() == 0  # a hit offers no fix
        assert page.page_errors == []


def test_the_offline_report_shows_the_trend_and_says_how_to_fix_labels(page: Any, world: World, tmp_path: Path) -> None:  # noqa: F811
    """`goldeval report RESULTS --html OUT --history`: the trend inlined, no server, no fix buttons."""
    from goldeval.report.html import write_html_report

    out = write_html_report([world.results], tmp_path / "report.html", history=world.workspace)
    open_page(wide(page), out.as_uri() + "#tab=trend")
    assert page.locator("#trend-body h3").inner_text() == "hit@5 over 2 runs on golden-set version 1"
    assert page.locator("#trend-body .trend-point").count() == 4
    card = card_of(world)
    q = next(q for q in card["retrievers"][1]["questions"] if not q["off_topic"] and (q["rank"] is None or q["rank"] > 1))
    page.goto(out.as_uri() + f"#k=1&run=1&q={q['id']}")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    fixes = page.locator("#fixes")
    assert fixes.locator(".fix-btn").count() == 0 and "serve these results with the golden set" in fixes.inner_text()
    assert page.page_errors == []


def test_an_open_trend_follows_a_new_recorded_run(page: Any, world: World, tmp_path: Path) -> None:  # noqa: F811
    """Every `goldeval eval` records a run: the served page's Trend picks it up without a reload."""
    import shutil

    from goldeval.history.db import History
    from goldeval.scorecard import Scorecard

    workspace = tmp_path / "ws"
    shutil.copytree(world.workspace, workspace)
    with served(world.results, workspace=workspace) as url:
        open_page(page, url + "#tab=trend")
        assert page.locator("#trend-body h3").inner_text() == "hit@5 over 2 runs on golden-set version 1"
        History.of(workspace).record(Scorecard.from_dict(world.cards[0]))
        wait_until(page, "document.querySelector('#trend-body h3').textContent.includes('3 runs')")
        assert page.locator("#trend-body .trend-table tbody tr").count() == 3
        assert page.page_errors == []
