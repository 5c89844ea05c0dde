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
"""

from __future__ import annotations

import errno
import hmac
import json
import secrets
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from goldeval.errors import GoldevalError, InputError
from goldeval.report.page import SCRIPTS, static_text
from goldeval.textsafe import redact
from goldeval.web.lifecycle import PageLifecycle
from goldeval.web.live import FixedResults, ResultsSource, version_body

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

SECURITY_HEADERS = (("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                    ("Referrer-Policy", "no-referrer"), ("Content-Security-Policy", CSP))
"""Sent with every answer of every goldeval page server (serve, review, pool): one list, so they cannot drift."""

JSON = "application/json; charset=utf-8"
# path -> (static file name, content type); `/results.json` and `/version` come from the results source
ROUTES: dict[str, tuple[str, str]] = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    **{f"/{name}": (name, "text/javascript; charset=utf-8") for name in SCRIPTS},
}
DYNAMIC = ("/results.json", "/version", "/lifecycle.json")
FIX_PATH = "/api/fix"
TOKEN_HEADER = "X-Goldeval-Token"
TOKEN_MARK = "<!--goldeval:token-->"
MAX_BODY = 64 * 1024


class BadBody(Exception):
    """A POST whose body is not one JSON object of at most MAX_BODY bytes: the status to answer, and why."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def json_body(headers: Any, rfile: Any, what: str) -> dict[str, Any]:
    """The JSON object a POST carries (every page server reads its actions this way); BadBody otherwise:
    not sent as JSON (415), a Content-Length that is not 1 to MAX_BODY bytes or not a number (413, never
    a dropped connection and a traceback), not JSON or not an object (400)."""
    if not headers.get("Content-Type", "").startswith("application/json"):
        raise BadBody(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON")
    try:
        length = int(headers.get("Content-Length") or 0)
    except ValueError:
        length = 0
    if not 0 < length <= MAX_BODY:
        raise BadBody(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body must be 1 to {MAX_BODY} bytes")
    try:
        data = json.loads(rfile.read(length))
    except ValueError as exc:
        raise BadBody(HTTPStatus.BAD_REQUEST, str(exc)) from None
    if not isinstance(data, dict):
        raise BadBody(HTTPStatus.BAD_REQUEST, f"{what} must be a JSON object")
    return data


@dataclass
class _Content:
    body: bytes
    content_type: str


def _contents(token: str | None = None) -> dict[str, _Content]:
    """The page's files, read once up front; with a `token` (label fixes on), the page carries it."""
    meta = f'<meta name="goldeval-token" content="{token}">' if token else ""
    return {path: _Content(static_text(name).replace(TOKEN_MARK, meta).encode("utf-8"), ctype)
            for path, (name, ctype) in ROUTES.items()}


def host_allowed(host: str | None, allowed: frozenset[str] | None) -> bool:
    """Whether a Host header names an allowed host (any, when `allowed` is None): DNS rebinding."""
    if allowed is None or host is None:
        return True
    name = host.strip().lower()
    name = name[1 : name.find("]")] if name.startswith("[") else name.rsplit(":", 1)[0]
    return name in allowed


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether an Origin header, when there is one, is this server (a write from another site is not)."""
    return origin is None or origin == f"http://{host or ''}"


class _Handler(BaseHTTPRequestHandler):
    server_version = "goldeval"
    sys_version = ""
    contents: dict[str, _Content] = {}
    source: ResultsSource
    lifecycle: PageLifecycle
    token = ""
    quiet = True
    allowed_hosts: frozenset[str] | None = None
    """Host header names accepted (without port); None accepts any (when bound beyond loopback)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(send_body=False)

    def _answer(self, *, send_body: bool) -> None:
        # Exact lookup of the raw path (query string dropped): no decoding, no joining, no file system.
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        content = self.contents.get(path)
        if path == "/lifecycle.json":
            content = _Content(self.lifecycle.body(), JSON)
        elif path in DYNAMIC:
            body, version, error = self.source.current()
            content = _Content(body if path == "/results.json" else
                               version_body(version, error, self.lifecycle.signature()), JSON)
        if not self._host_allowed():
            body = b"403 forbidden: unexpected Host header\n"
            self.send_response(HTTPStatus.FORBIDDEN)
            self._headers("text/plain; charset=utf-8", len(body))
        elif content is None:
            body = b"404 not found\n"
            self.send_response(HTTPStatus.NOT_FOUND)
            self._headers("text/plain; charset=utf-8", len(body))
        else:
            body = content.body
            self.send_response(HTTPStatus.OK)
            self._headers(content.content_type, len(body))
        if send_body:
            self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        """A label fix (the only write); every other POST is not implemented, as before."""
        if self.path.split("?", 1)[0] != FIX_PATH:
            self.send_error(HTTPStatus.NOT_IMPLEMENTED)
            return
        if not self._host_allowed() or not same_origin(self.headers.get("Origin"), self.headers.get("Host")):
            return self._json(HTTPStatus.FORBIDDEN, {"error": "forbidden: not this page"})
        if not self.lifecycle.fixes_enabled or not self.token:
            return self._json(HTTPStatus.NOT_FOUND, {"error": "label fixes are off: start goldeval serve with --golden"})
        if not hmac.compare_digest(self.headers.get(TOKEN_HEADER, ""), self.token):
            return self._json(HTTPStatus.FORBIDDEN, {"error": "forbidden: missing or wrong session token"})
        try:
            action = json_body(self.headers, self.rfile, "the fix")
        except BadBody as bad:
            return self._json(bad.status, {"error": bad.message})
        try:
            fixes = self.lifecycle.apply(action)
        except (ValueError, GoldevalError) as exc:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        self._json(HTTPStatus.OK, {"fixes": fixes})

    def _json(self, status: HTTPStatus, data: Any) -> None:
        body = redact(json.dumps(data, ensure_ascii=False)).encode("utf-8")
        self.send_response(status)
        self._headers(JSON, len(body))
        self.wfile.write(body)

    def _host_allowed(self) -> bool:
        return host_allowed(self.headers.get("Host"), self.allowed_hosts)

    def _headers(self, content_type: str, length: int) -> None:
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        for name, value in SECURITY_HEADERS:
            self.send_header(name, value)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        if not self.quiet:
            sys.stderr.write(f"goldeval serve: {self.address_string()} {format % args}\n")


class ScorecardServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that serves one payload; `url` is the address to open."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that went away mid-answer (a closed tab, a reload) is normal, not a traceback; any
        other failure of one request is one line on stderr, and the server goes on."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        sys.stderr.write(f"goldeval serve: a request failed: {type(error).__name__}: {error}\n")

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


class _ScorecardServer6(ScorecardServer):
    address_family = socket.AF_INET6


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
    allowed = frozenset(LOOPBACK | {host.strip("[]").lower()}) if is_loopback(host) else None
    handler = type("Handler", (_Handler,), {"contents": _contents(token), "source": source, "quiet": quiet,
                                            "allowed_hosts": allowed, "lifecycle": lifecycle, "token": token})
    server_class: type[ScorecardServer] = ScorecardServer
    if ":" in host:
        server_class = _ScorecardServer6
    try:
        return server_class((host, port), handler)
    except OSError as exc:
        raise _listen_error(host, port, exc) from None


def _listen_error(host: str, port: int, exc: OSError) -> InputError:
    """Say which of --host and --port is the problem: a name that does not resolve or an address that is
    not this machine's is the host; a port in use or below 1024 is the port."""
    reason = exc.strerror or str(exc)
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return InputError(f"cannot listen on --host {host!r}: {reason}", value=host,
                          hint="--host takes an address of this machine, e.g. 127.0.0.1 (this machine only), "
                          "0.0.0.0 (every interface) or ::1")
    if exc.errno == errno.EACCES:
        return InputError(f"cannot listen on port {port}: {reason}", value=port,
                          hint="ports below 1024 need privileges; choose --port 8765, or 0 for a free one")
    return InputError(f"cannot listen on {host}:{port}: {reason}", value=port,
                      hint="choose another port with --port N (0 picks a free one)")


def start_in_thread(server: ScorecardServer) -> threading.Thread:
    """Serve in a daemon thread (for tests and notebooks); stop with `server.shutdown()`."""
    thread = threading.Thread(target=server.serve_forever, name="goldeval-serve", daemon=True)
    thread.start()
    return thread


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    return host in LOOPBACK or host.startswith("127.")
