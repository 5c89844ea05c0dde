"""The static HTML report: one self-contained file, with the results inlined safely."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import XSS_QUESTION, results_file, scorecard_dict  # noqa: F401 - fixtures
from goldeval.cli import main
from goldeval.report.html import json_for_script, render_html
from goldeval.web.page import results_payload

DATA_RE = re.compile(r'<script id="goldeval-data" type="application/json">(.*?)</script>', re.DOTALL)


def hostile(card: dict[str, Any]) -> dict[str, Any]:
    """The tiny results with a question that tries every way out of a <script> element."""
    data = copy.deepcopy(card)
    q = data["retrievers"][0]["questions"][0]
    q["question"] = "</script><script>window.__xss=9</script><!-- <script> </SCRIPT > & \u2028 \u2029 ]]>"
    return data


def test_report_inlines_everything_and_reads_back(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    payload = results_payload([hostile(scorecard_dict)], names=["run.json"])
    html = render_html(payload)
    assert '<script src="app.js">' not in html and 'href="style.css"' not in html
    matches = DATA_RE.findall(html)
    assert len(matches) == 1
    assert json.loads(matches[0]) == json.loads(json.dumps(payload))
    # exactly two script elements: the inert data and the page's own code
    assert len(re.findall(r"<script\b", html, re.IGNORECASE)) == 2
    assert len(re.findall(r"</script", html, re.IGNORECASE)) == 2
    assert "window.__xss=9" not in html.replace("\\u003c", "<")[: html.index("goldeval-data")]
    assert "<!--" not in matches[0] and "\u2028" not in matches[0]


def test_json_for_script_escapes_markup_characters() -> None:
    text = json_for_script({"files": [{"name": "</script>&<!--", "data": {}}]})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["files"][0]["name"] == "</script>&<!--"


def test_report_has_no_external_references(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    html = render_html(results_payload([scorecard_dict]))
    page = DATA_RE.sub("", html)  # the results may mention URLs; the page itself must not load any
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.IGNORECASE)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", page, re.IGNORECASE)
    assert "fonts.googleapis" not in page and "cdn" not in page.lower()


def test_csp_allows_exactly_the_inlined_script_and_style(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    html = render_html(results_payload([scorecard_dict]))
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert csp
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL)
    style = re.search(r"<style>(.*?)</style>", html, re.DOTALL)
    assert script and style

    def digest(text: str) -> str:
        return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src '{digest(script.group(1))}'" in csp.group(1)
    assert f"style-src '{digest(style.group(1))}'" in csp.group(1)
    assert "default-src 'none'" in csp.group(1)


def test_title_is_escaped(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    html = render_html(results_payload([scorecard_dict]), title="<b>ours</b> & theirs")
    assert "<title>&lt;b&gt;ours&lt;/b&gt; &amp; theirs</title>" in html


def test_report_command_writes_one_file(tmp_path: Path, results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    out = tmp_path / "sub" / "scorecard.html"
    assert main(["report", str(results_file), str(results_file), "--html", str(out)]) == 0
    assert "self-contained" in capsys.readouterr().err
    payload = json.loads(DATA_RE.findall(out.read_text(encoding="utf-8"))[0])
    assert [f["name"] for f in payload["files"]] == ["results.json", "results.json (2)"]
    assert [p.name for p in out.parent.iterdir()] == ["scorecard.html"]  # no temp file left behind


def test_report_command_bad_input(tmp_path: Path, results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    assert main(["report", str(tmp_path / "nope.json"), "--html", str(tmp_path / "r.html")]) == 2
    assert "nope.json: results file not found" in capsys.readouterr().err
    assert main(["report", str(results_file), "--html", str(tmp_path / "r.txt")]) == 2
    assert "does not end in .html" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["report", str(results_file)])
    assert exc.value.code == 2
    assert not (tmp_path / "r.html").exists()


def test_hostile_question_survives_round_trip(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    html = render_html(results_payload([scorecard_dict]))
    payload = json.loads(DATA_RE.findall(html)[0])
    questions = [q["question"] for q in payload["files"][0]["data"]["retrievers"][0]["questions"]]
    assert XSS_QUESTION in questions
