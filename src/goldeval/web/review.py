"""A localhost server for reviewing items one at a time: the review page, its items, and their verdicts.

It serves any `ItemStore` (today the candidates of `goldeval synth`; pooled judging can bring its own):
GET `/`, `/review.js`, `/review.css` (package data, `goldeval/web/static/review.*`), the files it shares
with the pool page (`/items.js`, `/items.css`, and `items.html`, the skeleton its HTML goes into) and
`/api/items`; POST `/api/items/<id>` with a JSON action. Security follows `goldeval.web.server`: exact paths looked up
in a dict (no file system path is ever built from a request), 127.0.0.1 by default, Host header checked
on loopback (DNS rebinding), a strict Content-Security-Policy. Because this server also *writes* files,
a POST must further carry the session token that the page received in its HTML (`X-Goldeval-Token`)
and a JSON body, and an `Origin` header, when present, must be this server: another web site open in
the same browser cannot forge a verdict (it can neither read the token nor send that header without a
CORS preflight, which is never granted). The reading, checks and error answers are `goldeval.web.handler`'s.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from http import HTTPStatus
from importlib import resources
from typing import Any, Protocol
from urllib.parse import unquote

from goldeval.errors import GoldevalError
from goldeval.web.handler import TOKEN_HEADER as TOKEN_HEADER  # named here too: the page's tests send it
from goldeval.web.handler import BadRequest, PageHandler, PageServer, allowed_hosts, bind, json_body

HTML = "text/html; charset=utf-8"
SCRIPT = "text/javascript; charset=utf-8"
STYLE = "text/css; charset=utf-8"
SHARED = {"/items.js": ("items.js", SCRIPT), "/items.css": ("items.css", STYLE)}
"""What every item page (review, pool) shares: one copy of the send/move script and the header styles."""
SKELETON = "items.html"


class ItemStore(Protocol):
    """What the review page reviews: `payload()` lists the items, `apply()` records one action."""

    def payload(self) -> dict[str, Any]: ...

    def apply(self, item_id: str, action: Mapping[str, Any]) -> dict[str, Any]: ...


def static_file(name: str) -> str:
    return resources.files("goldeval.web").joinpath("static", name).read_text(encoding="utf-8")


def item_page(name: str) -> dict[str, tuple[str, str]]:
    """The request paths of one item page (`review`, `pool`): its own HTML part, script and style, and the
    shared files. Each path is spelled out, so the server looks a request up here and never in a folder."""
    return {"/": (f"{name}.html", HTML), f"/{name}.js": (f"{name}.js", SCRIPT), f"/{name}.css": (f"{name}.css", STYLE),
            **SHARED}


def page_text(name: str) -> str:
    """A page's file as served: an HTML part goes into the shared skeleton (head, header, alert box, the
    shared and the page's own script and style), so the two pages cannot drift apart in those."""
    text = static_file(name)
    if not name.endswith(".html"):
        return text
    return static_file(SKELETON).replace("{{PAGE}}", name.removesuffix(".html")).replace("{{BODY}}", text.rstrip("\n"))


STATIC = item_page("review")


class _Handler(PageHandler):
    store: ItemStore
    pages: dict[str, tuple[bytes, str]] = {}

    def answer_get(self) -> None:
        if not self.host_checked():
            raise BadRequest(HTTPStatus.FORBIDDEN, "forbidden: unexpected Host header")
        if self.route == "/api/items":
            return self.answer_json(HTTPStatus.OK, self.store.payload())
        page = self.pages.get(self.route)
        if page is None:
            raise BadRequest(HTTPStatus.NOT_FOUND, "not found")
        self.answer(HTTPStatus.OK, *page)

    def answer_post(self) -> None:
        self.write_allowed()
        if not self.route.startswith("/api/items/"):
            raise BadRequest(HTTPStatus.NOT_FOUND, "not found")
        action = json_body(self.headers, self.rfile, "the action")
        try:
            item = self.store.apply(unquote(self.route[len("/api/items/"):]), action)
        except (ValueError, GoldevalError) as exc:
            raise BadRequest(HTTPStatus.BAD_REQUEST, str(exc)) from None
        self.answer_json(HTTPStatus.OK, {"item": item})


class ReviewServer(PageServer):
    """Serves one ItemStore (`PageServer`: daemon threads, silent about clients that went away)."""

    name = "review"


Pages = Mapping[str, tuple[str, str]]
"""Request path -> (file name in `goldeval/web/static/`, content type): the page a review server serves
(`item_page(name)` spells one out)."""


def make_review_server(store: ItemStore, *, host: str = "127.0.0.1", port: int = 8766, quiet: bool = True,
                       pages: Pages = STATIC, name: str = "review") -> ReviewServer:
    """Bind a review server (port 0 picks a free one); `serve_forever()` it, or `start_in_thread`.

    `pages` is the page it serves (default: the synthetic-question review); another page (the pooled
    judging of `goldeval.web.pool`) brings its own files, and gets the same checks: exact paths, Host and
    Origin, a fresh session token (written where the page's files say `{{TOKEN}}`) on every POST."""
    token = secrets.token_urlsafe(24)
    bodies = {path: (page_text(file).replace("{{TOKEN}}", token).encode("utf-8"), ctype)
              for path, (file, ctype) in pages.items()}
    handler = type("ReviewHandler", (_Handler,), {"store": store, "token": token, "pages": bodies, "name": name,
                                                 "allowed_hosts": allowed_hosts(host), "quiet": quiet})
    server_class = type("ReviewServer", (ReviewServer,), {"name": name})
    return bind(server_class, host, port, handler)


def start_in_thread(server: ReviewServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name="goldeval-review", daemon=True)
    thread.start()
    return thread
