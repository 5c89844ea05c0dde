"""What a cache keeps in the workspace (stored runs, statistics, a sweep's chunks and timings, model replies,
embedding entries): read back when present and whole, computed again otherwise. Every such file is read
here, and carries a checksum of its content that is verified on every read (issue 20: a sweep's chunks
file with one flipped byte still parsed, and one configuration's hit@1 moved without a word):

- missing: None, silently (the first run);
- unreadable (cut off, another format) or **damaged** (it parses, but its checksum does not match its
  content: a flipped bit, an edit): None, and one warning naming the file, so the caller computes it
  again and writes it whole. A kept number is never one that was not written.

A kept JSON file is the JSON object with one more field, `checksum`: `goldeval.fingerprint.fingerprint` of
the object without it (canonical JSON, so the check does not depend on how the file was spaced). A file
without one (written before checksums, or with its `checksum` key itself damaged) is damaged too.
Binary entries (the embedding cache's vectors, `goldeval.store.cache`) record `bytes_fingerprint` of their
payload in their header and report a mismatch through `damaged`, the same warning.

`write_kept` writes one atomically (`goldeval.store.atomic`) for the caches whose loss costs only
time (an evaluation's stored runs and statistics): one that cannot be written (a full disk, a file-size
limit) is a warning, never a failed evaluation; the next run computes it again. `kept_json` is the text
of one, for a cache that writes it itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from goldeval.errors import WriteError
from goldeval.fingerprint import fingerprint
from goldeval.store.atomic import write_atomic
from goldeval.textsafe import warn

T = TypeVar("T")
CHECKSUM = "checksum"
"""The field of a kept JSON file holding the fingerprint of the rest of it."""


class Damaged(ValueError):
    """A kept file whose checksum does not match its content."""


def kept_json(data: Mapping[str, Any]) -> str:
    """The text of a kept JSON file: `data` and the checksum of `data` as a reader will parse it back (so
    a tuple, an int key or a NaN is checked as the JSON it became)."""
    if CHECKSUM in data:
        raise ValueError(f"a kept object cannot have its own {CHECKSUM!r} field")
    plain = json.loads(json.dumps(data, ensure_ascii=False))
    return json.dumps({**plain, CHECKSUM: fingerprint(plain)}, ensure_ascii=False, separators=(",", ":"))


def verified(data: Any) -> dict[str, Any]:
    """A parsed kept JSON object without its checksum, once the checksum matches; Damaged otherwise."""
    if not isinstance(data, dict):
        raise TypeError("not a JSON object")
    recorded = data.pop(CHECKSUM, None)
    if not isinstance(recorded, str) or recorded != fingerprint(data):
        raise Damaged("no checksum" if recorded is None else "checksum mismatch")
    return data


def damaged(what: str, redo: str) -> None:
    """The one warning for a kept file whose checksum does not match its content (`what` names the file)."""
    warn(f"{what} is damaged (its checksum does not match its content); {redo}")


def read_kept(path: Path, what: str, redo: str, parse: Callable[[dict[str, Any]], T] | None = None) -> T | None:
    """The kept JSON object at `path`, verified and passed through `parse` (whose ValueError, KeyError or
    TypeError means it does not read), or None. `what` names the file in a warning ("stored run"), `redo`
    says what happens instead ("searching again")."""
    try:
        data = verified(json.loads(path.read_text(encoding="utf-8")))
        return parse(data) if parse is not None else data  # type: ignore[return-value]
    except FileNotFoundError:
        return None
    except Damaged:
        damaged(f"{what} {path}", redo)
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        warn(f"{what} {path} is unreadable; {redo}")
        return None


def write_kept(path: Path, data: Mapping[str, Any], unwritable: str) -> None:
    """Keep `data` at `path`, with its checksum; `unwritable` starts the warning when it cannot be written."""
    try:
        write_atomic(path, kept_json(data))
    except (OSError, WriteError) as exc:
        warn(f"{unwritable}: {exc}")
