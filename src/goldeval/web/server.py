"""A localhost server for the live scorecard: the page, its assets, and the loaded results. Nothing else.

Security model. The server answers GET and HEAD for a fixed set of exact paths (`ROUTES`); every other
path, including any traversal attempt (`/../`, `%2e%2e`, absolute paths, backslashes), is a 404 because
the path is looked up in a dict, never joined to a folder. The static files are read from package data
(`goldeval/report/static/`), and the results come from the results files the user named (re-read when they
change, see `live.py`) or from memory, so no other file can be read through it.
It binds 127.0.0.1 by default; every response carries a strict Content-Security-Policy (scripts and
styles only from the page's own origin), so even a document text that slipped past the page's escaping
could not run a script. On a loopback address it also refuses requests whose Host header names another
machine (403), so a web page that rebinds its own domain name to 127.0.0.1 (DNS rebinding) cannot read
the results through the visitor's browser.

Label fixes (`goldeval serve ... --golden G`, `goldeval.web.lifecycle`) are the one write: `POST /api/fix`
is answered only when the server was given the golden set, and only for a request that carries the
session token the page received in its HTML (`X-Goldeval-Token`), a JSON body, a Host header naming
this machine and, when present, an Origin header naming this server, as the review and pool servers
ask: another web site open in the same browser can neither read the token nor forge the request.

How a request is read, checked and answered (the body reader, the token check, one line of JSON for every
error, silence for a client that went away) is `goldeval.web.handler`, shared with the review and pool servers.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

from goldeval.errors import GoldevalError
from goldeval.report.page import SCRIPTS, static_text
from goldeval.web.handler import CSP as CSP  # the page servers' policy, named here too (tests read it)
from goldeval.web.handler import JSON, BadRequest, PageHandler, PageServer, allowed_hosts, bind, json_body
from goldeval.web.lifecycle import PageLifecycle
from goldeval.web.live import FixedResults, ResultsSource, version_body

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

# path -> (static file name, content type); `/results.json` and `/version` come from the results source
ROUTES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    **{f"/{name}": (name, "text/javascript; charset=utf-8") for name in SCRIPTS},
}
DYNAMIC = ("/results.json", "/version", "/lifecycle.json")
FIX_PATH = "/api/fix"
TOKEN_MARK = "<!--goldeval:token-->"


@dataclass
class _Content:
    body: bytes
    content_type: str


def _contents(token: str | None = None) -> dict[str, _Content]:
    """The page's files, read once up front; with a `token` (label fixes on), the page carries it."""
    meta = f'<meta name="goldeval-token" content="{token}">' if token else ""
    return {path: _Content(static_text(name).replace(TOKEN_MARK, meta).encode("utf-8"), ctype)
            for path, (name, ctype) in ROUTES.items()}


class _Handler(PageHandler):
    contents: dict[str, _Content] = {}
    source: ResultsSource
    lifecycle: PageLifecycle

    def answer_get(self) -> None:
        # Exact lookup of the raw path (query string dropped): no decoding, no joining, no file system.
        if not self.host_checked():
            raise BadRequest(HTTPStatus.FORBIDDEN, "forbidden: unexpected Host header")
        path = self.route
        content = self.contents.get(path)
        if path == "/lifecycle.json":
            content = _Content(self.lifecycle.body(), JSON)
        elif path in DYNAMIC:
            body, version, error = self.source.current()
            content = _Content(body if path == "/results.json" else
                               version_body(version, error, self.lifecycle.signature()), JSON)
        if content is None:
            raise BadRequest(HTTPStatus.NOT_FOUND, "not found")
        self.answer(HTTPStatus.OK, content.body, content.content_type)

    def answer_post(self) -> None:
        """A label fix (the only write); every other POST is not implemented, as before."""
        if self.route != FIX_PATH:
            raise BadRequest(HTTPStatus.NOT_IMPLEMENTED, "not implemented: the only POST is /api/fix")
        if self.same_page() and (not self.lifecycle.fixes_enabled or not self.token):
            raise BadRequest(HTTPStatus.NOT_FOUND, "label fixes are off: start goldeval serve with --golden")
        self.write_allowed()
        action = json_body(self.headers, self.rfile, "the fix")
        try:
            fixes = self.lifecycle.apply(action)
        except (ValueError, GoldevalError) as exc:
            raise BadRequest(HTTPStatus.BAD_REQUEST, str(exc)) from None
        self.answer_json(HTTPStatus.OK, {"fixes": fixes})


class ScorecardServer(PageServer):
    """The live scorecard's server (`PageServer`: daemon threads, silent about clients that went away)."""


def make_server(
    results: Mapping[str, Any] | ResultsSource, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, quiet: bool = True,
    workspace: str | Path | None = None, golden: str | Path | None = None, judge: str | None = None,
) -> ScorecardServer:
    """Bind a server for a payload (see `results_payload`) or a `ResultsFiles` source that follows its
    files; port 0 picks a free port. Call `serve_forever()` on it, or `start_in_thread`.

    `workspace`: the page gets the trend of its run history (when it has one); `golden`: the golden-set
    file label fixes are written into (`judge` names who fixes; default $USER). Without `golden` the page
    offers no fix and says how to enable them."""
    source = FixedResults(results) if isinstance(results, Mapping) else results
    lifecycle = PageLifecycle(source, workspace=workspace, golden=golden, judge=judge)
    token = secrets.token_urlsafe(24) if lifecycle.fixes_enabled else ""
    allowed = allowed_hosts(host)
    handler = type("Handler", (_Handler,), {"contents": _contents(token), "source": source, "quiet": quiet,
                                            "allowed_hosts": allowed, "lifecycle": lifecycle, "token": token})
    return bind(ScorecardServer, host, port, handler)


def start_in_thread(server: ScorecardServer) -> threading.Thread:
    """Serve in a daemon thread (for tests and notebooks); stop with `server.shutdown()`."""
    thread = threading.Thread(target=server.serve_forever, name="goldeval-serve", daemon=True)
    thread.start()
    return thread
