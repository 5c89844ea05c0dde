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
CORS preflight, which is never granted).
"""

from __future__ import annotations

import hmac
import json
import secrets
import socket
import sys
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Protocol
from urllib.parse import unquote

from goldeval.errors import GoldevalError, InputError
from goldeval.textsafe import redact
from goldeval.web.server import (
    LOOPBACK,
    SECURITY_HEADERS,
    BadBody,
    host_allowed,
    is_loopback,
    json_body,
    same_origin,
)

HTML = "text/html; charset=utf-8"
SCRIPT = "text/javascript; charset=utf-8"
STYLE = "text/css; charset=utf-8"
SHARED = {"/items.js": ("items.js", SCRIPT), "/items.css": ("items.css", STYLE)}
"""What every item page (review, pool) shares: one copy of the send/move script and the header styles."""
SKELETON = "items.html"
JSON = "application/json; charset=utf-8"
TOKEN_HEADER = "X-Goldeval-Token"


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


class _Handler(BaseHTTPRequestHandler):
    server_version = "goldeval"
    sys_version = ""
    store: ItemStore
    token: str = ""
    pages: dict[str, tuple[bytes, str]] = {}
    allowed_hosts: frozenset[str] | None = None
    quiet = True

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if not self._host_allowed():
            return self._send(HTTPStatus.FORBIDDEN, b"403 forbidden: unexpected Host header\n", "text/plain")
        if path == "/api/items":
            return self._json(HTTPStatus.OK, self.store.payload())
        page = self.pages.get(path)
        if page is None:
            return self._send(HTTPStatus.NOT_FOUND, b"404 not found\n", "text/plain")
        self._send(HTTPStatus.OK, *page)

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        if not self._host_allowed() or not self._same_origin():
            return self._json(HTTPStatus.FORBIDDEN, {"error": "forbidden: not this page"})
        if not hmac.compare_digest(self.headers.get(TOKEN_HEADER, ""), self.token):
            return self._json(HTTPStatus.FORBIDDEN, {"error": "forbidden: missing or wrong session token"})
        if not path.startswith("/api/items/"):
            return self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
        try:
            action = json_body(self.headers, self.rfile, "the action")
        except BadBody as bad:
            return self._json(bad.status, {"error": bad.message})
        try:
            item = self.store.apply(unquote(path[len("/api/items/"):]), action)
        except (ValueError, GoldevalError) as exc:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        self._json(HTTPStatus.OK, {"item": item})

    def _host_allowed(self) -> bool:
        return host_allowed(self.headers.get("Host"), self.allowed_hosts)

    def _same_origin(self) -> bool:
        return same_origin(self.headers.get("Origin"), self.headers.get("Host"))

    def _json(self, status: HTTPStatus, data: Any) -> None:
        self._send(status, redact(json.dumps(data, ensure_ascii=False)).encode("utf-8"), JSON)

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type if "charset" in content_type else content_type + "; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        if not self.quiet:
            sys.stderr.write(f"goldeval review: {self.address_string()} {format % args}\n")


class ReviewServer(ThreadingHTTPServer):
    """Serves one ItemStore; `url` is the address to open."""

    daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


class _ReviewServer6(ReviewServer):
    address_family = socket.AF_INET6


Pages = Mapping[str, tuple[str, str]]
"""Request path -> (file name in `goldeval/web/static/`, content type): the page a review server serves
(`item_page(name)` spells one out)."""


def make_review_server(store: ItemStore, *, host: str = "127.0.0.1", port: int = 8766, quiet: bool = True,
                       pages: Pages = STATIC) -> ReviewServer:
    """Bind a review server (port 0 picks a free one); `serve_forever()` it, or `start_in_thread`.

    `pages` is the page it serves (default: the synthetic-question review); another page (the pooled
    judging of `goldeval.web.pool`) brings its own files, and gets the same checks: exact paths, Host and
    Origin, a fresh session token (written where the page's files say `{{TOKEN}}`) on every POST."""
    token = secrets.token_urlsafe(24)
    bodies = {path: (page_text(name).replace("{{TOKEN}}", token).encode("utf-8"), ctype)
              for path, (name, ctype) in pages.items()}
    allowed = frozenset(LOOPBACK | {host.strip("[]").lower()}) if is_loopback(host) else None
    handler = type("ReviewHandler", (_Handler,), {"store": store, "token": token, "pages": bodies,
                                                 "allowed_hosts": allowed, "quiet": quiet})
    server_class = _ReviewServer6 if ":" in host else ReviewServer
    try:
        return server_class((host, port), handler)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", value=port,
                         hint="choose another port with --port N (0 picks a free one)") from None


def start_in_thread(server: ReviewServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name="goldeval-review", daemon=True)
    thread.start()
    return thread
