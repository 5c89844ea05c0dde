"""The review and pool pages, both on the one server, share one copy of the item pages' script, style and HTML
skeleton (`goldeval/web/static/items.*`), served by exact path with the same security headers; any other path
is 404, and a server given one page serves only that one's files."""

from __future__ import annotations

import http.client
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from goldeval.golden.io import load_golden
from goldeval.judging.edits import GoldenFile
from goldeval.judging.pool import build_pool
from goldeval.synth.review import ReviewSession
from goldeval.web.app import AppServer, make_server, start_in_thread
from goldeval.web.handler import CSP, TOKEN_HEADER
from goldeval.web.pool import PoolStore
from hang_guard import HANG_GUARD
from test_pool_edits import GOLDEN, _card
from test_review_session import make_candidates

SECURITY = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": CSP}


@contextmanager
def running(server: AppServer) -> Iterator[AppServer]:
    thread = start_in_thread(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=HANG_GUARD)


def get(server: AppServer, path: str, token: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """GET `path`; with the session token as the page's own scripts send it, when given."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=HANG_GUARD)
    conn.request("GET", path, headers={TOKEN_HEADER: token} if token else {})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, dict(response.getheaders()), body


def token(server: AppServer) -> str:
    return server.RequestHandlerClass.token  # type: ignore[attr-defined, no-any-return]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, AppServer]]:
    """The one server with both item pages, and one with the pool page only, started once: these tests only read."""
    tmp_path = tmp_path_factory.mktemp("pages")
    review = ReviewSession(make_candidates(tmp_path, 1), tmp_path / "g.jsonl", reviewer="cy")
    golden = tmp_path / "golden.jsonl"
    shutil.copy(GOLDEN, golden)
    pool = PoolStore(build_pool([_card({"h01": ["git/git-branch.md"]})], ["r"], load_golden(golden), k=5),
                     GoldenFile(golden, judge="ana"))
    with running(make_server(review=review, pool=pool, port=0)) as both, running(make_server(pool=pool, port=0)) as alone:
        yield {"both": both, "pool only": alone}


def test_both_pages_link_the_shared_files_served_with_the_same_headers(servers: dict[str, AppServer]) -> None:
    server = servers["both"]
    shared: dict[str, bytes] = {}
    for name in ("review", "pool"):
        status, headers, html = get(server, f"/{name}")
        page = html.decode()
        assert status == 200 and f"<title>goldeval {name}</title>" in page and "{{" not in page
        assert f'<body data-page="{name}">' in page  # items.js finds the page's API at /api/NAME/items
        for asset in ("/items.css", f"/{name}.css", "/items.js", f"/{name}.js"):
            assert asset in page  # the skeleton links the shared files, then the page's own
        assert page.index("/items.js") < page.index(f"/{name}.js") and page.index("/items.css") < page.index(f"/{name}.css")
    for path, ctype in (("/items.js", "text/javascript"), ("/items.css", "text/css")):
        for one in servers.values():
            status, headers, body = get(one, path)
            assert status == 200 and headers["Content-Type"] == f"{ctype}; charset=utf-8"
            assert {k: headers[k] for k in SECURITY} == SECURITY
            assert shared.setdefault(path, body) == body  # one file, the same from both servers
    assert b"async function send(" in shared["/items.js"] and b"function move(" in shared["/items.js"]


UNKNOWN = ("/items.html", "/items.jss", "/static/items.js", "/../static/items.js", "/%2e%2e/static/items.css",
           "/items.js/", "/web/static/items.css", "/..%2fpyproject.toml", "/items.js%00.html", "/pool/", "/review/x")
UNKNOWN_API = ("/api/items", "/api/pool/items/", "/api/pool/items/../../pool.js", "/api/%2e%2e/pool.js")


def test_an_unknown_asset_path_is_404_with_the_security_headers(servers: dict[str, AppServer]) -> None:
    for server in servers.values():
        for path in UNKNOWN:
            status, headers, _ = get(server, path)
            assert (path, status) == (path, 404) and {k: headers[k] for k in SECURITY} == SECURITY
        for path in UNKNOWN_API:  # the API says whether a path exists to the page only (its token)
            status, headers, _ = get(server, path)
            assert (path, status) == (path, 403) and {k: headers[k] for k in SECURITY} == SECURITY
            status, headers, _ = get(server, path, token(server))
            assert (path, status) == (path, 404) and {k: headers[k] for k in SECURITY} == SECURITY


def test_a_server_serves_only_the_pages_it_was_given(servers: dict[str, AppServer]) -> None:
    alone = servers["pool only"]
    for path in ("/review", "/review.js", "/review.css", "/api/review/items", "/api/results.json", "/results.json", "/app.js"):
        assert get(alone, path, token(alone))[0] == 404, path
    assert get(alone, "/pool.js")[0] == get(servers["both"], "/review.js")[0] == 200
