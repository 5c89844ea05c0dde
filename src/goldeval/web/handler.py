"""How the one goldeval server (`goldeval.web.app`) reads, checks and answers a request, whichever page
(scorecard, pool, review) it is for.

- **One request reader** (`json_body`): a POST's body is one JSON object of at most `MAX_BODY` bytes,
  nested at most `MAX_DEPTH` levels, without lone surrogates; anything else is a `BadRequest` with its
  status (415, 413, 400) and one line saying why. JSON too deep for Python's parser (a 60 KB `[[[[...`,
  issue 20) and numbers Python will not read are 400s like any other malformed body.
- **One token check** (`token_ok`): the session token is compared as bytes, so a header holding
  non-ASCII text is a wrong token (403), not a `TypeError` from `hmac.compare_digest`.
- **One error answer** (`PageHandler`): every 4xx and 5xx, those `http.server` sends itself (a malformed
  request line, a path too long) included, is one line of JSON, `{"error": "..."}`, with the security
  headers. A request whose answer fails (the golden set behind the page replaced by a file that does not
  read) answers 500 with that error's message and says it in one line on stderr; a client that went away
  (a reset, a closed tab, a request that stalls past `REQUEST_TIMEOUT`) is silent. No traceback, ever.
- **One server class** (`PageServer`): daemon threads, `handle_error`, `url`, and the messages for an
  address or port it cannot listen on.
"""

from __future__ import annotations

import errno
import hmac
import json
import socket
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar, cast

from goldeval.errors import GoldevalError, InputError
from goldeval.textsafe import clean, lone_surrogate, redact

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                    ("Referrer-Policy", "no-referrer"), ("Content-Security-Policy", CSP))
"""Sent with every answer of the one server, whichever page and whatever status: one list, so they cannot drift.
No Access-Control-* header is ever sent: no other origin may read an answer or send a preflighted write."""
JSON = "application/json; charset=utf-8"
TOKEN_HEADER = "X-Goldeval-Token"
TOKEN_HINT = f'send the content of the page\'s <meta name="goldeval-token"> as {TOKEN_HEADER}'
"""How a request shows it is the page's: what a refusal, or a moved path, tells a script of the user's own."""
API_PREFIX = "/api/"
"""The pages' API: every path under it, read or write, answers only a request from the page itself (its
session token, Host, Origin: `PageHandler.from_page`), and every page's data lives under it (the scorecard's
results, version and lifecycle, the item pages' items; `goldeval.web.routes.Routes` refuses a read
elsewhere). What lies outside it is page scaffolding: HTML, scripts, styles, the icon (docs/web.md, Safety)."""
MAX_BODY = 64 * 1024
"""Bytes of a POST body: a page's action is a few hundred bytes; a reason is at most 2,000 characters."""
MAX_DEPTH = 16
"""Nesting of a POST body: an action is an object holding strings, numbers and lists of strings (2 levels)."""
REQUEST_TIMEOUT = 60
"""Seconds a client may stall while sending a request before the server drops it (never a thread waiting forever)."""


class BadRequest(Exception):
    """A request the server refuses: the status to answer, why (one line), and any header the status needs."""

    def __init__(self, status: HTTPStatus, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def json_body(headers: Any, rfile: Any, what: str) -> dict[str, Any]:
    """The JSON object a POST carries (every page server reads its actions here); BadRequest otherwise:
    not sent as JSON (415), a Content-Length that is not 1 to MAX_BODY bytes or not a number (413), a body
    cut short, not JSON, nested past MAX_DEPTH or too deep to parse, a number Python will not read, a lone
    surrogate, or not an object (400)."""
    if not headers.get("Content-Type", "").startswith("application/json"):
        raise BadRequest(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send JSON")
    try:
        length = int(headers.get("Content-Length") or 0)
    except ValueError:
        length = 0
    if not 0 < length <= MAX_BODY:
        raise BadRequest(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body must be 1 to {MAX_BODY} bytes")
    raw = rfile.read(length)
    if len(raw) != length:
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"body cut short: {len(raw)} of {length} bytes")
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"{what}: JSON nested too deeply to read") from None
    except ValueError as exc:  # malformed JSON, not UTF-8, an integer of more than 4,300 digits
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"{what} is not JSON: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"{what} must be a JSON object")
    if depth(data) > MAX_DEPTH:
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"{what} is nested more than {MAX_DEPTH} levels deep")
    surrogate = lone_surrogate(data)
    if surrogate is not None:
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"{what} holds a lone surrogate, not Unicode text: {surrogate}")
    return data


def depth(value: Any) -> int:
    """How deeply a parsed JSON value nests (a scalar is 0, `[]` is 1); iterative, so no depth exhausts the stack."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level + 1)
            stack.extend((inner, level + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return deepest


def token_ok(given: str | None, token: str) -> bool:
    """Whether a request's session token is the page's. Compared as bytes (the header's text is Latin-1,
    as `http.server` decodes it): a non-ASCII token is simply wrong, never a TypeError."""
    if not token or given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode("utf-8"))


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


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    return host in LOOPBACK or host.startswith("127.")


def allowed_hosts(host: str) -> frozenset[str] | None:
    """The Host header names a server bound to `host` accepts: this machine's on loopback, any beyond it."""
    return frozenset(LOOPBACK | {host.strip("[]").lower()}) if is_loopback(host) else None


def json_bytes(data: Any) -> bytes:
    """A JSON answer's body: UTF-8, credentials redacted (every JSON the server sends goes through here)."""
    return redact(json.dumps(data, ensure_ascii=False)).encode("utf-8")


