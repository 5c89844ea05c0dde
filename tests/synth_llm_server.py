"""A local stand-in for the Anthropic Messages API and OpenAI's chat completions, for the synth tests.

It speaks just enough of both wire formats for the official SDKs to talk to it over real HTTP on
127.0.0.1: `POST /v1/messages` and `POST /v1/chat/completions`. It checks every request's shape (model,
one user message holding the passage, a token limit, the auth header carrying the expected key), records
it, and answers with a question from the test's `answer(prompt)` function, or with scripted failures
first (429 with Retry-After, 500, 503, 401). Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from hang_guard import HANG_GUARD
from loopback import loopback


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeLLM:
    """What the server answers and what it saw."""

    key: str
    answer: Callable[[str], str]
    failures: list[tuple[int, dict[str, str], str]] = field(default_factory=list)
    """Scripted (status, headers, body) answered, in order, before any success."""
    delay: float = 0.0
    hold_after: int | None = None
    """Requests after this many answered ones wait on `release` (to interrupt a run mid-way)."""
    release: threading.Event = field(default_factory=threading.Event)
    answered: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    seen: list[Seen] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    successes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    @property
    def requests(self) -> int:
        return len(self.seen)


def _check(llm: FakeLLM, path: str, headers: dict[str, str], body: dict[str, Any]) -> str | None:
    """The request's problem, or None. Returns the prompt through `problems` on success."""
    messages = body.get("messages")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "no model"
    if not (isinstance(messages, list) and len(messages) == 1 and messages[0].get("role") == "user"
            and isinstance(messages[0].get("content"), str) and "Passage" in messages[0]["content"]):
        return f"messages are not one user message with the passage: {messages!r:.200}"
    if path == "/v1/messages":
        # Older SDKs send the key as x-api-key, newer ones as a bearer token: either must carry it.
        if llm.key not in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer ")):
            return "missing or wrong API key header"
        if "anthropic-version" not in headers:
            return "no anthropic-version header"
        if not isinstance(body.get("max_tokens"), int):
            return "no max_tokens"
    else:
        if headers.get("authorization") != f"Bearer {llm.key}":
            return "missing or wrong Authorization header"
        if not isinstance(body.get("max_tokens", body.get("max_completion_tokens")), int):
            return "no max_tokens"
    return None


def _reply(path: str, model: str, text: str) -> dict[str, Any]:
    if path == "/v1/messages":
        return {"id": "msg_test", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5}}
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _handler(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?")[0]
            with llm.lock:
                llm.seen.append(Seen(path, headers, body))
                llm.in_flight += 1
                llm.max_in_flight = max(llm.max_in_flight, llm.in_flight)
                failure = llm.failures.pop(0) if llm.failures else None
                hold = llm.hold_after is not None and llm.successes >= llm.hold_after
            self.counted = True
            try:
                self._answer(path, headers, body, failure, hold)
            finally:
                self._uncount()

        def _uncount(self) -> None:
            """Out of `in_flight` before the answer is written: the client may send its next request
            the moment it has read this one, and counting after the write saw one too many (issue 17)."""
            if self.counted:
                self.counted = False
                with llm.lock:
                    llm.in_flight -= 1

        def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any],
                    failure: tuple[int, dict[str, str], str] | None, hold: bool) -> None:
            if path not in ("/v1/messages", "/v1/chat/completions"):
                return self._send(404, {}, json.dumps({"error": {"message": f"no route {path}"}}))
            problem = _check(llm, path, headers, body)
            if problem:
                llm.problems.append(problem)
                return self._send(400, {}, json.dumps({"error": {"type": "invalid_request_error", "message": problem}}))
            if failure is not None:
                return self._send(*failure)
            if hold:
                llm.release.wait(HANG_GUARD)
                return self._send(503, {}, json.dumps({"error": {"message": "held"}}))
            if llm.delay:
                time.sleep(llm.delay)
            text = llm.answer(body["messages"][0]["content"])
            with llm.lock:
                llm.successes += 1
            self._send(200, {}, json.dumps(_reply(path, body["model"], text)))
            llm.answered.release()

        def _send(self, status: int, headers: dict[str, str], text: str) -> None:
            data = text.encode("utf-8")
            self._uncount()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            with contextlib.suppress(OSError):  # the client went away (the interrupted run)
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


@contextmanager
def fake_llm(key: str, answer: Callable[[str], str], **options: Any) -> Iterator[FakeLLM]:
    """A FakeLLM serving on a free port of 127.0.0.1 until the block ends."""
    llm = FakeLLM(key, answer, **options)
    with loopback(_handler(llm), release=llm.release) as url:
        llm.url = url
        yield llm


def error_body(message: str) -> str:
    return json.dumps({"type": "error", "error": {"type": "api_error", "message": message}})
