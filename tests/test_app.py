"""The one page server (issue 22): the scorecard, the pool and the review on one port, every route answered
with the one set of security headers, every write held to the same limits (token, Origin, Host, the body
reader), bound to 127.0.0.1 by default. The pages' own behaviour is tested beside each page
(test_web_server.py, test_page_lifecycle.py, test_item_pages.py, test_review_session.py)."""

from __future__ import annotations

import http.client
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.golden.io import load_golden
from goldeval.judging.edits import GoldenFile
from goldeval.judging.pool import build_pool
from goldeval.report.page import SCRIPTS
from goldeval.scorecard import Scorecard
from goldeval.synth.review import ReviewSession
from goldeval.web.app import AppServer, make_server, start_in_thread
from goldeval.web.handler import CSP, MAX_BODY, MAX_DEPTH, TOKEN_HEADER
from goldeval.web.live import ResultsFiles
from goldeval.web.pool import PoolStore
from goldeval.web.routes import Page, Routes
from hang_guard import HANG_GUARD
from lifecycle_fixtures import World, world  # noqa: F401 - fixture
from test_review_session import make_candidates

SECURITY = {"cache-control": "no-store", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
            "content-security-policy": CSP}
"""Written out here, not read from the code: what every answer must carry."""


@pytest.fixture(scope="module")
def app(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppServer, Path, Path]]:  # noqa: F811
    """The one server with all three pages over one golden set (label fixes on); yields it, the golden set
    and the candidates file."""
    tmp = tmp_path_factory.mktemp("app")
    golden = world.golden_copy(tmp / "g")
    candidates = make_candidates(tmp, 1)
    pool = build_pool([Scorecard.load(world.results)], ["r"], load_golden(golden), k=10)
    assert pool.items, "the world's results leave passages unjudged in their top 10"
    server = make_server(ResultsFiles([world.results]), pool=PoolStore(pool, GoldenFile(golden, judge="ana")),
                         review=ReviewSession(candidates, golden, reviewer="ana"), port=0, golden=golden, judge="ana")
    thread = start_in_thread(server)
    try:
        yield server, golden, candidates
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=HANG_GUARD)


def call(server: AppServer, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=HANG_GUARD)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    out = response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    conn.close()
    return out


def token(server: AppServer) -> str:
    return server.RequestHandlerClass.token  # type: ignore[attr-defined, no-any-return]


def page_headers(server: AppServer) -> dict[str, str]:
    """What the pages' own scripts send with a request to the API: the session token."""
    return {TOKEN_HEADER: token(server)}


def write_paths(server: AppServer) -> list[str]:
    pooled = json.loads(call(server, "GET", "/api/pool/items", headers=page_headers(server))[2])["items"][0]["id"]
    reviewed = json.loads(call(server, "GET", "/api/review/items", headers=page_headers(server))[2])["items"][0]["id"]
    return ["/api/fix", f"/api/pool/items/{pooled}", f"/api/review/items/{reviewed}"]


def assert_headers(what: str, headers: dict[str, str]) -> None:
    assert {k: headers.get(k) for k in SECURITY} == SECURITY, what
    assert not [k for k in headers if k.startswith("access-control")], what  # no CORS, ever


SCAFFOLDING = ["/", "/index.html", "/style.css", *[f"/{name}" for name in SCRIPTS], "/pool", "/pool.js", "/pool.css",
               "/review", "/review.js", "/review.css", "/items.js", "/items.css", "/favicon.ico", "/favicon.svg"]
"""What a page needs to load, readable without the token."""
DATA = ["/api/results.json", "/api/version", "/api/lifecycle.json", "/api/pool/items", "/api/review/items"]
"""Every page's data: the scorecard's results, live-reload version and lifecycle, the item pages' items."""
PAGES = SCAFFOLDING + DATA


def assert_refused_without_the_token(server: AppServer, path: str, private: tuple[bytes, ...]) -> None:
    """`path` answers 403 (the refusal's headers, a JSON error, none of the `private` words) to GET and HEAD
    without the session token, with a wrong one, or with the token from another Origin or Host."""
    good = page_headers(server)
    refused = [{}, {TOKEN_HEADER: "guess"}, {TOKEN_HEADER: token(server)[:-1]}, {TOKEN_HEADER: "t\u00e9"},
               {**good, "Origin": "http://evil.example"}, {**good, "Origin": "null"}, {**good, "Host": "evil.example"}]
    for method in ("GET", "HEAD"):
        for headers in refused:
            status, answer, text = call(server, method, path, headers=headers)
            assert (path, method, status) == (path, method, 403), headers
            assert_headers(path, answer)
            assert method == "HEAD" or set(json.loads(text)) == {"error"}
            assert not any(word in text for word in private), (path, text)


