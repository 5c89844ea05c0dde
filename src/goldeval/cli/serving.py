"""Run a local page's server until Ctrl+C: the one loop `serve`, `review` and `pool` share."""

from __future__ import annotations

import sys
from typing import Any


def serve_until_interrupted(server: Any, *, open_browser: bool = False) -> int:
    """Open the page in the default browser if asked, serve until Ctrl+C, always close the socket."""
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("goldeval: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
