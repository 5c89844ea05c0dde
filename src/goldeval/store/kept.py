"""JSON files a cache keeps in the workspace (stored runs, statistics, a sweep's chunks and timings):
read back when present, computed again when missing or unreadable. Every such file is read here:

- missing: None, silently (the first run);
- unreadable (cut off, edited, another format): None, and one warning naming the file, so the caller
  computes it again and writes it whole.

`write_kept` writes one atomically (`goldeval.store.atomic`) for the caches whose loss costs only
time (an evaluation's stored runs and statistics): one that cannot be written (a full disk, a file-size
limit) is a warning, never a failed evaluation; the next run computes it again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from goldeval.errors import WriteError
from goldeval.store.atomic import write_atomic
from goldeval.textsafe import warn

T = TypeVar("T")


def read_kept(path: Path, unreadable: str, parse: Callable[[dict[str, Any]], T] | None = None) -> T | None:
    """The kept JSON object at `path` (through `parse`, whose ValueError, KeyError or TypeError means it
    does not read), or None; `unreadable` is the warning when it is there but does not read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        return parse(data) if parse is not None else data  # type: ignore[return-value]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        warn(unreadable)
        return None


def write_kept(path: Path, data: Mapping[str, Any], unwritable: str) -> None:
    """Keep `data` at `path`; `unwritable` starts the warning when it cannot be written."""
    try:
        write_atomic(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    except (OSError, WriteError) as exc:
        warn(f"{unwritable}: {exc}")
