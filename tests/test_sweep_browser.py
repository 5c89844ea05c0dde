"""The sweep view in a real Chromium: it shows what Python wrote (every configuration, the heatmap's
squares, the Pareto front of each cost) under its own Content-Security-Policy, with no script error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import browser, page, screenshot  # noqa: F401  (pytest fixtures)
from goldeval.report.sweep_html import write_sweep_html
from goldeval.sweep import Grid, Settings, SweepResult, sweep
from sweep_fixtures import tiny_corpus, tiny_golden

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def result_and_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[SweepResult, Path]:
    folder = tmp_path_factory.mktemp("sweep-view")
    grid = Grid(chunking=("none", "120:30"), retriever=("bm25", "dense", "hybrid"), model=("wordllama",),
                fusion=("rrf",), weight=(0.2, 0.5, 0.8))
    result = sweep(grid, tiny_golden(), corpus=tiny_corpus(), settings=Settings(k=(1, 3, 5), headline="mrr", resamples=500),
                   workspace=folder / "ws", record_history=False)
    return result, write_sweep_html(result, folder / "sweep.html")


def open_view(page: Any, path: Path) -> Any:  # noqa: F811
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text) if m.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_selector("#cells tbody tr")
    page.console_errors = messages
    return page


def test_table_lists_every_configuration_best_first(result_and_page: tuple[SweepResult, Path], page: Any) -> None:  # noqa: F811
    result, path = result_and_page
    view = open_view(page, path)
    rows = view.locator("#cells tbody tr")
    assert rows.count() == len(result.cells) == 2 * (1 + 1 + 3)
    assert rows.nth(0).get_attribute("data-label") == result.best
    assert rows.nth(0).locator(".tag").inner_text() == "best"
    for i, cell in enumerate(result.cells):
        assert rows.nth(i).get_attribute("data-label") == cell.label
        expected = "best" if cell.vs_best is None else "within noise" if cell.vs_best.within_noise else "worse"
        assert rows.nth(i).locator(".tag").inner_text() == expected
        assert rows.nth(i).locator(".value .v").inner_text() == f"{cell.metrics[result.primary]:.3f}"
    assert view.locator("#summary li").count() >= 2
    assert not view.page_errors and not view.console_errors
    screenshot(view, "sweep-view.png")


def test_heatmap_shows_the_squares_python_computed(result_and_page: tuple[SweepResult, Path], page: Any) -> None:  # noqa: F811
    result, path = result_and_page
    view = open_view(page, path)
    options = view.locator("#hm-pair option")
    assert options.count() == len(result.heatmaps)
    index = next(i for i, m in enumerate(result.heatmaps) if (m["rows"], m["cols"]) == ("chunking", "weight"))
    view.select_option("#hm-pair", str(index))
    m = result.heatmaps[index]
    table = view.locator("#heatmap")
    assert table.locator("tr").count() == 1 + len(m["row_values"])
    for i in range(len(m["row_values"])):
        for j in range(len(m["col_values"])):
            cell = table.locator("tr").nth(1 + i).locator("td").nth(j)
            value = m["values"][i][j]
            assert cell.inner_text().startswith("–" if value is None else f"{value:.3f}")
            if value is not None:
                assert cell.get_attribute("title") == m["labels"][i][j]


def test_pareto_plot_marks_the_front_of_each_cost(result_and_page: tuple[SweepResult, Path], page: Any) -> None:  # noqa: F811
    result, path = result_and_page
    view = open_view(page, path)
    for axis in ("latency_p50_ms", "index_bytes", "embedding_seconds"):
        view.select_option("#pareto-axis", axis)
        measured = [c for c in result.cells if c.cost.value(axis) is not None]
        assert view.locator("#pareto circle.pt").count() == len(measured)
        front = view.locator("#pareto circle.on-front")
        assert sorted(front.nth(i).get_attribute("data-label") for i in range(front.count())) == sorted(result.pareto[axis])
        assert view.locator("#front li").count() == len(result.pareto[axis])
    assert not view.page_errors and not view.console_errors


def test_the_table_sorts_by_any_column_and_the_heatmap_offers_only_dials_with_several_values(result_and_page: tuple[SweepResult, Path], page: Any) -> None:  # noqa: F811
    result, path = result_and_page
    view = open_view(page, path)
    labels = lambda: view.locator("#cells tbody tr").evaluate_all("rs => rs.map(r => r.dataset.label)")  # noqa: E731
    head = view.locator("#cells thead th", has_text=str(result.primary)).first
    head.click()  # ascending on the primary metric: the worst first
    by_value = sorted(result.cells, key=lambda c: (c.metrics[result.primary], result.cells.index(c)))
    assert labels() == [c.label for c in by_value]
    assert head.get_attribute("aria-sort") == "ascending"
    head.click()
    assert [view.locator("#cells tbody tr").nth(0).get_attribute("data-label")] == [result.best]
    view.locator("#cells thead th", has_text="p50 ms").click()
    p50 = [c.cost.value("latency_p50_ms") for c in result.cells]
    shown = [p50[[c.label for c in result.cells].index(label)] for label in labels()]
    assert shown == sorted(shown)
    view.locator("#cells thead th").first.click()  # "#": best first again
    assert labels() == [c.label for c in result.cells]
    pairs = view.locator("#hm-pair option").all_inner_texts()  # one model, one fusion: no axis of theirs
    assert pairs and not any("model" in p or "fusion" in p for p in pairs)
    assert not view.page_errors and not view.console_errors


def test_390_px_the_metric_is_on_screen(result_and_page: tuple[SweepResult, Path], browser: Any) -> None:  # noqa: F811
    from browser_fixtures import new_page

    _, path = result_and_page
    context, pg = new_page(browser, viewport={"width": 390, "height": 844})
    try:
        view = open_view(pg, path)
        box = view.locator("#cells tbody tr").first.locator(".value .v").bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert view.evaluate("document.documentElement.scrollWidth") <= 390  # the table scrolls, not the page
        screenshot(view, "sweep-390.png")
        assert not view.page_errors and not view.console_errors
    finally:
        context.close()
