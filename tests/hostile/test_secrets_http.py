"""Class: secrets leave the machine or reach files (issue 20). A search service's credentials go only to the
origin they were given for, and no credential goldeval was given reaches the terminal, the results JSON, the
Markdown comment, the page or the history, even when the service echoes it back in an error."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from hostile_cases import EVAL, Outcome, assert_clean

TOKEN = "Bearer s3cr3t-T0KEN-for-the-search-service"
PASSWORD = "hunter2-Pa55word"
DOCS = ["git/stash.md", "git/branch.md", "git/rebase.md", "cooking/pasta.md", "cooking/bread.md"]


class Service:
    """A stand-in search service on 127.0.0.1: `mode` decides what it answers; it records what it was sent."""

    def __init__(self, mode: str, redirect_to: str = "") -> None:
        self.mode, self.redirect_to, self.seen = mode, redirect_to, []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                service.seen.append(dict(self.headers.items()))
                if service.mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", service.redirect_to + self.path)
                    self.end_headers()
                    return
                if service.mode == "echo":  # a careless service: its error repeats what it was sent
                    body = f"unauthorised: got Authorization {self.headers.get('Authorization')}".encode()
                    self.send_response(401)
                else:
                    words = set(parse_qs(urlsplit(self.path).query)["q"][0].lower().split())
                    ranked = sorted(DOCS, key=lambda d: (-len(words & set(d.replace("/", " ")[:-3].split())), d))
                    body = json.dumps({"results": [{"id": d} for d in ranked]}).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def services() -> Iterator[Callable[..., Service]]:
    started: list[Service] = []

    def start(mode: str, redirect_to: str = "") -> Service:
        started.append(Service(mode, redirect_to))
        return started[-1]

    yield start
    for s in started:
        s.server.shutdown()
        s.server.server_close()


def everything_written(folder: Path, outcome: Outcome) -> str:
    """The captured streams and every file under `folder`, the history's compressed scorecards unpacked."""
    texts = [outcome.out, outcome.err]
    for path in folder.rglob("*"):
        if path.is_file():
            texts.append(path.read_bytes().decode("utf-8", "replace"))
        if path.name == "history.sqlite":
            with sqlite3.connect(path) as db:
                for table, in db.execute("select name from sqlite_master where type = 'table'"):
                    for row in db.execute(f"select * from {table}"):  # noqa: S608 - the test's own database
                        texts += [zlib.decompress(v).decode() if isinstance(v, bytes) else str(v) for v in row]
    return "\n".join(texts)


def test_a_redirect_to_another_origin_never_carries_the_token(inputs: Path, services, cli, monkeypatch) -> None:
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)
    elsewhere = services("search")
    origin = services("redirect", redirect_to=elsewhere.url)
    spec = origin.url + "/search?q={question}&k={k}#headers=Authorization:SEARCH_TOKEN"
    outcome = cli(*EVAL, "--retriever", spec, "--json", "results.json")
    assert_clean(outcome, 0)
    assert origin.seen and all(h.get("Authorization") == TOKEN for h in origin.seen)  # given for this origin
    assert elsewhere.seen and all("Authorization" not in h for h in elsewhere.seen)  # and never sent on
    assert json.loads((inputs / "results.json").read_text())["retrievers"][0]["metrics"]  # it did score


def test_a_service_that_echoes_the_token_cannot_get_it_printed_or_stored(inputs: Path, services, cli,
                                                                          monkeypatch) -> None:
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")
    echo = services("echo")
    spec = echo.url + "/search?q={question}&k={k}#headers=Authorization:SEARCH_TOKEN"
    outcome = cli(*EVAL, "--retriever", spec, "--retriever", "bm25", "--json", "results.json", "--markdown",
                  "comment.md")
    assert_clean(outcome, 3)  # the service failed on every question: flagged, not a crash
    assert_clean(cli("report", "results.json", "--html", "page.html"), 0)
    assert "unauthorised: got Authorization" in (inputs / "results.json").read_text()  # its error is kept...
    written = everything_written(inputs, outcome)
    assert TOKEN not in written and TOKEN.split()[1] not in written  # ...without the token
    assert "***" in written


def test_a_password_in_the_url_is_sent_as_basic_auth_and_written_nowhere(inputs: Path, services, cli,
                                                                          monkeypatch) -> None:
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")
    service = services("search")
    spec = service.url.replace("http://", f"http://alice:{PASSWORD}@") + "/search?q={question}&k={k}"
    outcome = cli(*EVAL, "--retriever", spec, "--retriever", "search:unknown", "--json", "results.json",
                  "--markdown", "comment.md")
    assert_clean(outcome, 0)
    expected = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert service.seen and all(h.get("Authorization") == expected for h in service.seen)
    written = everything_written(inputs, outcome)
    assert PASSWORD not in written and expected.split()[1] not in written
