"""A test's stand-in server on 127.0.0.1: one way to start it in a thread and stop it (the API, LLM and
judge stand-ins all serve through it)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hang_guard import HANG_GUARD


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler], *, release: threading.Event | None = None) -> Iterator[str]:
    """Serve `handler` on a free port of 127.0.0.1 until the block ends; yields the base URL. `release` is
    set first on the way out, so a request the stand-in holds (a "slow" reply) lets go before shutdown."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        if release is not None:
            release.set()
        server.shutdown()
        server.server_close()
        thread.join(HANG_GUARD)
