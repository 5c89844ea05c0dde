"""Hostile requests to the one page server (issues 20, 22) as each command starts it: `goldeval serve --golden`,
`goldeval review` and `goldeval pool`, each its own process from the real command line, over real HTTP.

Every case asserts the status, that the answer is one line of JSON (`{"error": ...}`), that the server's
stderr holds no traceback, and that the server still answers afterwards: a JSON body nested 30,000 deep
(60 KB), a non-ASCII session token, a golden set replaced by junk while the page is open, clients that
reset the connection mid-request and mid-answer, a malformed request line, and a stalled body.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hostile_cases import QUESTIONS, write_jsonl

CANDIDATE = {
    "id": "syn-0000000001", "question": "how do I put my changes aside", "expected": ["git/stash.md"],
    "intent": "answerable",
    "provenance": {"kind": "synthetic", "generator": "test", "model": "none", "prompt_hash": "0", "temperature": 0.0,
                   "source_passage": "git/stash.md#1", "source_offsets": [0, 60], "created": "2025-01-01T00:00:00Z",
                   "status": "unreviewed", "history": []},
    "_source": {"doc": "git/stash.md", "title": "Stash", "text": "Put uncommitted changes aside with git stash."},
}
NESTED = b"[" * 30_000 + b"]" * 30_000
"""60 KB of nested arrays: under the body limit, far past what Python's JSON parser can nest."""
JUNK = b"\x00\xff{not a golden set\n"
HOME = {"serve": "/", "review": "/review", "pool": "/pool"}
"""Where each command opens the one server."""


@dataclass
class Page:
    """One server process: which, its port, the token its page carries, the POST path of its one write,
    the golden set it writes into, and its stderr (`err()`: what it said since the case began)."""

    kind: str
    proc: subprocess.Popen[bytes]
    port: int
    token: str
    write_path: str
    golden: Path
    stderr: Path
    said_before: int = 0

    def err(self) -> str:
        return self.stderr.read_bytes()[self.said_before:].decode("utf-8", errors="replace")


