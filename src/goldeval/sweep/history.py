"""Every configuration of a sweep lands in the run history, one recorded run each.

The run history (`goldeval.history`, `goldeval history`) records a Scorecard with
`goldeval.history.db.record_run(card, workspace)`; a sweep records each configuration's own Scorecard
(one retriever, named by the configuration's label), so `goldeval history` and `compare @N @M` see sweep
cells like any evaluation. `$GOLDEVAL_NO_HISTORY=1` (or `goldeval sweep --no-history`) records nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from goldeval.scorecard.model import Scorecard

RECORDER = "goldeval.history.db:record_run"
"""The history's `record_run(card, workspace) -> run id | None`, looked up when a sweep ends."""


def record_cells(cards: Sequence[Scorecard], workspace: Path) -> dict[str, Any]:
    """Record each card; returns what the report shows (`{"recorded": [ids], "note": ...}`)."""
    recorder = _recorder()
    if recorder is None:
        return {"recorded": [], "note": f"no run history in this installation ({RECORDER} not found)"}
    ids = []
    for card in cards:
        run_id = recorder(card, workspace)
        if run_id is not None:
            ids.append(int(run_id))
    if not ids and cards:
        return {"recorded": [], "note": "history is off ($GOLDEVAL_NO_HISTORY)"}
    print(f"goldeval sweep: recorded {len(ids)} configuration(s) in the run history (runs {ids[0]}-{ids[-1]})"
          if ids else "goldeval sweep: nothing recorded in the run history", file=sys.stderr)
    return {"recorded": ids, "note": None}


def _recorder() -> Callable[[Scorecard, Path], int | None] | None:
    module, _, name = RECORDER.partition(":")
    try:
        found = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    return found if callable(found) else None
