"""Screenshots of the scorecard page's views for docs/web.md, made with Debian's Chromium (`make chromium`).

    .venv/bin/python tools/screenshots.py [OUT_DIR]      # default: docs/img

It evaluates BM25 and a search function with its own k of 4 (as LangChain's BM25Retriever has, so the
page shows what a list cut short looks like) on the shipped examples/data corpus and golden set, writes
the offline page (`goldeval.report.html.render_html`) and photographs: the metric table with the plot
against k, the side-by-side rank table, the details of a question with its words marked, and the top of
the page at 390 px. Nothing is fetched; the page opens from a file.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def results() -> dict[str, Any]:
    """The evaluation the screenshots show (with statistics: intervals, verdicts, diagnoses)."""
    import goldeval
    from goldeval import Corpus, GoldenSet

    corpus = Corpus.load("examples/data/corpus")  # relative to the repository: no local path in a picture
    golden = GoldenSet.load("examples/data/golden_example.jsonl")
    first = goldeval.evaluate(["bm25"], golden, corpus=corpus, k=(1, 3, 5), depth=10)
    ranked = {q.question: [(h.id, h.score) for h in q.top] for q in first.retrievers[0].questions}

    def four_only(question: str, k: int) -> list[tuple[str, float]]:
        return ranked.get(question, [])[:4]

    card = goldeval.evaluate({"bm25": "bm25", "four_only": four_only}, golden, corpus=corpus, k=(1, 3, 5), depth=10)
    return goldeval.compare(card, resamples=1000, seed=0).to_dict()


def shoot(page_file: Path, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    shots: list[Path] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1366, "height": 900})
        page.goto(page_file.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        for name, selector, action in (
            ("web-scorecard-plot.png", "#scorecard", None),
            ("web-side-by-side.png", "#tab-side", "#tabs [data-tab=side]"),
            ("web-details-words.png", "#details", "#tabs [data-tab=questions]"),
        ):
            if action:
                page.click(action)
            if name == "web-details-words.png":
                page.locator("#q-body tr").first.click()
            path = out / name
            page.locator(selector).screenshot(path=str(path))
            shots.append(path)
        narrow = browser.new_page(viewport={"width": 390, "height": 844})
        narrow.goto(page_file.as_uri())
        narrow.wait_for_selector("body[data-ready=true]")
        path = out / "web-390.png"
        narrow.screenshot(path=str(path))
        shots.append(path)
        browser.close()
    return shots


def main(argv: list[str]) -> int:
    from goldeval.report.html import render_html
    from goldeval.report.page import results_payload

    out = (Path(argv[0]) if argv else REPO / "docs" / "img").resolve()
    os.chdir(REPO)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "scorecard.html"
        page_file.write_text(render_html(results_payload([results()], names=["example"])), encoding="utf-8")
        for path in shoot(page_file, out):
            print(f"{path} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
