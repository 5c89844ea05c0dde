"""Building many small Python objects at once: the cyclic garbage collector paused meanwhile.

CPython's cyclic GC runs a pass every time allocations outnumber deallocations by a threshold, and a
full pass walks every object alive. Reading a golden set of 100k questions or a run of ten million
results makes millions of objects that live on (none of them cycles), so the passes walk ever more of
them, again and again: at 100k questions they cost more than the reading itself (issue 23).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small objects: its full passes over large runs cost
    more than the work itself. Restored on exit, so no global setting leaks."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
