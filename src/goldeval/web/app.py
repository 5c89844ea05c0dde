"""One local web server for every goldeval page (issue 22): the scorecard at `/`, pooled judging at
`/pool`, the review of candidate questions at `/review`, on one port, through one request handler.

`goldeval serve` mounts every page it has data for; `goldeval pool` and `goldeval review` start the same
server with their page and open it at its route. Each page brings its routes as data
(`goldeval.web.routes.Page`: `scorecard.py`, `items.py`); this module is the only place a request is
answered, so every page gets the same protections:

- **Exact paths.** GET and HEAD look the raw path (query dropped, never decoded) up in one table; every
  other path, any traversal attempt (`/../`, `%2e%2e`, absolute paths, backslashes) included, is a 404.
  No file system path is ever built from a request: the files are package data, read once.
- **This machine only.** It binds 127.0.0.1 by default; on a loopback address a request whose Host header
  names another machine is a 403 (DNS rebinding: a web page that rebinds its own name to 127.0.0.1 cannot
  read the results or the golden set through the visitor's browser).
- **One set of headers** (`goldeval.web.handler.SECURITY_HEADERS`) on every answer, errors included: a
  strict Content-Security-Policy (scripts, styles and fetches only from the page's own origin,
  `frame-ancestors 'none'`), `X-Content-Type-Options: nosniff`, `Cache-Control: no-store`,
  `Referrer-Policy: no-referrer`, and no CORS header ever (a preflight is never granted).
- **Writes, and the pages' data, from the page only.** A POST, and any request under `/api/` (every
  page's data lives there, `routes.Routes` refuses a read elsewhere: the scorecard's
  `GET /api/results.json`, `/api/version` and `/api/lifecycle.json`, the item pages' `GET /api/NAME/items`
  with the golden set's questions and passages), must carry the server's session token (one fresh random
  value per server, in every page's HTML, sent back as `X-Goldeval-Token`, compared in constant time), a
  Host header naming this machine and an Origin header (when present) naming this server
  (`handler.PageHandler.from_page`, the one check); a POST's body is one JSON object of at most 64 KiB
  (`handler.json_body`, the one request reader). Another web site open in the same browser can neither
  read the token nor send that header without a CORS preflight. What lies outside `/api/` is scaffolding
  (HTML, scripts, styles, the icon), readable so a page can load.
- **One error answer**: every 4xx and 5xx is one line of JSON, `{"error": "..."}` (`handler.PageHandler`).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any

from goldeval.errors import GoldevalError
from goldeval.web.handler import (
    API_PREFIX,
    BadRequest,
    PageHandler,
    PageServer,
    allowed_hosts,
    bind,
    json_body,
)
from goldeval.web.items import ItemStore, item_page
from goldeval.web.live import ResultsSource
from goldeval.web.routes import Page, Routes

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
FAVICON = "image/svg+xml"


def _site() -> Page:
    """What belongs to no page: the icon a browser asks every page for (else a 404 in its console)."""
    icon = resources.files("goldeval.web").joinpath("static", "favicon.svg").read_bytes()
    return Page(name="site", path="/favicon.ico", files={"/favicon.ico": (icon, FAVICON), "/favicon.svg": (icon, FAVICON)})


class _Handler(PageHandler):
    routes: Routes
    home = "/"
    """Where `/` leads when no scorecard is mounted: the first page's route."""

    def answer_get(self) -> None:
        # Exact lookup of the raw path (query string dropped): no decoding, no joining, no file system.
        if not self.host_checked():
            raise BadRequest(HTTPStatus.FORBIDDEN, "forbidden: unexpected Host header")
        if self.route.startswith(API_PREFIX):
            self.from_page()  # the pages' data, read with the token as it is written; before saying it exists
        answer = self.routes.get(self.route)
        if answer is None and self.route == "/" and self.home != "/":
            return self.answer(HTTPStatus.FOUND, b"", "text/plain", headers={"Location": self.home})
        if answer is None:
            raise BadRequest(HTTPStatus.NOT_FOUND, self.routes.moved.get(self.route, "not found"))
        self.answer(HTTPStatus.OK, *answer)

    def answer_post(self) -> None:
        path = self.route
        if self.routes.get_exists(path):
            raise BadRequest(HTTPStatus.METHOD_NOT_ALLOWED, "method not allowed: this path is read-only",
                             {"Allow": "GET, HEAD"})
        if path in self.routes.off and self.same_page():
            raise BadRequest(HTTPStatus.NOT_FOUND, self.routes.off[path])
        self.from_page()  # before saying whether a write path exists: another site learns nothing
        found = self.routes.write(path)
        if found is None:
            raise BadRequest(HTTPStatus.NOT_FOUND, "not found")
        write, rest = found
        action = json_body(self.headers, self.rfile, "the action")
        try:
            answer = write(rest, action)
        except (ValueError, GoldevalError) as exc:
            raise BadRequest(HTTPStatus.BAD_REQUEST, str(exc)) from None
        self.answer_json(HTTPStatus.OK, answer)


class AppServer(PageServer):
    """The one goldeval server (`PageServer`: daemon threads, silent about clients that went away);
    `pages` names what it serves, `page_url(name)` where each opens."""

    pages: tuple[str, ...] = ()
    paths: Mapping[str, str] = {}

    def page_url(self, name: str) -> str:
        """The address of the page `name` (scorecard, pool, review) on this server."""
        return self.url.rstrip("/") + self.paths[name]


def make_server(
    results: Mapping[str, Any] | ResultsSource | None = None, *, pool: ItemStore | None = None,
    review: ItemStore | None = None, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, quiet: bool = True,
    workspace: str | Path | None = None, golden: str | Path | None = None, judge: str | None = None,
    name: str = "serve",
) -> AppServer:
    """Bind the one server for the pages given data (port 0 picks a free port); `serve_forever()` it, or
    `start_in_thread`.

    `results`: the scorecard at `/`, from a payload (see `results_payload`) or a `ResultsFiles` source that
    follows its files, with `workspace` (the trend of its run history) and `golden` (the golden-set file
    label fixes are written into; `judge` names who fixes, default $USER). `pool`: the pooled-judging page at
    `/pool` (a `goldeval.web.pool.PoolStore`); `review`: the review page at `/review` (a
    `goldeval.synth.review.ReviewSession`). `name` says who speaks on stderr (`goldeval NAME: ...`)."""
    from goldeval.web.scorecard import scorecard_page

    token = secrets.token_urlsafe(24)
    pages: list[Page] = []
    if results is not None:
        pages.append(scorecard_page(results, token=token, workspace=workspace, golden=golden, judge=judge))
    pages += [item_page(page, store, token) for page, store in (("pool", pool), ("review", review)) if store is not None]
    if not pages:
        raise ValueError("make_server needs something to serve: results, pool or review")
    routes = Routes()
    for page in [*pages, _site()]:
        routes.add(page)
    handler = type("Handler", (_Handler,), {"routes": routes, "token": token, "name": name, "quiet": quiet,
                                            "home": pages[0].path, "allowed_hosts": allowed_hosts(host)})
    server_class = type("AppServer", (AppServer,), {"name": name, "pages": tuple(p.name for p in pages),
                                                    "paths": {p.name: p.path for p in pages}})
    return bind(server_class, host, port, handler)


def start_in_thread(server: AppServer) -> threading.Thread:
    """Serve in a daemon thread (for tests and notebooks); stop with `server.shutdown()`."""
    thread = threading.Thread(target=server.serve_forever, name="goldeval-serve", daemon=True)
    thread.start()
    return thread