def test_every_page_is_on_one_port_of_127_0_0_1(app: tuple[AppServer, Path, Path]) -> None:
    server, _, _ = app
    port = server.server_address[1]
    assert server.server_address[0] == "127.0.0.1" and server.pages == ("scorecard", "pool", "review")
    assert [server.page_url(p) for p in server.pages] == [f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}/pool",
                                                          f"http://127.0.0.1:{port}/review"]
    for path in PAGES:
        status, headers, body = call(server, "GET", path, headers=page_headers(server) if path.startswith("/api/") else None)
        assert status == 200 and body, path
        assert_headers(path, headers)
    assert call(server, "GET", "/favicon.ico")[1]["content-type"] == "image/svg+xml; charset=utf-8"
    for page in ("/", "/pool", "/review"):  # one session token, in every page that writes
        assert f'content="{token(server)}"' in call(server, "GET", page)[2].decode()


def test_every_refusal_carries_the_same_headers(app: tuple[AppServer, Path, Path]) -> None:
    server, _, _ = app
    refusals = [("GET", "/nope", None, {}, 404), ("GET", "/pool/../results.json", None, {}, 404),
                ("GET", "/pool", None, {"Host": "evil.example"}, 403), ("POST", "/pool", b"{}", {}, 405),
                ("POST", "/api/nope", b"{}", {TOKEN_HEADER: token(server), "Content-Type": "application/json"}, 404),
                ("OPTIONS", "/api/fix", None, {"Origin": "http://evil.example",
                                               "Access-Control-Request-Method": "POST"}, 501),
                ("PUT", "/api/fix", b"{}", {}, 501)]
    for method, path, body, headers, expected in refusals:
        status, answer, text = call(server, method, path, body, headers)
        assert status == expected, (method, path)
        assert_headers(f"{method} {path}", answer)
        assert set(json.loads(text)) == {"error"}  # one line of JSON
        assert answer.get("allow") == ("GET, HEAD" if expected == 405 else None)


def test_every_write_is_held_to_the_same_limits(app: tuple[AppServer, Path, Path]) -> None:
    server, golden, candidates = app
    before = golden.read_bytes(), candidates.read_bytes()
    good = {TOKEN_HEADER: token(server), "Content-Type": "application/json"}
    nested = json.dumps({"a": json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)}).encode()
    cases = [(b"{}", {"Content-Type": "application/json"}, 403),  # no token
             (b"{}", {**good, TOKEN_HEADER: "guess"}, 403), (b"{}", {**good, TOKEN_HEADER: "t\u00e9"}, 403),
             (b"{}", {**good, "Origin": "http://evil.example"}, 403), (b"{}", {**good, "Host": "evil.example"}, 403),
             (b"{}", {**good, "Content-Type": "text/plain"}, 415), (b"x" * (MAX_BODY + 1), good, 413),
             (nested, good, 400), (b"[1, 2]", good, 400), (b"{not json", good, 400)]
    for path in write_paths(server):
        for body, headers, expected in cases:
            status, answer, text = call(server, "POST", path, body, headers)
            assert (path, status) == (path, expected), (headers, body[:40])
            assert_headers(path, answer)
            assert json.loads(text)["error"]
    assert (golden.read_bytes(), candidates.read_bytes()) == before  # nothing refused was written


def test_items_answered_without_the_session_token_are_refused(app: tuple[AppServer, Path, Path]) -> None:
    """Regression: `GET /api/*/items` answered without the session token (only the Host check guarded it),
    although the pool's and the review's items hold the golden set's questions and passages. The pages' API
    is read as it is written: token, Host and Origin, whatever the method."""
    server, _, _ = app
    good = page_headers(server)
    for path in ("/api/pool/items", "/api/review/items"):
        assert_refused_without_the_token(server, path, (b"items", b"question"))  # nothing of the items leaks
        status, answer, text = call(server, "GET", path, headers={**good, "Origin": f"http://127.0.0.1:{server.server_address[1]}"})
        assert status == 200 and json.loads(text)["items"], path  # the page itself: its token, its origin
    # whether an API path exists is said only to the page: another site learns nothing from a 404
    assert call(server, "GET", "/api/nope")[0] == call(server, "GET", "/api/pool/items/x")[0] == 403
    assert call(server, "GET", "/api/nope", headers=good)[0] == call(server, "GET", "/api/pool/items/x", headers=good)[0] == 404
    for path in ("/pool", "/review", "/items.js", "/pool.js", "/review.js", "/favicon.ico"):  # the scaffolding
        assert call(server, "GET", path)[0] == 200, path