def one_line(error: BaseException) -> str:
    """An error as the one line a page server answers and prints: a GoldevalError's own message (its hint
    after `;`), anything else as `internal error: Type: message`; credentials redacted."""
    text = str(error) if isinstance(error, GoldevalError) else f"internal error: {type(error).__name__}: {error}"
    return redact("; ".join(part.strip() for part in text.splitlines() if part.strip()))


class PageHandler(BaseHTTPRequestHandler):
    """The request handling of the one server (`goldeval.web.app` defines `answer_get`, for GET and HEAD,
    and `answer_post`); every answer goes through `answer` and `answer_json`."""

    server_version = "goldeval"
    sys_version = ""
    timeout = REQUEST_TIMEOUT
    name = "serve"
    """Who speaks on stderr: `goldeval serve:`, or the command that started the server (`review`, `pool`)."""
    token = ""
    allowed_hosts: frozenset[str] | None = None
    """Host header names accepted (without port); None accepts any (when bound beyond loopback)."""
    quiet = True
    _answered = False

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._guarded(self.answer_get)

    def do_HEAD(self) -> None:  # noqa: N802
        self._guarded(self.answer_get)

    def do_POST(self) -> None:  # noqa: N802
        self._guarded(self.answer_post)

    def answer_get(self) -> None:
        self.send_error(HTTPStatus.NOT_FOUND)

    def answer_post(self) -> None:
        self.send_error(HTTPStatus.NOT_IMPLEMENTED)

    @property
    def route(self) -> str:
        """The request's path, query and fragment dropped: looked up exactly, never decoded or joined."""
        return self.path.split("?", 1)[0].split("#", 1)[0]

    def _guarded(self, answer: Callable[[], None]) -> None:
        """Answer one request; whatever goes wrong is one line, never a traceback or a dropped answer."""
        self._answered = False
        try:
            answer()
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away: nothing to answer, nothing to say
        except BadRequest as bad:
            self.answer_json(bad.status, {"error": bad.message}, bad.headers)
        except Exception as exc:  # noqa: BLE001 - one request's failure is its answer, and the server goes on
            message = one_line(exc)
            sys.stderr.write(f"goldeval {self.name}: {self.command} {clean(self.route, limit=200)}: {clean(message)}\n")
            if not self._answered:
                self.answer_json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": message})
            self.close_connection = True

    def host_checked(self) -> bool:
        return host_allowed(self.headers.get("Host"), self.allowed_hosts)

    def same_page(self) -> bool:
        """Whether the Host header names this machine (on loopback) and an Origin header, if any, this server."""
        return self.host_checked() and same_origin(self.headers.get("Origin"), self.headers.get("Host"))

    def from_page(self) -> None:
        """Refuse (403) a request that is not from this page: another Host or Origin, or not its session
        token. Every POST and every request under `API_PREFIX` goes through it: a page's data (the results,
        the golden set's questions and passages) is read as it is written, with the token."""
        if not self.same_page():
            raise BadRequest(HTTPStatus.FORBIDDEN, "forbidden: not this page")
        if not token_ok(self.headers.get(TOKEN_HEADER), self.token):
            raise BadRequest(HTTPStatus.FORBIDDEN, f"forbidden: missing or wrong session token ({TOKEN_HINT})")

    def answer_json(self, status: HTTPStatus, data: Any, headers: dict[str, str] | None = None) -> None:
        self.answer(status, json_bytes(data), JSON, headers)

    def answer(self, status: HTTPStatus, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        """Send one answer with the security headers (no body for HEAD). After an error the connection is
        closed: a body the server did not read must not be taken for the next request."""
        self._answered = True
        if status >= 400:
            self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", content_type if "charset" in content_type else content_type + "; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (*SECURITY_HEADERS, *(headers or {}).items()):
            self.send_header(name, value)
        if status >= 400:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every error `http.server` answers itself (a malformed request line, a header too long, a method
        not implemented) is one line of JSON with the security headers too, never its HTML page."""
        status = HTTPStatus(code)
        self.log_error("code %d, message %s", code, message)
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.0"  # refused before its version was read: still a status line and headers
        self.answer_json(status, {"error": message or status.phrase.lower()})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        if not self.quiet:  # the request line is the client's text: cleaned before it reaches the terminal
            sys.stderr.write(f"goldeval {self.name}: {self.address_string()} {clean(format % args)}\n")


class PageServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer; `url` is its address."""

    daemon_threads = True
    name = "serve"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that went away mid-answer (a closed tab, a reload, a reset) is normal, not a traceback;
        any other failure of one request outside its answer is one line on stderr, and the server goes on."""
        error = sys.exc_info()[1]
        if error is None or isinstance(error, (ConnectionError, TimeoutError)):
            return
        sys.stderr.write(f"goldeval {self.name}: a request failed: {clean(one_line(error).removeprefix('internal error: '))}\n")

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


Server = TypeVar("Server", bound=PageServer)


def bind(server_class: type[Server], host: str, port: int, handler: type[PageHandler]) -> Server:
    """`server_class` listening on host:port (IPv6 for an address with a colon), or the InputError of
    `listen_error`."""
    if ":" in host:
        server_class = cast("type[Server]", type(server_class.__name__, (server_class,),
                                                 {"address_family": socket.AF_INET6}))
    try:
        return server_class((host, port), handler)
    except OSError as exc:
        raise listen_error(host, port, exc) from None


def listen_error(host: str, port: int, exc: OSError) -> InputError:
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
