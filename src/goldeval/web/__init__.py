"""The live scorecard in the browser: a localhost server (`make_server`, `start_in_thread`) and a
self-contained page.
"""

from __future__ import annotations

from goldeval._lazy import exports

_LAZY = {
    "make_server": "goldeval.web.server",
    "start_in_thread": "goldeval.web.server",
}

__all__ = list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
