"""The live scorecard in a real Chromium (Playwright): controls, details, compare, off-topic, safety,
the offline report, several files, the address and live reload.

Every page here shows results from a real `goldeval.evaluate` run (see browser_fixtures.py). The page
computes nothing: these tests compare what it shows with the values Python wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import (  # noqa: F401 - fixtures
    XSS_QUESTION,
    XSS_TEXT,
    XSS_TITLE,
    bare,
    browser,
    new_page,
    open_page,
    page,
    results_file,
    run_json,
    scorecard_dict,
    screenshot,
    served_url,
    serving,
    shown_metrics,
    wait_until,
)

pytestmark = pytest.mark.browser


def pill(page: Any, qid: str) -> str:  # noqa: F811
    return page.locator(f'#q-body tr[data-qid="{qid}"] .pill').inner_text()


def test_opens_at_the_headline_k_and_the_k_controls_move_it(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    bm25 = run_json(scorecard_dict, "bm25")
    assert scorecard_dict["headline"][0] == "hit@5"
    open_page(page, served_url)
    assert page.locator("#k-input").input_value() == "5"  # the first headline metric's k, one rule everywhere
    assert page.locator("#headline .hl-metric").evaluate_all("ms => ms.map(m => m.dataset.metric)") == scorecard_dict["headline"]
    assert f"hit@5 {bm25['metrics']['hit@5']:.3f}" in page.locator("#headline").inner_text()
    # the k buttons: common cut-offs up to the depth (20), not a slider with 1..10 squeezed in its first tenth
    assert page.locator("#k-buttons button").all_inner_texts() == ["1", "3", "5", "10", "20"]
    late = next(q for q in bm25["questions"] if q["rank"] is not None and 1 < q["rank"] <= 5)
    page.click('#k-buttons button[data-k="1"]')
    value, text = shown_metrics(page)[(0, "hit")]
    assert text == f"{bm25['metrics']['hit@1']:.3f}" and float(value) == bm25["curves"]["hit"][0]
    assert pill(page, late["id"]) == "miss"
    for _ in range(4):
        page.click("#k-up")
    assert page.locator("#k-input").input_value() == "5"
    assert shown_metrics(page)[(0, "hit")][1] == f"{bm25['metrics']['hit@5']:.3f}"
    n = bm25["n_answerable"]
    assert page.locator('.mcell[data-run="0"][data-metric="hit"] .cnt').inner_text() == f"{round(bm25['metrics']['hit@5'] * n)}/{n}"
    assert pill(page, late["id"]) == "hit"
    assert page.locator("#hit-col-head").inner_text() == "hit@5"
    page.locator("body").click(position={"x": 5, "y": 5})  # outside the inputs, [ and ] move k
    page.keyboard.press("]")
    assert page.locator("#k-input").input_value() == "6"
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert page.locator("#k-input").input_value() == "4"
    page.fill("#k-input", "999")  # out of range: clamped to the depth
    page.press("#k-input", "Enter")
    assert page.locator("#k-input").input_value() == "20" and page.locator("#k-up").is_disabled()
    assert page.page_errors == []


def test_best_value_marked_map_shown_and_inactive_retriever_not_greyed(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    open_page(page, served_url)
    page.click('#k-buttons button[data-k="3"]')
    runs = scorecard_dict["retrievers"]
    for key in ("hit", "recall", "precision", "ndcg", "mrr", "map"):
        values = [r["curves"][key][2] if key in r["curves"] else r["metrics"][key] for r in runs]
        best = page.locator(f'.mcell.best[data-metric="{key}"]').evaluate_all("cs => cs.map(c => Number(c.dataset.run))")
        assert best == ([i for i, v in enumerate(values) if v == max(values)] if len(set(values)) > 1 else []), key
    assert shown_metrics(page)[(1, "map")][1] == f"{runs[1]['metrics']['map']:.3f}"
    active = page.locator('.chip[data-run="0"]')
    inactive = page.locator('.chip[data-run="1"]')
    assert active.get_attribute("aria-pressed") == "true" and inactive.get_attribute("aria-pressed") == "false"
    style = inactive.evaluate("c => { const s = getComputedStyle(c); return [s.opacity, s.cursor, c.disabled]; }")
    assert style == ["1", "pointer", False]  # clickable and fully legible, not looking disabled
    colors = [c.evaluate("c => getComputedStyle(c).backgroundColor") for c in (active, inactive)]
    assert colors[0] != colors[1]
    inactive.click()
    assert page.locator('.mt-row.active[data-run="1"]').count() == 1
    assert page.page_errors == []


def test_details_panel_and_screenshot(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    bm25 = run_json(scorecard_dict, "bm25")
    q01 = next(q for q in bm25["questions"] if q["id"] == "q01")
    open_page(page, served_url)
    page.click('#q-body tr[data-qid="q01"]')
    details = page.locator("#details")
    assert details.locator(".d-question").inner_text() == q01["question"]
    assert "Hit at k = 5: the first correct answer is at rank 2" in details.locator(".d-status").inner_text()
    assert details.locator(".exp-list li").first.inner_text().startswith("#2")
    rows = details.locator(".top-list li.hitrow")
    assert rows.count() == min(len(q01["top"]), 5 + 3)
    first = q01["top"][0]
    assert first["id"] in rows.first.inner_text()
    assert f"{first['score']:.3f}" in rows.first.inner_text()
    assert scorecard_dict["snippets"][first["id"]]["text"][:40] in rows.first.inner_text()
    assert details.locator(".top-list li.hitrow.ok .hr-id").inner_text() == "git/stash.md"
    assert f"hit@5 {q01['metrics']['hit@5']:.3f}" in details.locator(".d-scores").inner_text()
    assert screenshot(page, "web-scorecard-details.png").stat().st_size > 10_000
    miss = next(q for q in bm25["questions"] if q["diagnosis"])
    assert miss["diagnosis"]["k"] == 5
    page.click(f'#q-body tr[data-qid="{miss["id"]}"]')
    assert miss["diagnosis"]["suggestion"] in details.locator(".diag").inner_text()
    page.keyboard.press("Escape")
    assert page.locator("#details .placeholder").count() == 1
    assert page.page_errors == []


def test_a_retriever_error_is_shown_on_its_question(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    failed = next(q for q in run_json(scorecard_dict, "overlap_search")["questions"] if q["error"])
    assert failed["id"] == "q16" and "ConnectionError" in failed["error"]
    open_page(page, served_url)
    page.click('.chip[data-run="1"]')
    row = page.locator('#q-body tr[data-qid="q16"]')
    assert "retriever error" in row.inner_text() and "error" in row.locator("td.c-first").inner_text()
    row.click()
    assert failed["error"] in page.locator("#details .box.error").inner_text()
    assert "1 error" in page.locator('.mt-run[data-run="1"]').inner_text()


def test_no_layout_jump_when_k_moves(page: Any, served_url: str) -> None:  # noqa: F811
    open_page(page, served_url)

    def boxes() -> list[tuple[float, float, float, float]]:
        out = []
        for selector in (".mcell", ".mt-head", "#q-table th", "#q-body tr", "#k-input", "#controls"):
            for handle in page.locator(selector).all():
                b = handle.bounding_box()
                out.append((round(b["x"], 1), round(b["y"], 1), round(b["width"], 1), round(b["height"], 1)))
        return out

    page.click('#k-buttons button[data-k="1"]')
    before = boxes()
    for k in (3, 5, 10, 20, 1):
        page.click(f'#k-buttons button[data-k="{k}"]')
        assert boxes() == before, f"layout moved at k={k}"


def test_filters_and_sorting(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    bm25 = run_json(scorecard_dict, "bm25")
    open_page(page, served_url)
    page.click('#k-buttons button[data-k="1"]')

    def shown() -> list[str]:
        return page.locator("#q-body tr").evaluate_all("rows => rows.map(r => r.dataset.qid)")

    page.click('#filter-mode button[data-mode="miss"]')
    assert shown() == [q["id"] for q in bm25["questions"] if not q["off_topic"] and not q["metrics"]["hit@1"]]
    page.click('#filter-mode button[data-mode="offtopic"]')
    assert shown() == [q["id"] for q in bm25["questions"] if q["off_topic"]]
    page.click('#filter-mode button[data-mode="all"]')
    page.select_option("#filter-tag", "time")
    assert shown() == [q["id"] for q in bm25["questions"] if "time" in q["tags"]]
    page.select_option("#filter-tag", "")
    page.click('#q-table th[data-sort="id"]')
    page.click('#q-table th[data-sort="id"]')  # second click: descending
    assert shown() == sorted((q["id"] for q in bm25["questions"]), reverse=True)
    page.fill("#filter-text", "spreadsheet")
    assert shown() == ["q05"]


def test_compare_lists_what_a_finds_and_b_misses(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    a = run_json(scorecard_dict, "bm25")
    b = {q["id"]: q for q in run_json(scorecard_dict, "overlap_search")["questions"]}
    flips = scorecard_dict["flips"]["bm25|overlap_search"]
    a_only = [q["id"] for q in a["questions"] if not q["off_topic"] and q["metrics"]["hit@5"] and not b[q["id"]]["metrics"]["hit@5"]]
    b_only = [q["id"] for q in a["questions"] if not q["off_topic"] and not q["metrics"]["hit@5"] and b[q["id"]]["metrics"]["hit@5"]]
    assert a_only and (len(a_only), len(b_only)) == (flips["a_only"][4], flips["b_only"][4])
    open_page(page, served_url)
    page.click('#tabs [data-tab="compare"]')
    cols = page.locator(".flip-col")
    assert cols.nth(0).locator("li[data-qid]").evaluate_all("ls => ls.map(l => l.dataset.qid)") == a_only
    assert cols.nth(1).locator("li[data-qid]").evaluate_all("ls => ls.map(l => l.dataset.qid)") == b_only
    assert f"A finds {flips['a_only'][4]}" in page.locator("#cmp-summary").inner_text()
    series = page.locator(".flip-series tbody tr").nth(0).locator("td").all_inner_texts()
    assert series == [str(flips["a_only"][k - 1]) for k in (1, 3, 5, 10, 20)]
    verdicts = page.locator(".verdict-table").inner_text()
    assert "hit@5" in verdicts and "A wins" in verdicts
    screenshot(page, "web-compare.png")
    cols.nth(0).locator("li[data-qid]").first.click()  # opens that question in the questions tab
    assert page.locator("#details .d-question").inner_text() == next(q["question"] for q in a["questions"] if q["id"] == a_only[0])
    assert page.page_errors == []


def test_off_topic_slider_steps_through_pythons_roc_cuts(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    sep = scorecard_dict["statistics"]["off_topic"]["retrievers"]["overlap_search"]
    roc = sep["roc"]
    open_page(page, served_url)
    page.click('.chip[data-run="1"]')
    page.click('#tabs [data-tab="offtopic"]')
    assert sep["verdict"] in page.locator("#ot-body").inner_text()
    assert f"ROC AUC {sep['auc']:.3f}" in page.locator("#ot-body").inner_text()
    start = roc["thresholds"].index(sep["threshold"])  # the slider starts at Python's (Youden's J) threshold
    assert page.locator("#ot-threshold").input_value() == str(start)
    assert "goldeval's threshold" in page.locator(".ot-rule").inner_text()
    for i in range(len(roc["thresholds"])):
        page.evaluate(f"""() => {{ const s = document.getElementById('ot-threshold');
            s.value = '{i}'; s.dispatchEvent(new Event('input')); }}""")
        stats = page.locator(".ot-stats .stat-n").all_inner_texts()
        assert stats[0] == f"{roc['rejects_answerable'][i]} of {roc['n_answerable']}"
        assert stats[1] == f"{roc['n_off_topic'] - roc['passes_off_topic'][i]} of {roc['n_off_topic']}"
        assert stats[2] == str(roc["passes_off_topic"][i])
        assert f"{roc['thresholds'][i]:.3f}" in page.locator(".ot-rule").inner_text()
    assert sep["highest"]["question"] in page.locator("#ot-body").inner_text()
    screenshot(page, "web-offtopic.png")
    assert page.page_errors == []


def test_hostile_document_and_question_do_not_run(page: Any, served_url: str) -> None:  # noqa: F811
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_page(page, served_url)
    page.click('#q-body tr[data-qid="q11"]')
    for tab in ("compare", "offtopic", "breakdown", "questions"):
        page.click(f'#tabs [data-tab="{tab}"]')
    page.click('#q-body tr[data-qid="q11"]')
    details = page.locator("#details")
    assert details.locator(".d-question").inner_text() == XSS_QUESTION
    assert XSS_TITLE in details.inner_text()
    assert XSS_TEXT in details.inner_text()
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.evaluate("document.querySelectorAll('img, b, script:not([src]):not([type])').length") == 0
    assert dialogs == []
    assert page.page_errors == []


@pytest.fixture()
def report_file(tmp_path: Path, scorecard_dict: dict[str, Any]) -> Path:  # noqa: F811
    from goldeval.report.html import write_html_report

    return write_html_report([scorecard_dict], tmp_path / "report.html", names=["tiny.json"])


def test_static_report_works_from_file_with_no_network(browser: Any, report_file: Path, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    context, pg = new_page(browser, offline=True, viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    context.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
    errors = pg.page_errors
    pg.on("request", lambda req: requests.append(req.url))
    try:
        open_page(pg, report_file.as_uri())
        bm25 = run_json(scorecard_dict, "bm25")
        assert shown_metrics(pg)[(0, "hit")][1] == f"{bm25['metrics']['hit@5']:.3f}"
        pg.click('#k-buttons button[data-k="1"]')
        assert shown_metrics(pg)[(0, "hit")][1] == f"{bm25['metrics']['hit@1']:.3f}"
        pg.click('#q-body tr[data-qid="q11"]')
        assert pg.locator("#details .d-question").inner_text() == XSS_QUESTION
        assert pg.evaluate("typeof window.__xss") == "undefined"
        assert requests == [report_file.as_uri()]
        assert errors == []
        screenshot(pg, "web-static-report.png")
    finally:
        context.close()


@pytest.fixture()
def bare_url(scorecard_dict: dict[str, Any]) -> Iterator[str]:  # noqa: F811
    from goldeval.report.page import results_payload

    with serving(results_payload([bare(scorecard_dict), scorecard_dict], names=["before.json", "after.json"])) as url:
        yield url


def test_degrades_without_stats_and_compares_two_files(page: Any, bare_url: str) -> None:  # noqa: F811
    open_page(page, bare_url)
    labels = page.locator("#run-picker .chip").all_inner_texts()
    assert labels == ["before.json · bm25", "before.json · overlap_search", "after.json · bm25", "after.json · overlap_search"]
    assert page.locator('.mcell[data-run="0"] .whisker').evaluate_all("ws => ws.every(w => w.hidden)")
    assert page.locator('.mcell[data-run="2"] .whisker').evaluate_all("ws => ws.some(w => !w.hidden)")
    page.click('#tabs [data-tab="offtopic"]')
    assert "no statistics" in page.locator("#ot-body").inner_text()
    page.click('#tabs [data-tab="breakdown"]')
    assert "no statistics" in page.locator("#bd-body").inner_text()
    page.click('#tabs [data-tab="compare"]')
    page.select_option("#cmp-a", "0")
    page.select_option("#cmp-b", "2")  # the same retriever in two files: nothing flipped
    assert "A finds 0 that B misses, B finds 0 that A misses" in page.locator("#cmp-summary").inner_text()
    assert page.page_errors == []


def test_the_address_keeps_the_view(page: Any, served_url: str) -> None:  # noqa: F811
    open_page(page, served_url + "#k=1&run=1&show=miss&q=q01")
    assert page.locator("#k-input").input_value() == "1"
    assert page.locator('.chip[data-run="1"]').get_attribute("aria-pressed") == "true"
    assert page.locator('#filter-mode button[data-mode="miss"]').get_attribute("aria-pressed") == "true"
    assert page.locator("#details .d-question").inner_text().startswith("How do I switch branches")
    page.click('#k-buttons button[data-k="3"]')
    page.click('#tabs [data-tab="offtopic"]')
    assert page.evaluate("location.hash") == "#k=3&tab=offtopic&run=1&show=miss&q=q01"
    page.goto("about:blank")  # a new load: a hash change alone would not reload the page
    open_page(page, served_url + "#k=999&run=7&tab=<script>")  # nonsense is ignored, not trusted
    assert page.locator("#k-input").input_value() == "20"
    assert page.locator('.chip[data-run="0"]').get_attribute("aria-pressed") == "true"
    assert page.page_errors == []


def test_an_open_page_follows_a_rerun_of_its_results_file(page: Any, tmp_path: Path, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    """Live reload, with the page's data read as the server answers it: every read of the results, the
    version it polls and the lifecycle goes to /api/ with the session token of the page's HTML, and none is
    refused (the server answers them only with it, test_app.py)."""
    from browser_fixtures import evaluate_tiny, overlap_search
    from goldeval.scorecard import Scorecard
    from goldeval.web.live import ResultsFiles

    path = tmp_path / "results.json"
    Scorecard.from_dict(scorecard_dict).save(path)
    reads: list[tuple[str, str | None]] = []
    refused: list[tuple[str, int]] = []
    page.on("request", lambda req: reads.append((req.url, req.headers.get("x-goldeval-token"))))
    page.on("response", lambda res: refused.append((res.url, res.status)) if res.status >= 400 else None)
    with serving(ResultsFiles([path])) as url:
        open_page(page, url)
        token = page.locator('meta[name="goldeval-token"]').get_attribute("content")
        assert token
        page.click('#k-buttons button[data-k="1"]')
        page.click('#q-body tr[data-qid="q01"]')
        assert shown_metrics(page)[(0, "hit")][1] == f"{run_json(scorecard_dict, 'bm25')['metrics']['hit@1']:.3f}"
        # the user re-runs `goldeval eval --json results.json` with another retriever
        rerun = evaluate_tiny(tmp_path, stats=False, retrievers=[overlap_search])
        Scorecard.from_dict(rerun).save(path)
        wait_until(page, "window.goldeval.version === '2'")
        assert page.locator("#run-picker .chip").all_inner_texts() == ["overlap_search"]
        assert shown_metrics(page)[(0, "hit")][1] == f"{rerun['retrievers'][0]['metrics']['hit@1']:.3f}"
        assert page.locator("#k-input").input_value() == "1"  # the reader keeps their place
        assert page.locator("#details .d-question").inner_text().startswith("How do I switch branches")
        assert "reloaded" in page.locator("#live").inner_text()
        # a broken write keeps the last good results on screen, and says so
        path.write_text("{ not json", encoding="utf-8")
        page.wait_for_selector("#live.warn")
        assert "could not reload the results" in page.locator("#live").inner_text()
        assert shown_metrics(page)[(0, "hit")][1] == f"{rerun['retrievers'][0]['metrics']['hit@1']:.3f}"
        assert page.page_errors == []
    data = [(u.removeprefix(url), t) for u, t in reads if u.startswith(url) and not u.endswith((".js", ".css", "/"))]
    assert {u for u, _ in data} >= {"api/results.json", "api/version", "api/lifecycle.json"}, data
    assert {u for u, _ in data} <= {"api/results.json", "api/version", "api/lifecycle.json", "favicon.ico"}, data
    assert [u for u, t in data if u.startswith("api/") and t != token] == []  # every data read carries the token
    assert [u for u, _ in data].count("api/results.json") >= 2  # loaded, then reloaded after the re-run
    assert refused == []
