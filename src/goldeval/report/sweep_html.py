"""The sweep view as one self-contained HTML file: a table, a heatmap over two dials, the Pareto plot.

Built like the scorecard report (`goldeval.report.html`): the page's CSS and JavaScript and the sweep
JSON are inlined, the JSON escaped so no label can close its `<script>` element, and a
Content-Security-Policy allows exactly the inlined script and style and no request at all. The page
draws what `SweepResult.to_dict()` holds and computes no statistic (`report/static/sweep.js`).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.report.html import escape_text, json_for_script, script_sha256
from goldeval.store.atomic import write_atomic
from goldeval.sweep.model import SweepResult

MARKS = {
    "csp": "<!--goldeval:csp-->",
    "style": '<link rel="stylesheet" href="sweep.css">',
    "script": '<script src="sweep.js"></script>',
    "data": '<script id="goldeval-sweep" type="application/json"></script>',
    "title": "<title>goldeval sweep</title>",
}


def static_text(name: str) -> str:
    """One of the sweep view's files shipped as package data (sweep.html, sweep.js, sweep.css)."""
    if name not in ("sweep.html", "sweep.js", "sweep.css"):
        raise KeyError(name)
    return resources.files("goldeval.report").joinpath("static", name).read_text(encoding="utf-8")


def render_sweep_html(payload: dict[str, Any], *, title: str | None = None) -> str:
    """The single-file page for a sweep's JSON (`SweepResult.to_dict()`)."""
    html, css, js = static_text("sweep.html"), static_text("sweep.css"), static_text("sweep.js")
    if re.search(r"</style", css, re.IGNORECASE) or re.search(r"</script|<!--", js, re.IGNORECASE):
        raise RuntimeError("sweep.css or sweep.js contains a sequence that cannot be inlined")
    csp = ("default-src 'none'; "
           f"script-src '{script_sha256(js)}'; style-src '{script_sha256(css)}'; img-src data:; base-uri 'none'; form-action 'none'")
    replacements = {
        MARKS["csp"]: f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        MARKS["style"]: f"<style>{css}</style>",
        MARKS["script"]: f"<script>{js}</script>",
        MARKS["data"]: f'<script id="goldeval-sweep" type="application/json">{json_for_script(payload)}</script>',
        MARKS["title"]: f"<title>{escape_text(title or 'goldeval sweep')}</title>",
    }
    for mark in replacements:
        if html.count(mark) != 1:
            raise RuntimeError(f"sweep.html must contain {mark!r} exactly once")
    pattern = re.compile("|".join(re.escape(mark) for mark in replacements))
    return pattern.sub(lambda m: replacements[m.group(0)], html)


def write_sweep_html(result: SweepResult, out: str | Path, *, title: str | None = None) -> Path:
    """Write the sweep view for `result` to `out`, atomically."""
    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"the sweep view is HTML; {out.name!r} does not end in .html", path=out,
                         hint="e.g. --html sweep.html")
    write_atomic(out, render_sweep_html(result.to_dict(), title=title))
    return out