def _start(args: list[str], cwd: Path, name: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    stderr = cwd / f"{name}.stderr"
    env = {**os.environ, "GOLDEVAL_NO_HISTORY": "1"}
    env.pop("GOLDEVAL_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "goldeval", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=stderr.open("wb"))
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()  # "goldeval: serving ... at http://127.0.0.1:PORT/ ..."
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert found, f"no URL in {line!r}; stderr: {stderr.read_text()}"
    return proc, int(found.group(1)), stderr


@pytest.fixture(scope="module", params=["serve", "review", "pool"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, good_results: bytes,
           ) -> Iterator[Page]:  # fmt: skip
    """Each page server in turn (one process for every case), with label fixes / verdicts on."""
    folder = tmp_path_factory.mktemp(request.param)
    results, golden = folder / "results.json", folder / "golden.jsonl"
    results.write_bytes(good_results)
    write_jsonl(golden, QUESTIONS)
    if request.param == "serve":
        args, write = ["serve", str(results), "--golden", str(golden), "--port", "0"], "/api/fix"
    elif request.param == "review":
        candidates = write_jsonl(folder / "candidates.jsonl", [CANDIDATE])
        args, write = ["review", str(candidates), "--golden", str(golden), "--port", "0"], f"/api/review/items/{CANDIDATE['id']}"
    else:  # q1's retrieved passage left unjudged, to be pooled
        write_jsonl(golden, [{**q, "expected": ["git/branch.md"]} if q["id"] == "q1" else q for q in QUESTIONS])
        args, write = ["pool", str(results), "--golden", str(golden), "--port", "0", "--no-open"], ""
    proc, port, stderr = _start(args, folder, request.param)
    try:
        status, body = _request(port, "GET", HOME[request.param])
        assert status == 200
        token = re.search(rb'name="goldeval-token" content="([^"]+)"', body)
        assert token, body[:500]
        if not write:  # the pool's first item
            items = _request(port, "GET", "/api/pool/items", headers={"X-Goldeval-Token": token.group(1)})[1]
            write = "/api/pool/items/" + json.loads(items)["items"][0]["id"]
        yield Page(request.param, proc, port, token.group(1).decode(), write, golden, stderr)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def page(server: Page) -> Iterator[Page]:
    """The server of this case, its stderr counted from here, its golden set as it was afterwards."""
    server.said_before = server.stderr.stat().st_size
    golden = server.golden.read_bytes()
    yield server
    server.golden.write_bytes(golden)


def _request(port: int, method: str, path: str, body: bytes = b"", headers: dict[str, bytes] | None = None,
             ) -> tuple[int, bytes]:  # fmt: skip
    """One HTTP/1.0 request written by hand (header bytes as given: http.client would refuse non-ASCII);
    the status and the body."""
    lines = [f"{method} {path} HTTP/1.0".encode(), f"Host: 127.0.0.1:{port}".encode()]
    lines += [name.encode() + b": " + value for name, value in (headers or {}).items()]
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, rest = reply.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), rest


def _post(page: Page, body: bytes, token: bytes | None = None) -> tuple[int, bytes]:
    headers = {"Content-Type": b"application/json", "Content-Length": str(len(body)).encode(),
               "X-Goldeval-Token": page.token.encode() if token is None else token}
    return _request(page.port, "POST", page.write_path, body, headers)


def _assert_one_line_error(status: int, body: bytes, expected: int, *needles: str) -> str:
    assert status == expected, body
    assert body.count(b"\n") == 0, body  # one line
    error = json.loads(body)["error"]
    assert isinstance(error, str) and error, body
    for needle in needles:
        assert needle in error, error
    return error


def _assert_alive_and_quiet(page: Page) -> None:
    """The server still answers its page, and nothing it said was a traceback."""
    assert _request(page.port, "GET", HOME[page.kind])[0] == 200
    assert _request(page.port, "GET", "/api/results.json" if page.kind == "serve" else f"/api/{page.kind}/items",
                    headers={"X-Goldeval-Token": page.token.encode()})[0] == 200
    err = page.err()
    assert "Traceback" not in err and all(line.startswith("goldeval") for line in err.splitlines()), err


def _reset(sock: socket.socket) -> None:
    """Close with an RST instead of a FIN (SO_LINGER 0): what a browser killed mid-request does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_a_deeply_nested_body_is_a_400(page: Page) -> None:
    before = page.golden.read_bytes()
    status, body = _post(page, NESTED)
    _assert_one_line_error(status, body, 400, "nested too deeply")
    status, body = _post(page, b'{"action": ' + b"[" * 40 + b"]" * 40 + b"}")  # parses, but past the limit
    _assert_one_line_error(status, body, 400, "nested more than 16 levels")
    assert page.golden.read_bytes() == before
    _assert_alive_and_quiet(page)


@pytest.mark.parametrize("body", [b'{"action": 1' + b"9" * 5000 + b"}", b'{"reason": "\\ud800"}', b"\xff\xfe{}",
                                  b"[1, 2]", b'{"a": 1'])
def test_a_body_that_is_not_one_json_object_is_a_400(page: Page, body: bytes) -> None:
    _assert_one_line_error(*_post(page, body), 400)
    _assert_alive_and_quiet(page)


@pytest.mark.parametrize("token", ["é" * 32, "\u202e" * 8, "ünicode-token"])
def test_a_non_ascii_token_is_a_wrong_token(page: Page, token: str) -> None:
    status, body = _post(page, b'{"action": "accept"}', token=token.encode("utf-8"))
    _assert_one_line_error(status, body, 403, "wrong session token")
    _assert_alive_and_quiet(page)


def test_a_golden_set_turned_to_junk_answers_with_its_error(page: Page) -> None:
    page.golden.write_bytes(JUNK)
    if page.kind == "pool":
        status, body = _request(page.port, "GET", "/api/pool/items", headers={"X-Goldeval-Token": page.token.encode()})
    elif page.kind == "serve":
        status, body = _request(page.port, "GET", "/api/lifecycle.json", headers={"X-Goldeval-Token": page.token.encode()})
    else:  # review reads the golden set when a question is accepted into it
        status, body = _post(page, b'{"action": "accept"}')
    error = _assert_one_line_error(status, body, 400 if page.kind == "review" else 500)
    assert "golden.jsonl" in error and "Traceback" not in error, error
    assert "internal error" not in error, error
    assert _request(page.port, "GET", HOME[page.kind])[0] == 200  # the page itself is still served
    assert "Traceback" not in page.err(), page.err()


def test_clients_that_reset_are_silent(page: Page) -> None:
    mid_body = socket.create_connection(("127.0.0.1", page.port), timeout=60)
    mid_body.sendall(f"POST {page.write_path} HTTP/1.0\r\nHost: 127.0.0.1:{page.port}\r\nContent-Type: "
                     f"application/json\r\nContent-Length: 1000\r\nX-Goldeval-Token: {page.token}\r\n\r\n{{".encode())
    _reset(mid_body)
    for _ in range(20):  # mid-answer: ask for the largest files and reset before reading them
        mid_answer = socket.create_connection(("127.0.0.1", page.port), timeout=60)
        mid_answer.sendall(f"GET / HTTP/1.0\r\nHost: 127.0.0.1:{page.port}\r\n\r\n".encode())
        _reset(mid_answer)
    half_line = socket.create_connection(("127.0.0.1", page.port), timeout=60)
    half_line.sendall(b"GET /")
    _reset(half_line)
    _assert_alive_and_quiet(page)
    assert page.err() == ""


@pytest.mark.parametrize("request_head", [
    b"GET / HTTP/9.9", b"GET / HTTP/1.x", b"BREW /pot HTTP/1.0", b"GET /\x1b[2J HTTP/1.0", b"GET /" + b"a" * 70_000 + b" HTTP/1.0",
    b"GET / HTTP/1.0\r\nX-Long: " + b"a" * 70_000, b"POST /api/pool/items/x?" + b"\xff" * 10 + b" HTTP/1.0",
])
def test_malformed_requests_are_one_line_of_json(page: Page, request_head: bytes) -> None:
    with socket.create_connection(("127.0.0.1", page.port), timeout=60) as sock:
        sock.sendall(request_head + f"\r\nHost: 127.0.0.1:{page.port}\r\n\r\n".encode())
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert 400 <= status < 600 and b"application/json" in head and b"Content-Security-Policy" in head, reply
    _assert_one_line_error(status, body, status)
    _assert_alive_and_quiet(page)
