"""The live scorecard in a real Chromium (Playwright): numbers, k control, details, safety, offline report.

Every page here shows results from a real `goldeval.evaluate` run (see browser_fixtures.py).
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
    page,
    results_file,
    scorecard_dict,
    screenshot,
    served_url,
)

pytestmark = pytest.mark.browser


def open_page(page: Any, url: str) -> None:  # noqa: F811
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=10_000)


def wait_until(page: Any, expression: str, seconds: float = 15) -> None:  # noqa: F811
    """Poll a JS expression (wait_for_function would need 'unsafe-eval', which the page's CSP forbids)."""
    for _ in range(int(seconds * 10)):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"still false after {seconds} s: {expression}")


def run_json(card: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in card["retrievers"] if r["name"] == name)


def shown_hit(page: Any, run: int = 0) -> tuple[float, str]:  # noqa: F811
    cell = page.locator(f'.mcell[data-run="{run}"][data-metric="hit"]')
    return float(cell.get_attribute("data-value")), cell.locator(".val").inner_text()


def pill(page: Any, qid: str) -> str:  # noqa: F811
    return page.locator(f'#q-body tr[data-qid="{qid}"] .pill').inner_text()


def test_moving_k_from_1_to_5_updates_hit_rate_and_flips_a_miss(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    bm25 = run_json(scorecard_dict, "bm25")
    # a question whose first right answer is at rank 2..5: a miss at k=1, a hit at k=5 (found in the JSON)
    late = next(q for q in bm25["questions"] if q["rank"] is not None and 1 < q["rank"] <= 5)
    open_page(page, served_url)
    page.click('#k-buttons button[data-k="1"]')
    value, text = shown_hit(page)
    assert text == f"{bm25['metrics']['hit@1']:.3f}" and abs(value - bm25["metrics"]["hit@1"]) < 1e-12
    assert pill(page, late["id"]) == "miss"
    assert page.locator("#k-value").inner_text() == "k = 1"
    slider = page.locator("#k-slider")
    slider.focus()
    for _ in range(4):  # move the slider itself, one step at a time, from 1 to 5
        page.keyboard.press("ArrowRight")
    assert page.locator("#k-value").inner_text() == "k = 5"
    value, text = shown_hit(page)
    assert text == f"{bm25['metrics']['hit@5']:.3f}" and abs(value - bm25["metrics"]["hit@5"]) < 1e-12
    n = bm25["n_answerable"]
    assert page.locator('.mcell[data-run="0"][data-metric="hit"] .cnt').inner_text() == f"{round(bm25['metrics']['hit@5'] * n)}/{n}"
    assert pill(page, late["id"]) == "hit"
    assert page.locator("#hit-col-head").inner_text() == "hit@5"
    assert f"bm25 puts a correct answer in the top 5 for {round(bm25['metrics']['hit@5'] * n)} of {n} questions" in page.locator("#headline").inner_text()
    page.locator("body").click(position={"x": 5, "y": 5})  # leave the slider: shortcuts work outside inputs
    page.keyboard.press("]")
    assert page.locator("#k-value").inner_text() == "k = 6"
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert page.locator("#k-value").inner_text() == "k = 4"
    assert page.page_errors == []


def test_page_metrics_equal_python_at_every_computed_k(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    open_page(page, served_url)
    names = {"hit": "hit@{k}", "recall": "recall@{k}", "precision": "precision@{k}", "ndcg": "ndcg@{k}"}
    for i, r in enumerate(scorecard_dict["retrievers"]):
        for k in scorecard_dict["k"]:
            js = page.evaluate(f"window.goldeval.metricsAt({i}, {k})")
            for key, name in names.items():
                assert js[key] == pytest.approx(r["metrics"][name.format(k=k)], abs=1e-12), (r["name"], key, k)
            assert js["mrr"] == pytest.approx(r["metrics"]["mrr"], abs=1e-12)
            assert js["p1"] == pytest.approx(r["metrics"]["precision@1"], abs=1e-12)
            for q in r["questions"]:
                if q["off_topic"]:
                    assert q["metrics"] == {}
                    continue
                jq = page.evaluate(f"window.goldeval.questionAt({i}, {q['id']!r}, {k})")
                for key, name in names.items():
                    assert jq[key] == pytest.approx(q["metrics"][name.format(k=k)], abs=1e-12), (q["id"], key, k)


@pytest.fixture()
def chunk_card(tmp_path: Path) -> dict[str, Any]:
    from browser_fixtures import evaluate_tiny

    return evaluate_tiny(tmp_path, stats=False, level="chunk")


def test_chunk_level_metrics_equal_python(page: Any, chunk_card: dict[str, Any]) -> None:  # noqa: F811
    from goldeval.web.page import results_payload
    from goldeval.web.server import make_server, start_in_thread

    assert chunk_card["level"] == "chunk" and chunk_card["corpus"]["n_passages"] > chunk_card["corpus"]["n_documents"]
    srv = make_server(results_payload([chunk_card]), port=0)
    thread = start_in_thread(srv)
    try:
        open_page(page, srv.url)
        r = chunk_card["retrievers"][0]
        for k in chunk_card["k"]:
            js = page.evaluate(f"window.goldeval.metricsAt(0, {k})")
            for key in ("hit", "recall", "precision", "ndcg"):
                assert js[key] == pytest.approx(r["metrics"][f"{key}@{k}"], abs=1e-12), (key, k)
            assert js["mrr"] == pytest.approx(r["metrics"]["mrr"], abs=1e-12)
        page.click('#q-body tr[data-qid="q02"]')
        top_ids = page.locator("#details .top-list .hr-id").all_inner_texts()
        assert top_ids == [h["id"] for h in next(q for q in r["questions"] if q["id"] == "q02")["top"]]
        assert any("#" in t for t in top_ids)  # chunk ids, not documents
        assert page.page_errors == []
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def test_details_panel_and_screenshot(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    bm25 = run_json(scorecard_dict, "bm25")
    q01 = next(q for q in bm25["questions"] if q["id"] == "q01")
    open_page(page, served_url)
    page.click('#q-body tr[data-qid="q01"]')
    details = page.locator("#details")
    assert details.locator(".d-question").inner_text() == q01["question"]
    assert "first correct answer is at rank 2" in details.locator(".d-status").inner_text()
    assert details.locator(".exp-list li").first.inner_text().startswith("#2")
    rows = details.locator(".top-list li.hitrow")
    assert rows.count() == len(q01["top"])
    first = q01["top"][0]
    assert first["id"] in rows.first.inner_text()
    assert f"{first['score']:.3f}" in rows.first.inner_text()
    assert scorecard_dict["snippets"][first["id"]]["text"][:40] in rows.first.inner_text()
    assert details.locator(".top-list li.hitrow.ok .hr-id").inner_text() == "git/stash.md"
    assert screenshot(page, "web-scorecard-details.png").stat().st_size > 10_000
    # a miss with its diagnosis (issue 4's stats stage wrote it into the JSON)
    miss = next(q for q in bm25["questions"] if q["diagnosis"])
    page.click(f'#q-body tr[data-qid="{miss["id"]}"]')
    assert miss["diagnosis"]["suggestion"] in details.locator(".diag").inner_text()
    assert page.page_errors == []


def test_a_retriever_error_is_shown_on_its_question(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    failed = next(q for q in run_json(scorecard_dict, "overlap_search")["questions"] if q["error"])
    assert failed["id"] == "q16" and "ConnectionError" in failed["error"]
    open_page(page, served_url)
    page.click('.chip[data-run="1"]')
    row = page.locator('#q-body tr[data-qid="q16"]')
    assert "retriever error" in row.inner_text() and "error" in row.locator("td").nth(4).inner_text()
    row.click()
    assert failed["error"] in page.locator("#details .box.error").inner_text()
    assert "1 error" in page.locator('.mt-run[data-run="1"]').inner_text()


def test_no_layout_jump_when_k_moves(page: Any, served_url: str) -> None:  # noqa: F811
    open_page(page, served_url)

    def boxes() -> list[tuple[float, float, float, float]]:
        out = []
        for selector in (".mcell", ".mt-head", "#q-table th", "#q-body tr", "#k-value", "#controls"):
            for handle in page.locator(selector).all():
                b = handle.bounding_box()
                out.append((round(b["x"], 1), round(b["y"], 1), round(b["width"], 1), round(b["height"], 1)))
        return out

    page.click('#k-buttons button[data-k="1"]')
    before = boxes()
    for k in (3, 5, 10, 1):
        page.click(f'#k-buttons button[data-k="{k}"]')
        assert boxes() == before, f"layout moved at k={k}"


def test_filters_and_sorting(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    bm25 = run_json(scorecard_dict, "bm25")
    open_page(page, served_url)
    page.click('#k-buttons button[data-k="1"]')
    page.click('#filter-mode button[data-mode="miss"]')
    shown = page.locator("#q-body tr").evaluate_all("rows => rows.map(r => r.dataset.qid)")
    expected = [q["id"] for q in bm25["questions"] if not q["off_topic"] and not q["metrics"]["hit@1"]]
    assert shown == expected
    page.click('#filter-mode button[data-mode="offtopic"]')
    shown = page.locator("#q-body tr").evaluate_all("rows => rows.map(r => r.dataset.qid)")
    assert shown == [q["id"] for q in bm25["questions"] if q["off_topic"]]
    page.click('#filter-mode button[data-mode="all"]')
    page.select_option("#filter-tag", "time")
    shown = page.locator("#q-body tr").evaluate_all("rows => rows.map(r => r.dataset.qid)")
    assert shown == [q["id"] for q in bm25["questions"] if "time" in q["tags"]]
    page.select_option("#filter-tag", "")
    page.click('#q-table th[data-sort="id"]')
    page.click('#q-table th[data-sort="id"]')  # second click: descending
    shown = page.locator("#q-body tr").evaluate_all("rows => rows.map(r => r.dataset.qid)")
    assert shown == sorted((q["id"] for q in bm25["questions"]), reverse=True)
    page.fill("#filter-text", "spreadsheet")
    assert page.locator("#q-body tr").evaluate_all("rows => rows.map(r => r.dataset.qid)") == ["q05"]


def test_compare_shows_the_questions_that_flipped(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    a = run_json(scorecard_dict, "bm25")
    b = run_json(scorecard_dict, "overlap_search")
    b_by_id = {q["id"]: q for q in b["questions"]}
    a_only = [q["id"] for q in a["questions"] if not q["off_topic"] and q["metrics"]["hit@5"] and not b_by_id[q["id"]]["metrics"]["hit@5"]]
    b_only = [q["id"] for q in a["questions"] if not q["off_topic"] and not q["metrics"]["hit@5"] and b_by_id[q["id"]]["metrics"]["hit@5"]]
    assert a_only, "the tiny evaluation should have questions only bm25 finds in the top 5"
    open_page(page, served_url)
    page.click('#tabs [data-tab="compare"]')
    cols = page.locator(".flip-col")
    got_a = cols.nth(0).locator("li .mono").all_inner_texts()
    got_b = cols.nth(1).locator("li .mono").all_inner_texts()
    assert got_a == a_only and got_b == b_only
    assert f"by {len(a_only) - len(b_only)} question" in page.locator("#cmp-summary").inner_text()
    # issue 4's paired statistics for this pair, at the current k
    assert "hit@5" in page.locator(".verdict-table").inner_text()
    screenshot(page, "web-compare.png")
    cols.nth(0).locator("li").first.click()  # opens that question in the questions tab
    assert page.locator("#details .d-question").inner_text() == next(q["question"] for q in a["questions"] if q["id"] == a_only[0])
    assert page.page_errors == []


def test_off_topic_threshold_counts(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    r = run_json(scorecard_dict, "overlap_search")
    open_page(page, served_url)
    page.click('.chip[data-run="1"]')
    page.click('#tabs [data-tab="offtopic"]')
    threshold = 3.5
    page.evaluate(f"""() => {{ const s = document.getElementById('ot-threshold');
        s.value = '{threshold}'; s.dispatchEvent(new Event('input')); }}""")
    value = float(page.locator("#ot-threshold").input_value())

    def refused(qs: list[dict[str, Any]]) -> int:
        return sum(1 for q in qs if q["top1_score"] is None or q["top1_score"] < value)

    answerable = [q for q in r["questions"] if not q["off_topic"]]
    off = [q for q in r["questions"] if q["off_topic"]]
    stats = page.locator(".ot-stats .stat-n").all_inner_texts()
    assert stats[0] == f"{refused(answerable)} of {len(answerable)}"
    assert stats[1] == f"{refused(off)} of {len(off)}"
    assert stats[2] == str(len(off) - refused(off))
    highest = max((q for q in off if q["top1_score"] is not None), key=lambda q: q["top1_score"])
    assert highest["question"] in page.locator("#ot-body").inner_text()
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
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    context.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_())
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("request", lambda req: requests.append(req.url))
    try:
        open_page(pg, report_file.as_uri())
        bm25 = run_json(scorecard_dict, "bm25")
        _, text = shown_hit(pg)
        assert text == f"{bm25['metrics']['hit@5']:.3f}"
        pg.click('#k-buttons button[data-k="1"]')
        assert shown_hit(pg)[1] == f"{bm25['metrics']['hit@1']:.3f}"
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
    from goldeval.web.page import results_payload
    from goldeval.web.server import make_server, start_in_thread

    srv = make_server(results_payload([bare(scorecard_dict), scorecard_dict], names=["before.json", "after.json"]), port=0)
    thread = start_in_thread(srv)
    yield srv.url
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def test_degrades_without_stats_and_compares_two_files(page: Any, bare_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    open_page(page, bare_url)
    labels = page.locator("#run-picker .chip").all_inner_texts()
    assert labels == ["before.json · bm25", "before.json · overlap_search", "after.json · bm25", "after.json · overlap_search"]
    assert page.locator('.mcell[data-run="0"] .whisker').evaluate_all("ws => ws.every(w => w.hidden)")
    assert page.locator('.mcell[data-run="2"] .whisker').evaluate_all("ws => ws.some(w => !w.hidden)")
    for tab in ("compare", "offtopic", "breakdown"):
        page.click(f'#tabs [data-tab="{tab}"]')
    page.click('#tabs [data-tab="compare"]')
    page.select_option("#cmp-a", "0")
    page.select_option("#cmp-b", "2")  # the same retriever in two files: nothing flipped
    assert "tie at hit@5" in page.locator("#cmp-summary").inner_text()
    assert page.page_errors == []


def test_the_address_keeps_the_view(page: Any, served_url: str) -> None:  # noqa: F811
    open_page(page, served_url + "#k=1&run=1&show=miss&q=q01")
    assert page.locator("#k-value").inner_text() == "k = 1"
    assert page.locator('.chip[data-run="1"]').get_attribute("aria-pressed") == "true"
    assert page.locator('#filter-mode button[data-mode="miss"]').get_attribute("aria-pressed") == "true"
    assert page.locator("#details .d-question").inner_text().startswith("How do I switch branches")
    page.click('#k-buttons button[data-k="3"]')
    page.click('#tabs [data-tab="offtopic"]')
    assert page.evaluate("location.hash") == "#k=3&tab=offtopic&run=1&show=miss&q=q01"
    page.goto("about:blank")  # a new load: a hash change alone would not reload the page
    open_page(page, served_url + "#k=999&run=7&tab=<script>")  # nonsense is ignored, not trusted
    assert page.locator("#k-value").inner_text() == "k = 20"
    assert page.locator('.chip[data-run="0"]').get_attribute("aria-pressed") == "true"
    assert page.page_errors == []


def test_an_open_page_follows_a_rerun_of_its_results_file(page: Any, tmp_path: Path, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    from browser_fixtures import evaluate_tiny, overlap_search
    from goldeval.report.scorecard import Scorecard
    from goldeval.web.live import ResultsFiles
    from goldeval.web.server import make_server, start_in_thread

    path = tmp_path / "results.json"
    Scorecard.from_dict(scorecard_dict).save(path)
    srv = make_server(ResultsFiles([path]), port=0)
    thread = start_in_thread(srv)
    try:
        open_page(page, srv.url)
        page.click('#k-buttons button[data-k="1"]')
        page.click('#q-body tr[data-qid="q01"]')
        assert shown_hit(page)[1] == f"{run_json(scorecard_dict, 'bm25')['metrics']['hit@1']:.3f}"
        # the user re-runs `goldeval eval --json results.json` with another retriever
        rerun = evaluate_tiny(tmp_path, stats=False, retrievers=[overlap_search])
        Scorecard.from_dict(rerun).save(path)
        wait_until(page, "window.goldeval.version === '2'")
        assert page.locator("#run-picker .chip").all_inner_texts() == ["overlap_search"]
        assert shown_hit(page)[1] == f"{rerun['retrievers'][0]['metrics']['hit@1']:.3f}"
        assert page.locator("#k-value").inner_text() == "k = 1"  # the reader keeps their place
        assert page.locator("#details .d-question").inner_text().startswith("How do I switch branches")
        assert "reloaded" in page.locator("#live").inner_text()
        # a broken write keeps the last good results on screen, and says so
        path.write_text("{ not json", encoding="utf-8")
        page.wait_for_selector("#live.warn", timeout=15_000)
        assert "could not reload the results" in page.locator("#live").inner_text()
        assert shown_hit(page)[1] == f"{rerun['retrievers'][0]['metrics']['hit@1']:.3f}"
        assert page.page_errors == []
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)
