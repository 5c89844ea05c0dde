"""The Judges tab of the report (`goldeval report RESULTS --judges JUDGES.json`), in Chromium: it shows
what `goldeval judge --json` wrote, computing nothing, and is absent without it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import browser, open_page, page  # noqa: F401 - fixtures
from goldeval.cli import main

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "examples" / "data" / "golden_example.jsonl"


def grade(prompt: str) -> str:
    """The backend `test_judge_browser:grade`: a fixed grade per passage id, `covered` for git questions."""
    found = re.search(r"Passage \(([^)]*)\)", prompt)
    if found:
        return str(len(found.group(1)) % 4)
    return "covered" if "git" in prompt.lower() else "not covered"


def test_the_judges_tab_shows_the_judges_file_as_written(page: Any, tmp_path: Path,  # noqa: F811
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    results, judges = tmp_path / "r.json", tmp_path / "judges.json"
    assert main(["eval", "--corpus", str(REPO / "examples" / "data" / "corpus"), "--golden", str(GOLDEN),
                 "--retriever", "bm25", "--retriever", "bm25?k1=0.3&b=0.1", "--json", str(results),
                 "--workspace", str(tmp_path / "ws")]) == 0
    assert main(["judge", str(results), "--golden", str(GOLDEN), "--llm", "test_judge_browser:grade", "--coverage",
                 "--workspace", str(tmp_path / "ws"), "--json", str(judges)]) == 0
    assert main(["report", str(results), "--judges", str(judges), "--html", str(tmp_path / "with.html")]) == 0
    assert main(["report", str(results), "--html", str(tmp_path / "without.html")]) == 0
    capsys.readouterr()
    data = json.loads(judges.read_text())

    open_page(page, (tmp_path / "without.html").as_uri())
    assert page.locator('#tabs [data-tab="judges"]').is_hidden()
    open_page(page, (tmp_path / "with.html").as_uri())
    page.locator('#tabs [data-tab="judges"]').click()
    body = page.locator("#jd-body")
    c = data["calibration"]
    cells = body.locator(".jd-confusion td").all_inner_texts()
    assert cells == [str(n) for row in c["confusion"]["matrix"] for n in row]
    for stat in ("kappa", "weighted_kappa", "alpha", "bias"):  # shown to 3 places (JS rounds its own way at the 4th)
        shown = body.locator(f'[data-stat="{stat}"] td').first.inner_text()
        assert float(shown) == pytest.approx(c["values"][stat], abs=5.1e-4) and len(shown.split(".")[1]) == 3
    ndcg = next(m for m in data["ranking"]["metrics"] if m["metric"] == "ndcg@5")
    filled = ndcg["schemes"]["filled"]
    row = body.locator("#jd-ranking table").nth(data["ranking"]["metrics"].index(ndcg)).locator('[data-scheme="filled"] td')
    assert [part.rsplit(" ", 1)[0] for part in row.nth(1).inner_text().split(" > ")] == filled["order"]
    assert ("CHANGE a conclusion" in body.locator("#jd-conclusion").inner_text()) == data["ranking"]["conclusion_changes"]
    assert f"accuracy {data['covered']['accuracy']:.3f}" in body.locator("#jd-covered").inner_text()
    assert page.page_errors == []


def test_goldeval_serve_judges_shows_the_same_tab_live(page: Any, tmp_path: Path,  # noqa: F811
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """`goldeval serve RESULTS --judges FILE`: the live page (the one server, following re-runs of the
    results) carries the Judges tab, read from the file as the report's is."""
    from browser_fixtures import serving
    from goldeval.cli import build_parser
    from goldeval.cli.serve_cmd import payload_from_args

    results, judges = tmp_path / "r.json", tmp_path / "judges.json"
    assert main(["eval", "--corpus", str(REPO / "examples" / "data" / "corpus"), "--golden", str(GOLDEN),
                 "--retriever", "bm25", "--retriever", "bm25?k1=0.3&b=0.1", "--json", str(results),
                 "--workspace", str(tmp_path / "ws")]) == 0
    assert main(["judge", str(results), "--golden", str(GOLDEN), "--llm", "test_judge_browser:grade",
                 "--workspace", str(tmp_path / "ws"), "--json", str(judges)]) == 0
    capsys.readouterr()
    data = json.loads(judges.read_text())
    source = payload_from_args(build_parser().parse_args(["serve", str(results), "--judges", str(judges)]))
    with serving(source) as url:
        open_page(page, url)
        page.locator('#tabs [data-tab="judges"]').click()
        cells = page.locator("#jd-body .jd-confusion td").all_inner_texts()
        assert cells == [str(n) for row in data["calibration"]["confusion"]["matrix"] for n in row]
    with serving(payload_from_args(build_parser().parse_args(["serve", str(results)]))) as url:
        open_page(page, url)
        assert page.locator('#tabs [data-tab="judges"]').is_hidden()
    bad = tmp_path / "not-judges.json"
    bad.write_text('{"retrievers": []}')
    assert main(["serve", str(results), "--judges", str(bad), "--port", "0"]) == 2
    assert "not-judges.json: this is not a judges file" in capsys.readouterr().err
    assert page.page_errors == []
