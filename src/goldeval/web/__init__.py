"""goldeval's pages in the browser: one localhost server (`make_server`, `start_in_thread`) with the
scorecard at `/`, pooled judging at `/pool` and the review of candidate questions at `/review`.
"""

from __future__ import annotations

from goldeval._lazy import exports

_LAZY = {
    "make_server": "goldeval.web.app",
    "start_in_thread": "goldeval.web.app",
}

__all__ = list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
