"""The scorecard page of the one server (`goldeval.web.app`): the live scorecard at `/`, its assets, the
loaded results and, with a golden set, label fixes from a miss.

Routes: GET `/`, `/index.html`, `/style.css`, the page's scripts (package data, `goldeval/report/static/`:
the scaffolding, readable so the page loads); the page's data, under `/api/` and so answered only with the
session token, Host and Origin of the page itself, as the item pages' are: `/api/results.json` and
`/api/version` (from the results the user named, re-read when they change, see `live.py`, or from memory),
`/api/lifecycle.json` (the trend of the run history and the recorded fixes, `lifecycle.py`); POST
`/api/fix`, a label fix, the one write, taken only when the server was given the golden set (else a 404
saying how to turn fixes on). The page's HTML always carries the session token (`<meta
name="goldeval-token">`): its scripts send it with every read (`fetchData` in `data.js`) and the write.
The data's paths before they moved under `/api/` answer a 404 that names the new path (`MOVED`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldeval.report.html import TOKEN_MARK
from goldeval.report.page import SCRIPTS, static_text
from goldeval.web.handler import JSON, TOKEN_HINT
from goldeval.web.lifecycle import PageLifecycle
from goldeval.web.live import FixedResults, ResultsSource, version_body
from goldeval.web.routes import Answer, Page

# path -> (static file name, content type): the scaffolding; the data (`DATA`) comes from the results source
ROUTES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    **{f"/{name}": (name, "text/javascript; charset=utf-8") for name in SCRIPTS},
}
FIX_PATH = "/api/fix"
DATA = ("/api/results.json", "/api/version", "/api/lifecycle.json")
"""The page's data: the results payload, the version the page polls for a live reload, the lifecycle block."""
MOVED = {old: f"moved to {new}: the page's data is read with its session token ({TOKEN_HINT})"
         for old, new in zip(("/results.json", "/version", "/lifecycle.json"), DATA, strict=True)}
"""Where goldeval 0.2.0 and earlier answered the data, without the token: now a 404 that names the new path."""
FIXES_OFF = "label fixes are off: start goldeval serve with --golden"


def scorecard_page(results: Mapping[str, Any] | ResultsSource, *, token: str, workspace: str | Path | None = None,
                   golden: str | Path | None = None, judge: str | None = None) -> Page:
    """The scorecard's routes for a payload (see `results_payload`) or a `ResultsFiles` source that follows
    its files. `workspace`: the page gets the trend of its run history (when it has one); `golden`: the
    golden-set file label fixes are written into (`judge` names who fixes; default $USER)."""
    source = FixedResults(results) if isinstance(results, Mapping) else results
    lifecycle = PageLifecycle(source, workspace=workspace, golden=golden, judge=judge)
    meta = f'<meta name="goldeval-token" content="{token}">'
    files = {path: (static_text(name).replace(TOKEN_MARK, meta).encode("utf-8"), ctype)
             for path, (name, ctype) in ROUTES.items()}

    def results_json() -> Answer:
        return source.current()[0], JSON

    def version() -> Answer:
        _, number, error = source.current()
        return version_body(number, error, lifecycle.signature()), JSON

    def lifecycle_json() -> Answer:
        return lifecycle.body(), JSON

    def fix(_: str, action: dict[str, Any]) -> dict[str, Any]:
        return {"fixes": lifecycle.apply(action)}

    reads = dict(zip(DATA, (results_json, version, lifecycle_json), strict=True))
    if lifecycle.fixes_enabled:
        return Page(name="scorecard", path="/", files=files, reads=reads, writes={FIX_PATH: fix}, moved=MOVED)
    return Page(name="scorecard", path="/", files=files, reads=reads, off={FIX_PATH: FIXES_OFF}, moved=MOVED)
