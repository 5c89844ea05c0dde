"""Run the one page server until Ctrl+C: the loop `serve`, `review` and `pool` share."""

from __future__ import annotations

import sys
from typing import Any


def serve_until_interrupted(server: Any, *, open_browser: bool = False, url: str | None = None) -> int:
    """Open the page (`url`, default the server's own address) in the default browser if asked, serve until
    Ctrl+C, let the writes in flight end, always close the socket."""
    if open_browser:
        import webbrowser

        webbrowser.open(url or server.url)
    from goldeval.store.transaction import stop_writes

    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("goldeval: stopped", file=sys.stderr)
    finally:
        # a verdict being written in a request thread ends first: the process must not end (and take its
        # daemon threads with it) between a judgment and its changelog line (issue 20)
        stop_writes()
        server.server_close()
    return 0
