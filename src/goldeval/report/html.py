"""The static HTML report: the live scorecard page as one self-contained file that works offline.

The page's own CSS, its scripts and the results JSON are inlined into its HTML; nothing is fetched (no
CDN, no external fonts, scripts or images). Inlining is done safely:
- the results JSON goes into a `<script type="application/json">` element with `<`, `>`, `&` and the
  line separators U+2028/U+2029 written as `\\uXXXX` escapes, so no document text, however hostile
  (`</script><script>...`), can close the element or start markup; `JSON.parse` reads it back unchanged;
- a Content-Security-Policy meta tag allows exactly the inlined scripts and style (by their SHA-256)
  and nothing else: no other script can run and no request can leave the page.
The page itself puts every result string into the DOM as text (see `goldeval/report/static/dom.js`).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from goldeval.errors import InputError

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029]")

STYLE_LINK = '<link rel="stylesheet" href="style.css">'
DATA_TAG = '<script id="goldeval-data" type="application/json"></script>'
CSP_MARK = "<!--goldeval:csp-->"
TOKEN_MARK = "<!--goldeval:token-->"
"""Where a served page gets its session token (sent with its data reads and label fixes); the offline
file has none: it reads nothing from a server and writes nothing."""
TITLE_TAG = "<title>goldeval scorecard</title>"


def json_for_script(payload: Mapping[str, Any]) -> str:
    """The payload as JSON that is inert inside an HTML `<script>` element."""
    from goldeval.report.page import payload_json

    return _JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group(0)], payload_json(payload))


def render_html(payload: Mapping[str, Any], *, title: str | None = None) -> str:
    """The single-file report for a results payload (`goldeval.report.page.results_payload`)."""
    from goldeval.report.page import SCRIPTS, static_text

    html = static_text("index.html")
    css = static_text("style.css")
    scripts = {name: static_text(name) for name in SCRIPTS}
    # Our own files, checked so a future edit cannot break out of the inline elements.
    if re.search(r"</style", css, re.IGNORECASE):
        raise RuntimeError("style.css contains '</style', which cannot be inlined")
    for name, js in scripts.items():
        if re.search(r"</script|<!--", js, re.IGNORECASE):
            raise RuntimeError(f"{name} contains '</script' or '<!--', which cannot be inlined")
    hashes = " ".join(f"'{script_sha256(js)}'" for js in scripts.values())
    csp = (
        "default-src 'none'; "
        f"script-src {hashes}; style-src '{script_sha256(css)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    replacements = {
        CSP_MARK: f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        TOKEN_MARK: "",
        STYLE_LINK: f"<style>{css}</style>",
        **{f'<script src="{name}"></script>': f"<script>{js}</script>" for name, js in scripts.items()},
        DATA_TAG: f'<script id="goldeval-data" type="application/json">{json_for_script(payload)}</script>',
        TITLE_TAG: f"<title>{escape_text(title or 'goldeval scorecard')}</title>",
    }
    for mark in replacements:
        if html.count(mark) != 1:
            raise RuntimeError(f"index.html must contain {mark!r} exactly once")
    # One pass over the template, so inserted text is never searched for the other marks.
    pattern = re.compile("|".join(re.escape(mark) for mark in replacements))
    html = pattern.sub(lambda m: replacements[m.group(0)], html)
    return html


def write_html_report(
    sources: Sequence[str | Path | Mapping[str, Any]],
    out: str | Path,
    *,
    names: Sequence[str] | None = None,
    title: str | None = None,
    history: str | Path | None = None,
    judges: Mapping[str, Any] | None = None,
) -> Path:
    """Read results files (or scorecard dicts) and write the self-contained report to `out`, atomically.

    `history`: a workspace whose run history's trend (of the first file's headline metrics, on its golden
    set's frozen version when runs exist on it) the page shows in its Trend tab. `judges`: what
    `goldeval judge --json` wrote, shown in the Judges tab as it is."""
    from goldeval.report.page import results_payload
    from goldeval.store.atomic import write_atomic

    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"the report is HTML; {out.name!r} does not end in .html", path=out, hint="e.g. --html report.html")
    payload = results_payload(sources, names)
    if history is not None:
        payload["lifecycle"] = {"trend": _trend(payload, Path(history))}
    if judges is not None:
        payload["judges"] = dict(judges)
    html = render_html(payload, title=title)
    write_atomic(out, html)
    return out


def _trend(payload: Mapping[str, Any], workspace: Path) -> dict[str, Any]:
    from goldeval.history.db import DB_NAME
    from goldeval.report.lifecycle import results_meta, trend_view

    meta = results_meta(payload)
    trend = trend_view(workspace, meta.headline, version=meta.golden_version)
    if trend is None:
        raise InputError("no run history to show", path=workspace / DB_NAME,
                         hint="every `goldeval eval` records its run in the workspace; pass --workspace DIR")
    return trend


def script_sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
