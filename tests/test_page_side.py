"""The Side by side tab in a real Chromium (issue 24): every retriever's rank of each question in one table,
sorted by any retriever's column, filtered to the questions the retrievers disagree on or all miss, and
the per-tag counts of every retriever at once, each against the results file at several k.
"""

from __future__ import annotations

from typing import Any

import pytest

from browser_fixtures import browser, open_page, page, results_file, scorecard_dict, served_url, set_k  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


def shown_rows(page: Any) -> list[tuple[str, list[str], list[str]]]:  # noqa: F811
    """(question id, the rank texts, the hit marks) of every row, in the order on screen."""
    rows = page.locator("#side-table tbody tr").evaluate_all(
        "rs => rs.map(r => [r.dataset.qid, [...r.querySelectorAll('td[data-run]')].map(c => c.textContent),"
        " [...r.querySelectorAll('td[data-run]')].map(c => c.dataset.hit)])")
    return [(qid, ranks, hits) for qid, ranks, hits in rows]


def hit(q: dict[str, Any], k: int) -> bool:
    return not q["off_topic"] and q["rank"] is not None and q["rank"] <= k


def test_every_retrievers_rank_side_by_side_sorted_and_filtered(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    runs = scorecard_dict["retrievers"]
    by_run = [{q["id"]: q for q in r["questions"]} for r in runs]
    ids = [q["id"] for q in runs[0]["questions"]]
    open_page(page, served_url)
    page.click('#tabs [data-tab="side"]')
    for k in (1, 3, 5):
        set_k(page, k)
        rows = shown_rows(page)
        assert [qid for qid, _, _ in rows] == ids  # every question, in the file's order
        for qid, ranks, hits in rows:
            for i, (text, mark) in enumerate(zip(ranks, hits, strict=True)):
                q = by_run[i][qid]
                if q["off_topic"]:
                    assert text == "off-topic"
                elif q["rank"] is not None:
                    assert (text, mark) == (str(q["rank"]), "1" if q["rank"] <= k else "0"), (qid, i, k)
                else:
                    assert mark == "0" and not text.isdigit(), (qid, i, k)
        page.click('#side-mode button[data-mode="disagree"]')
        answerable = [qid for qid in ids if not by_run[0][qid]["off_topic"]]
        disagree = [qid for qid in answerable if len({hit(by_run[i][qid], k) for i in range(len(runs))}) == 2]
        assert [qid for qid, _, _ in shown_rows(page)] == disagree, k
        page.click('#side-mode button[data-mode="missed"]')
        missed = [qid for qid in answerable if not any(hit(by_run[i][qid], k) for i in range(len(runs)))]
        assert [qid for qid, _, _ in shown_rows(page)] == missed, k
        page.click('#side-mode button[data-mode="all"]')
    page.click('#side-table th[data-sort="1"]')  # the second retriever's ranks, best first
    order = [qid for qid, _, _ in shown_rows(page)]
    second = by_run[1]
    ranked = sorted((qid for qid in ids if second[qid]["rank"] is not None), key=lambda qid: (second[qid]["rank"], ids.index(qid)))
    misses = [qid for qid in ids if not second[qid]["off_topic"] and second[qid]["rank"] is None]
    off = [qid for qid in ids if second[qid]["off_topic"]]
    assert order == ranked + misses + off
    page.click('#side-table th[data-sort="1"]')  # descending: misses first, off-topic still last
    down = sorted(ranked, key=lambda qid: (-second[qid]["rank"], ids.index(qid)))  # ties keep the file's order
    assert [qid for qid, _, _ in shown_rows(page)] == misses + down + off
    page.fill("#side-text", "stash")
    assert {qid for qid, _, _ in shown_rows(page)} == {qid for qid in ids if "stash" in by_run[0][qid]["question"].lower()}
    assert page.page_errors == []


def test_the_tags_of_every_retriever_at_once(page: Any, served_url: str, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    runs = scorecard_dict["retrievers"]
    open_page(page, served_url)
    page.click('#tabs [data-tab="side"]')
    for k in (1, 5, 10):
        set_k(page, k)
        cells = page.locator("#side-tags tbody td[data-run]").evaluate_all(
            "cs => cs.map(c => [c.closest('tr').dataset.tag, Number(c.dataset.run), Number(c.dataset.found), Number(c.dataset.n)])")
        assert cells
        for tag, run, found, n in cells:
            group = [q for q in runs[run]["questions"] if not q["off_topic"] and tag in (q["tags"] or ["(untagged)"])]
            assert (found, n) == (sum(hit(q, k) for q in group), len(group)), (tag, run, k)
        assert {tag for tag, *_ in cells} == {t for q in runs[0]["questions"] if not q["off_topic"] for t in q["tags"]}
    assert page.page_errors == []