def test_scorecard_data_answered_without_the_session_token_are_refused(app: tuple[AppServer, Path, Path]) -> None:
    """Regression: `/results.json`, `/version` and `/lifecycle.json` (the results, the live reload's version,
    the trend and the label fixes with their reasons) were answered to any request with this machine's Host,
    and the scorecard's HTML carried the token only with label fixes on. The data now lives under /api/ and
    goes through the same one check as the items and the writes; the scaffolding stays readable so the page
    loads, and its HTML always carries the token."""
    server, _, _ = app
    good = page_headers(server)
    port = server.server_address[1]
    for path in ("/api/results.json", "/api/version", "/api/lifecycle.json"):
        assert_refused_without_the_token(server, path, (b"retrievers", b"version", b"fixes"))
        status, answer, text = call(server, "GET", path, headers={**good, "Origin": f"http://127.0.0.1:{port}"})
        assert status == 200 and answer["content-type"].startswith("application/json"), path
        assert {"/api/results.json": "files", "/api/version": "lifecycle", "/api/lifecycle.json": "fixes"}[path] in json.loads(text)
    for old, new in (("/results.json", "/api/results.json"), ("/version", "/api/version"),
                     ("/lifecycle.json", "/api/lifecycle.json")):  # where 0.2.0 answered them: a 404 naming the move
        for headers in ({}, good):
            status, answer, text = call(server, "GET", old, headers=headers)
            assert status == 404 and json.loads(text)["error"].startswith(f"moved to {new}: "), old
            assert "X-Goldeval-Token" in json.loads(text)["error"] and b"retrievers" not in text
            assert_headers(old, answer)
    for path in SCAFFOLDING:  # what the page needs to load: no token
        assert call(server, "GET", path)[0] == 200, path
    for path in ("/", "/index.html"):  # the scorecard's HTML carries the token (without --golden too: test_page_lifecycle.py)
        assert f'<meta name="goldeval-token" content="{token(server)}">' in call(server, "GET", path)[2].decode()


def test_a_server_needs_a_page_and_two_pages_cannot_claim_one_path() -> None:
    with pytest.raises(ValueError, match="needs something to serve"):
        make_server(port=0)
    routes = Routes()
    routes.add(Page("a", "/a", files={"/a": (b"a", "text/plain")}))
    routes.add(Page("b", "/b", files={"/a": (b"a", "text/plain")}))  # the same file twice is one file
    with pytest.raises(ValueError, match="two pages serve /a"):
        routes.add(Page("c", "/c", files={"/a": (b"c", "text/plain")}))
    with pytest.raises(ValueError, match="two pages serve /a"):
        routes.add(Page("d", "/d", writes={"/a": lambda rest, action: {}}))
    routes.add(Page("e", "/e", reads={"/api/e": lambda: (b"e", "text/plain")}))
    with pytest.raises(ValueError, match="two pages serve /api/e"):
        routes.add(Page("f", "/f", files={"/api/e": (b"f", "text/plain")}))


def test_a_page_cannot_serve_its_data_outside_the_api() -> None:
    """A read (an answer built per request: a page's data) outside /api/ would be answered without the
    token, since the one check guards /api/: the route table refuses it when the page is mounted."""
    with pytest.raises(ValueError, match=r"reads /results\.json outside /api/: its data would answer without the token"):
        Routes().add(Page("scorecard", "/", reads={"/results.json": lambda: (b"{}", "application/json")}))


def test_serve_with_candidates_needs_golden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(Path(__file__).parent / "data" / "goldset-0.1-results.json", tmp_path / "r.json")
    assert main(["serve", str(tmp_path / "r.json"), "--candidates", str(tmp_path / "c.jsonl"), "--port", "0"]) == 2
    assert "--candidates needs --golden" in capsys.readouterr().err


def test_serve_golden_reads_each_results_file_once(world: World, tmp_path: Path,  # noqa: F811
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: `serve RESULTS --golden G` read each results file twice, once for the page and once more
    for the pool (a results file of 10k questions is hundreds of MB of JSON). One read serves both."""
    results = tmp_path / "results.json"
    shutil.copy(world.results, results)
    golden = world.golden_copy(tmp_path / "g")
    reads: list[Path] = []
    read_text = Path.read_text

    def counted(self: Path, *args: object, **kwargs: object) -> str:
        if self.resolve() == results.resolve():
            reads.append(self)
        return read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    served: list[AppServer] = []

    def serve(server: AppServer, **_: object) -> int:  # what `serve` would serve, without serving forever
        served.append(server)
        server.server_close()
        return 0

    monkeypatch.setattr(Path, "read_text", counted)
    monkeypatch.setattr("goldeval.cli.serving.serve_until_interrupted", serve)
    monkeypatch.setenv("GOLDEVAL_NO_HISTORY", "1")
    assert main(["serve", str(results), "--golden", str(golden), "--by", "ana", "--port", "0", "--no-open"]) == 0
    (server,) = served
    assert server.pages == ("scorecard", "pool")  # the pool was made, from the same read
    assert len(reads) == 1, reads
