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
from goldeval.report.page import SCRIPTS, results_payload, static_text

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
    # exactly the inert data and the page's own scripts
    assert len(re.findall(r"<script\b", html, re.IGNORECASE)) == 1 + len(SCRIPTS)
    assert len(re.findall(r"</script", html, re.IGNORECASE)) == 1 + len(SCRIPTS)
    assert "<script src=" not in html
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
    scripts = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    style = re.search(r"<style>(.*?)</style>", html, re.DOTALL)
    assert len(scripts) == len(SCRIPTS) and style

    def digest(text: str) -> str:
        return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    hashes = " ".join(f"'{digest(js)}'" for js in scripts)
    assert f"script-src {hashes};" in csp.group(1)
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


# One source of truth (issue 8): the page looks numbers up in the results JSON and computes none. Beside
# the browser tests that compare every shown value with Python's, the scripts must hold no formula.
FORMULAS = {
    r"Math\.(log|log2|log10|sqrt|exp|pow)\b": "a logarithm or power (nDCG's discount, a standard deviation)",
    r"\blog2\b": "nDCG's discount",
    r"\*\*": "a power",
    r"/\s*\(?\s*(k|rank|r|first|q\.rank)\b\s*\)?": "a division by k or by a rank (precision@k, MRR)",
    r"\.reduce\(": "a sum over questions (a mean)",
    r"\+=\s*[^;\n]*\/": "an accumulated ratio (a mean, an AUC)",
    r"\?\s*0?\.5\b|\b0\.5\s*\*": "a tie counted half (an AUC)",
    r"[<>]=?\s*0?\.[5-9]\d*\b": "a cut of the page's own (an AUC of 0.8 is 'separable enough')",
    r"(?i)fewest|bestThreshold|mann.?whitney|youden\s*=": "a threshold rule of the page's own",
    r"(?i)median\s*\(": "a median of the page's own",
}


@pytest.mark.parametrize("name", SCRIPTS)
def test_page_scripts_hold_no_metric_or_statistic_formula(name: str) -> None:
    code = "\n".join(line.split("//", 1)[0] for line in static_text(name).splitlines())
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.DOTALL)  # comments may name the formulas they look up
    code = re.sub(r"'(?:[^'\\\n]|\\.)*'", "''", code)  # and so may the page's own text
    for pattern, what in FORMULAS.items():
        match = re.search(pattern, code)
        assert match is None, f"{name} computes {what}: {match.group(0) if match else ''!r}"


def test_the_no_formula_check_catches_the_old_page() -> None:
    """The patterns above flag what the page used to compute (goldset 0.1's app.js), so the check is real."""
    old = [
        "found += 1; dcg += grade / Math.log2(r + 1);",
        "precision: found / k,",
        "mrr: first !== null ? 1 / first : 0,",
        "u += a > o ? 1 : a === o ? 0.5 : 0;",
        "a >= 0.8 ? 'a threshold helps, at a cost' : 'cannot'",
        "function bestThreshold(aScores, oScores, lo) {",
    ]
    for line in old:
        assert any(re.search(p, line) for p in FORMULAS), line
