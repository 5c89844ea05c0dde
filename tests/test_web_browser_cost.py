"""What the API models cost, on the scorecard page in a real Chromium and in the Markdown report (issue 19): a
real evaluation through the stand-in server (tests/api_standin.py) with a priced rerank API, an unpriced
embedding API alone and inside a hybrid, and BM25 calling none. The page lists what the results JSON's
`config.api` records hold (through `views.api`, prepared in Python), and computes nothing: a number changed in
the payload is shown as changed."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api_standin import standin
from browser_fixtures import browser, open_page, page, screenshot, serving, tiny_corpus, tiny_golden  # noqa: F401
from goldeval.retrievers.encoders.registry import load_encoder

pytestmark = [pytest.mark.browser, pytest.mark.api, pytest.mark.models]

RERANK = "rerank:bm25>api:rerank-v3.5?url={url}/v1/rerank&top=5"
DENSE = "dense:openai:minilm-standin"
HYBRID = f"hybrid:bm25+{DENSE}"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], int]:
    """The tiny evaluation through the stand-in; and how many rerank requests the server answered."""
    from goldeval.evaluation import evaluate

    minilm = load_encoder("minilm", progress=False)
    with standin(minilm) as server:
        rerank = RERANK.format(url=server.url)
        card = evaluate(["bm25", rerank, DENSE, HYBRID], tiny_golden(), corpus=tiny_corpus(), k=(1, 3, 5, 10),
                        depth=20, workspace=tmp_path_factory.mktemp("ws"), progress=False,
                        options={"base_url": f"{server.url}/v1"})
        reranked = sum(1 for path in server.paths if path == "/v1/rerank")
    return card.to_dict(), reranked


@pytest.fixture(scope="module")
def url(evaluated: tuple[dict[str, Any], int]) -> Iterator[str]:
    from goldeval.report.page import results_payload

    with serving(results_payload([evaluated[0]])) as address:
        yield address


def _rows(pg: Any) -> list[dict[str, str]]:
    return pg.locator("#api-cost tbody tr").evaluate_all(
        "rows => rows.map(r => ({run: r.dataset.run, role: r.dataset.role, cells: [...r.cells].map(c => c.textContent.trim())}))")


def test_the_page_lists_each_api_models_usage_and_dollars_as_the_results_record_them(
        page: Any, url: str, evaluated: tuple[dict[str, Any], int]) -> None:  # noqa: F811
    card, reranked = evaluated
    names = [r["name"] for r in card["retrievers"]]
    reranker = card["retrievers"][1]["config"]["reranker"]["api"]
    assert reranked > 0 and reranker["requests"] == reranked  # counted at the server
    assert reranker["dollars"] == pytest.approx(reranked * 2.00 / 1000)  # rerank-v3.5: $2 a thousand searches
    open_page(page, url)
    rows = _rows(page)
    screenshot(page, "api-cost.png")
    by_run: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_run.setdefault(names[int(row["run"])], []).append(row)
    assert "bm25" not in by_run  # no API, no row
    assert [r["role"] for r in by_run[names[1]]] == ["rerank"]
    assert [r["role"] for r in by_run[DENSE]] == ["embedding"]
    assert [r["role"] for r in by_run[HYBRID]] == ["embedding"]  # its dense part's record
    assert by_run[HYBRID][0]["cells"][1] == f"openai:minilm-standin (embedding) (the same requests as {DENSE}: sent once)"
    assert by_run[HYBRID][0]["cells"][2] == by_run[DENSE][0]["cells"][2]
    assert by_run[DENSE][0]["cells"][1] == "openai:minilm-standin (embedding)"
    cells = by_run[names[1]][0]["cells"]
    assert cells[1] == "api:rerank-v3.5 (rerank)" and cells[2] == f"{reranker['requests']:,}"
    assert cells[3] == f"0 (+{reranker['tokens_estimated']:,} estimated)"
    assert cells[5] == f"${reranker['dollars']:,.4f} at list price"
    dense = card["retrievers"][2]["config"]["api"]
    assert by_run[DENSE][0]["cells"][2] == f"{dense['requests']:,}" and dense["requests"] > 0
    assert by_run[DENSE][0]["cells"][5] == "no price in the table"  # the stand-in's model has no list price
    assert page.page_errors == []


def test_the_page_computes_no_cost_a_changed_record_is_shown_changed(
        page: Any, evaluated: tuple[dict[str, Any], int]) -> None:  # noqa: F811
    from goldeval.report.page import results_payload

    card = copy.deepcopy(evaluated[0])
    card["retrievers"][1]["config"]["reranker"]["api"].update(requests=1234, dollars=98765.4321)
    with serving(results_payload([card])) as address:
        open_page(page, address)
        cells = next(r["cells"] for r in _rows(page) if r["role"] == "rerank")
    assert cells[2] == "1,234" and cells[5] == "$98,765.4321 at list price"


def test_a_run_without_an_api_shows_no_cost_box(page: Any, tmp_path: Path) -> None:  # noqa: F811
    from goldeval.evaluation import evaluate
    from goldeval.report.page import results_payload

    card = evaluate(["bm25"], tiny_golden(), corpus=tiny_corpus(), k=(1, 5), depth=10, workspace=tmp_path,
                    progress=False).to_dict()
    with serving(results_payload([card])) as address:
        open_page(page, address)
        assert page.locator("#api-cost").is_hidden()
    assert page.page_errors == []


def test_the_markdown_report_says_what_the_terminal_says(evaluated: tuple[dict[str, Any], int]) -> None:
    from goldeval.report.markdown import scorecard_markdown
    from goldeval.report.terminal import api_lines
    from goldeval.scorecard import Scorecard

    card = Scorecard.from_dict(evaluated[0])
    lines = api_lines(card)
    assert len(lines) == 3 and sum("API request(s)" in line for line in lines) == 3
    text = scorecard_markdown(card)
    reranker = evaluated[0]["retrievers"][1]["config"]["reranker"]["api"]
    assert f"${reranker['dollars']:,.4f} at list price" in text
    assert text.count("API request(s)") == 3 and "no price in the table" in text
    assert [line.endswith(f"(the same requests as {DENSE}: sent once)") for line in lines] == [False, False, True]
    assert f"(the same requests as {DENSE}: sent once)" in text
