"""The scorecard page in a real Chromium: a retriever that returned fewer than k (issue 18 item 2: its
metrics past what came back read the terminal's `n/a`, its misses "not in the N returned", never ">20"),
the k slider and the plot of the metrics against k (issue 24), and the small fixes of issue 24.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import (  # noqa: F401 - fixtures
    browser,
    evaluate_tiny,
    new_page,
    open_page,
    overlap_search,
    page,
    run_json,
    screenshot,
    serving,
    set_k,
    shown_metrics,
    wait_until,
)

pytestmark = pytest.mark.browser
CURVES = ("hit", "recall", "precision", "ndcg")
SHORT = 4
"""What the cut-short retriever returns at most, whatever goldeval asks for (LangChain's BM25Retriever's k)."""


def short_search(question: str, k: int) -> list[tuple[str, float]]:
    """A user's search function with its own k of 4, as LangChain's BM25Retriever has."""
    return overlap_search(question, SHORT)


@pytest.fixture(scope="module")
def short_card(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return evaluate_tiny(tmp_path_factory.mktemp("short"), stats=True, retrievers=["bm25", short_search])


@pytest.fixture(scope="module")
def short_url(short_card: dict[str, Any]) -> Iterator[str]:
    from goldeval.report.page import results_payload

    with serving(results_payload([short_card])) as url:
        yield url


def terminal_text(card: dict[str, Any]) -> str:
    """What `goldeval eval` prints for these results (the terminal scorecard, the page's reference)."""
    import io

    from rich.console import Console

    from goldeval.report.terminal import render
    from goldeval.scorecard import Scorecard

    out = io.StringIO()
    render(Scorecard.from_dict(card), show_misses=True, console=Console(file=out, width=200, color_system=None))
    return out.getvalue()


def test_a_retriever_cut_short_shows_unmeasurable_metrics_and_where_its_misses_are(page: Any, short_url: str, short_card: dict[str, Any]) -> None:  # noqa: F811
    short = run_json(short_card, "short_search")
    assert short["returned"]["cut_short"] and short["returned"]["max"] == SHORT
    terminal = terminal_text(short_card)
    assert "n/a" in terminal and "not in the" in terminal  # the words the page must use
    open_page(page, short_url)
    assert "short_search: returned at most 4 results per question" in page.locator("#returned-note").inner_text()
    for k in range(1, short_card["depth"] + 1):
        set_k(page, k)
        shown = shown_metrics(page)
        for key in CURVES:
            value, text = shown[(1, key)]
            if k > SHORT:  # past what came back: the terminal's word, never a number
                assert (value, text) == ("", "n/a"), (key, k)
                if f"{key}@{k}" in short["metrics"]:
                    assert f"{key}@{k}" in short["returned"]["unmeasurable"]
            else:
                assert float(value) == short["curves"][key][k - 1] and text != "n/a", (key, k)
            assert float(shown[(0, key)][0]) == run_json(short_card, "bm25")["curves"][key][k - 1]  # bm25 is complete
        assert shown[(1, "mrr")][1] == f"{short['metrics']['mrr']:.3f}"  # no cut-off: measured
    page.click('.chip[data-run="1"]')
    ranks = dict(page.locator("#q-body tr").evaluate_all("rs => rs.map(r => [r.dataset.qid, r.querySelector('td.rank').textContent])"))
    misses = [q for q in short["questions"] if not q["off_topic"] and q["rank"] is None and not q["error"]]
    assert misses, "the cut-short retriever misses some question"
    for q in misses:
        assert ranks[q["id"]] == f"not in the {q['returned']} returned", q["id"]
    assert not any(text.startswith(">") for text in ranks.values())
    page.click(f'#q-body tr[data-qid="{misses[0]["id"]}"]')
    assert f"not in the {misses[0]['returned']} returned" in page.locator("#details .d-status").inner_text()
    badges = page.locator("#details .exp-list .rank-badge").all_inner_texts()
    assert badges and all(b == f"not in the {misses[0]['returned']} returned" for b in badges)
    page.click('.chip[data-run="0"]')  # bm25 is one of goldeval's own: a short list of it is complete
    bm25_ranks = page.locator("#q-body td.rank").all_inner_texts()
    assert not any("returned" in t for t in bm25_ranks)
    assert page.page_errors == []


def plotted(page: Any) -> list[dict[str, Any]]:  # noqa: F811
    """Every point of the plot: its panel's metric and axes, its run, k, value and position."""
    return page.locator("#k-plot circle.plot-pt").evaluate_all("""ps => ps.map(p => {
        const svg = p.closest('svg'); const g = p.closest('g');
        return {metric: svg.dataset.metric, run: Number(g.dataset.run), k: Number(p.dataset.k), value: Number(p.dataset.value),
                cx: Number(p.getAttribute('cx')), cy: Number(p.getAttribute('cy')), cur: p.classList.contains('cur'),
                x1: Number(svg.dataset.x1), xmax: Number(svg.dataset.xmax), kmax: Number(svg.dataset.kmax),
                y0: Number(svg.dataset.y0), y1: Number(svg.dataset.y1)};
    })""")


def test_the_slider_moves_k_and_the_plot_shows_the_results_file_at_every_k(page: Any, short_url: str, short_card: dict[str, Any]) -> None:  # noqa: F811
    depth = short_card["depth"]
    runs = short_card["retrievers"]
    open_page(page, short_url)
    points = plotted(page)
    assert {p["metric"] for p in points} == {"hit", "recall", "ndcg", "mrr", "map"}
    for p in points:  # where each point sits: k along x, the value up y, on the panel's own axes
        assert p["cx"] == pytest.approx(p["x1"] + (p["k"] - 1) / (p["kmax"] - 1) * (p["xmax"] - p["x1"]), abs=0.01)
        assert p["cy"] == pytest.approx(p["y0"] + p["value"] * (p["y1"] - p["y0"]), abs=0.01)
    for k in range(1, depth + 1):
        page.locator("#k-slider").fill(str(k))  # dragged: the slider's input events
        assert page.locator("#k-input").input_value() == str(k)
        assert page.evaluate("window.goldeval.state.k") == k
        points = plotted(page)
        for i, r in enumerate(runs):
            measurable = r["returned"]["max"] if r["returned"]["cut_short"] else depth
            for key in ("hit", "recall", "ndcg"):
                mine = {p["k"]: p for p in points if p["run"] == i and p["metric"] == key}
                assert sorted(mine) == list(range(1, measurable + 1)), (r["name"], key)  # nothing past what came back
                if k <= measurable:
                    assert mine[k]["cur"] and mine[k]["value"] == r["curves"][key][k - 1], (r["name"], key, k)
                assert [p["k"] for p in mine.values() if p["cur"]] == ([k] if k <= measurable else [])
            for key in ("mrr", "map"):  # flat: the same value at every k
                flat = [p for p in points if p["run"] == i and p["metric"] == key]
                assert len(flat) == depth and {p["value"] for p in flat} == {r["metrics"][key]}
        line = page.locator('#k-plot svg[data-metric="hit"] .plot-k')
        x1 = float(page.locator('#k-plot svg[data-metric="hit"]').get_attribute("data-x1"))
        xmax = float(page.locator('#k-plot svg[data-metric="hit"]').get_attribute("data-xmax"))
        assert float(line.get_attribute("x1")) == pytest.approx(x1 + (k - 1) / (depth - 1) * (xmax - x1), abs=0.01)
    bands = page.locator("#k-plot rect.plot-band").evaluate_all(
        "rs => rs.map(r => [r.closest('svg').dataset.metric, Number(r.closest('g').dataset.run), Number(r.dataset.lo), Number(r.dataset.hi)])")
    expected = []
    for i, r in enumerate(runs):
        for key in ("hit", "recall", "ndcg"):
            expected += [[key, i, *r["intervals"][f"{key}@{k}"]] for k in short_card["k"]
                         if f"{key}@{k}" in r["intervals"] and f"{key}@{k}" not in r["returned"]["unmeasurable"]]
        expected += [[key, i, *r["intervals"][key]] for key in ("mrr", "map") if key in r["intervals"]]
    assert expected and sorted(map(tuple, bands)) == sorted(map(tuple, expected))
    screenshot(page, "page-k-plot.png")
    assert page.page_errors == []


def test_an_empty_or_invalid_k_and_enter_keeps_k(page: Any, short_url: str) -> None:  # noqa: F811
    open_page(page, short_url)
    set_k(page, 7)
    page.fill("#k-input", "")
    page.press("#k-input", "Enter")
    assert page.evaluate("window.goldeval.state.k") == 7 and page.locator("#k-input").input_value() == "7"
    page.locator("#k-input").evaluate("i => { i.type = 'text'; }")  # what a browser without number fields sends
    page.fill("#k-input", "abc")
    page.press("#k-input", "Enter")
    assert page.evaluate("window.goldeval.state.k") == 7
    assert page.page_errors == []


def test_details_name_the_retriever_and_rank_descending_keeps_off_topic_last(page: Any, short_url: str, short_card: dict[str, Any]) -> None:  # noqa: F811
    open_page(page, short_url)
    page.click('.chip[data-run="1"]')
    page.click('#q-body tr[data-qid="q02"]')
    assert "short_search" in page.locator("#details .d-run").inner_text()
    page.click('#q-table th[data-sort="rank"]')
    page.click('#q-table th[data-sort="rank"]')  # descending
    assert page.locator('#q-table th[data-sort="rank"]').get_attribute("aria-sort") == "descending"
    order = page.locator("#q-body tr").evaluate_all("rs => rs.map(r => r.dataset.qid)")
    off = {q["id"] for q in run_json(short_card, "short_search")["questions"] if q["off_topic"]}
    assert set(order[-len(off):]) == off  # off-topic questions have no rank: last, whichever way
    never = [q["id"] for q in run_json(short_card, "short_search")["questions"] if not q["off_topic"] and q["rank"] is None]
    assert set(order[:len(never)]) == set(never)  # the never-retrieved misses rank lowest: first, descending
    assert page.page_errors == []


def test_the_questions_words_are_highlighted_in_the_details(page: Any, short_url: str, short_card: dict[str, Any]) -> None:  # noqa: F811
    from goldeval.words import highlight_spans

    q = next(x for x in run_json(short_card, "bm25")["questions"] if x["id"] == "q02")
    snippets = short_card["snippets"]
    open_page(page, short_url)
    page.click('#q-body tr[data-qid="q02"]')
    shown = page.locator("#details .top-list .hitrow").evaluate_all(
        "ls => ls.map(l => [l.querySelector('.hr-id').textContent, [...l.querySelectorAll('.hr-text mark')].map(m => m.textContent)])")
    assert shown
    some = False
    for hit_id, marks in shown:
        text = snippets[hit_id]["text"]
        expected = [text[s:e] for s, e in highlight_spans(q["question"], text)]  # the one rule, goldeval.words
        assert marks == expected, hit_id
        some = some or bool(marks)
    assert some, "some snippet holds the question's words"
    assert page.page_errors == []


def test_390_px_the_metrics_and_the_plot_fit(browser: Any, short_url: str, tmp_path: Path) -> None:  # noqa: F811
    context, pg = new_page(browser, viewport={"width": 390, "height": 844})
    try:
        open_page(pg, short_url)
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390
        for selector in ("#k-slider", "#k-plot svg", ".mcell .val"):
            b = pg.locator(selector).first.bounding_box()
            assert b and b["x"] >= 0 and b["x"] + b["width"] <= 390, selector
        screenshot(pg, "page-k-plot-390.png")
        assert pg.page_errors == []
    finally:
        context.close()


def downloaded_csv(page: Any, button: str) -> list[dict[str, str]]:  # noqa: F811
    import csv

    with page.expect_download() as info:
        page.click(button)
    path = info.value.path()
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_csv_exports_are_the_results_files_numbers_at_the_current_k(page: Any, short_url: str, short_card: dict[str, Any]) -> None:  # noqa: F811
    runs = short_card["retrievers"]
    open_page(page, short_url)
    page.click('.chip[data-run="1"]')
    for k in (3, 5):
        set_k(page, k)
        rows = downloaded_csv(page, "#export-questions")
        questions = run_json(short_card, "short_search")["questions"]
        assert [r["id"] for r in rows] == [q["id"] for q in questions]  # every row shown, in the order on screen
        for row, q in zip(rows, questions, strict=True):
            assert row["retriever"] == "short_search" and row["question"] == q["question"]
            if q["off_topic"]:
                assert (row[f"hit@{k}"], row["rank"]) == ("off-topic", "")
            else:
                assert float(row[f"hit@{k}"]) == q["metrics"][f"hit@{k}"], (q["id"], k)
                assert row["rank"] == (str(q["rank"]) if q["rank"] is not None
                                       else "error" if q["error"] else f"not in the {q['returned']} returned")
            assert row["expected"] == " ".join(q["expected"])
            assert (float(row["ranked first score"]) == q["top"][0]["score"]) if q["top"] else row["ranked first score"] == ""
        metrics = downloaded_csv(page, "#export-metrics")
        assert len(metrics) == len(runs) * 6
        for row in metrics:
            r = run_json(short_card, row["retriever"])
            name = row["metric"]
            key = name.split("@")[0]
            if name in r["returned"]["unmeasurable"]:
                assert (row["value"], row["interval low"]) == ("n/a", ""), name
                continue
            value = r["curves"][key][k - 1] if "@" in name else r["metrics"][name]
            assert float(row["value"]) == value and float(row["value"]) == r["metrics"][name], (row, k)
            assert [float(row["interval low"]), float(row["interval high"])] == r["intervals"][name]
            assert int(row["questions"]) == r["n_headline"]
    page.click('#filter-mode button[data-mode="miss"]')
    rows = downloaded_csv(page, "#export-questions")  # what is shown: the misses only
    assert rows and {r["id"] for r in rows} == {q["id"] for q in run_json(short_card, "short_search")["questions"]
                                                  if not q["off_topic"] and not q["metrics"]["hit@5"]}
    assert page.page_errors == []


def test_copy_link_gives_an_address_that_reopens_the_view(browser: Any, short_url: str) -> None:  # noqa: F811
    context, pg = new_page(browser, viewport={"width": 1366, "height": 900}, permissions=["clipboard-read", "clipboard-write"])
    try:
        open_page(pg, short_url)
        pg.click('.chip[data-run="1"]')
        set_k(pg, 7)
        pg.click('#tabs [data-tab="compare"]')
        pg.click("#copy-link")  # the clipboard's write is a promise: the status is set when it resolves
        wait_until(pg, "document.querySelector('#copy-status').textContent !== ''")
        assert pg.locator("#copy-status").inner_text() == "link copied"
        link = pg.evaluate("navigator.clipboard.readText()")
        assert link.startswith(short_url) and link == pg.url
        other = context.new_page()
        open_page(other, link)
        state = other.evaluate("[window.goldeval.state.k, window.goldeval.state.tab, window.goldeval.state.active]")
        assert state == [7, "compare", 1]
        assert pg.page_errors == []
    finally:
        context.close()
