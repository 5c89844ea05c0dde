"""A local stand-in for embedding and rerank APIs, for the API retriever tests (issue 19).

It speaks, over real HTTP on 127.0.0.1, the wire formats goldeval's API retrievers use:
- `POST /v1/embeddings`: OpenAI's embeddings (also what Ollama, vLLM, LiteLLM, LM Studio serve at /v1);
- `POST /v1/rerank` (and `/rerank` with `documents`): Cohere's rerank shape (Jina, Voyage, vLLM, LiteLLM);
- `POST /rerank` with `texts`: Hugging Face TEI's rerank shape.
Vectors and scores are REAL: computed by goldeval's bundled `minilm` (the model the test compares with), so
rankings mean something. It checks the bearer key when given one, counts every request, and can be scripted
to answer, in order before any success, 429 with Retry-After, 500, a slow answer, a malformed body or
vectors of the wrong dimension; `hold_after` holds every request after that many answered ones (a run
killed mid-way). Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hang_guard import HANG_GUARD, wait_until
from loopback import loopback
from sweep_fixtures import write_inputs

Script = tuple[str, Any]
"""("429", retry_after_seconds) | ("500", None) | ("slow", seconds) | ("malformed", None) | ("wrong_dim", None)
| ("401", None) | ("404", None)."""


@dataclass
class StandIn:
    """What the server answers and what it saw."""

    encoder: Any
    """The local model that computes every vector (goldeval's `minilm`)."""
    key: str | None = None
    script: list[Script] = field(default_factory=list)
    hold_after: int | None = None
    release: threading.Event = field(default_factory=threading.Event)
    requests: int = 0
    answered: int = 0
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    texts_embedded: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    model_lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def vectors(self, texts: list[str]) -> np.ndarray:
        with self.model_lock:
            return self.encoder.encode(texts, kind="passage")


def _tokens(texts: list[str]) -> int:
    """What the stand-in reports as usage: whitespace words (any count the client did not make itself)."""
    return sum(len(t.split()) + 1 for t in texts)


def _embeddings(server: StandIn, body: dict[str, Any], wrong_dim: bool) -> dict[str, Any]:
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    vectors = server.vectors(texts)
    if wrong_dim:
        vectors = vectors[:, :-1]
    with server.lock:
        server.texts_embedded += len(texts)
    return {"object": "list", "model": body["model"],
            "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": _tokens(texts), "total_tokens": _tokens(texts)}}


def _rerank(server: StandIn, body: dict[str, Any], tei: bool) -> Any:
    docs = body["texts"] if tei else [d if isinstance(d, str) else d.get("text", "") for d in body["documents"]]
    vectors = server.vectors([body["query"], *docs])
    scores = (vectors[1:] @ vectors[0]).tolist()
    order = sorted(range(len(docs)), key=lambda i: -scores[i])
    if tei:
        return [{"index": i, "score": scores[i]} for i in order]
    top = body.get("top_n") or len(docs)
    return {"id": "standin", "results": [{"index": i, "relevance_score": scores[i]} for i in order[:top]],
            "meta": {"billed_units": {"search_units": 1}}}


def _handler(server: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?")[0]
            with server.lock:
                server.requests += 1
                server.paths.append(path)
                server.headers.append(headers)
                server.bodies.append(body)
                step = server.script.pop(0) if server.script else None
                hold = server.hold_after is not None and server.answered >= server.hold_after
            if server.key is not None and headers.get("authorization") != f"Bearer {server.key}":
                return self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
            if hold:
                server.release.wait(HANG_GUARD)
            kind, arg = step or ("ok", None)
            if kind in ("429", "500", "401", "404"):
                extra = {"Retry-After": str(arg)} if kind == "429" and arg is not None else {}
                return self._send(int(kind), {"error": {"message": f"scripted {kind}"}}, extra)
            if kind == "slow":
                time.sleep(arg)
            if kind == "malformed":
                return self._send(200, {"object": "list", "data": "not a list"})
            if path == "/v1/embeddings":
                reply = _embeddings(server, body, kind == "wrong_dim")
            elif path in ("/v1/rerank", "/rerank"):
                reply = _rerank(server, body, tei="texts" in body)
            else:
                return self._send(404, {"error": {"message": f"no route {path}"}})
            with server.lock:
                server.answered += 1
            self._send(200, reply)

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            with contextlib.suppress(OSError):  # the client went away (the interrupted run)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


@contextmanager
def standin(encoder: Any, **options: Any) -> Iterator[StandIn]:
    """A StandIn serving on a free port of 127.0.0.1 until the block ends."""
    state = StandIn(encoder, **options)
    with loopback(_handler(state), release=state.release) as url:
        state.url = url
        yield state


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The stand-in server's model: goldeval's own `minilm`, loaded once a session (conftest.py makes it one
    fixture for every API test module)."""
    from goldeval.retrievers.encoders.registry import load_encoder

    return load_encoder("minilm", progress=False)


def eval_command(folder: Path, spec: str, workspace: Path, out: Path, *extra: str) -> list[str]:
    """`goldeval eval` of `spec` on the sweep fixtures' small corpus and golden set (written under `folder`),
    in a fresh process, no statistics."""
    corpus, golden = write_inputs(folder / "inputs")
    return [sys.executable, "-m", "goldeval", "eval", "--corpus", str(corpus), "--golden", str(golden),
            "--retriever", spec, "--workspace", str(workspace), "--json", str(out), "--no-stats", *extra]


def run_ok(command: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a goldeval command to its end (the hang guard's limit), asserting it succeeded."""
    done = subprocess.run(command, env=dict(env), capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def kill_at_request(server: StandIn, command: list[str], env: Mapping[str, str], answered: int) -> int:
    """Run `command` against `server`, holding every request after `answered` answered ones, and SIGKILL it
    once the next request is held; then let the server answer again. The server's request count at the kill
    (`answered` more than before the run): what a resumed run is measured from."""
    before = server.requests
    server.answered, server.hold_after = 0, answered
    proc = subprocess.Popen(command, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: server.requests > before + answered, f"request {answered + 1} (held by the server)", proc=proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=HANG_GUARD)
    server.hold_after = None
    server.release.set()
    return server.requests
