"""Where the server's results come from: a fixed payload, or results files that are re-read when they
change, so a page left open follows `goldeval eval --json` re-runs.

Either source answers `current() -> (body, version, error)`: the results JSON the page reads, a
version token the page polls (`/version`) to learn that it should reload, and the last reload error
(a file that became unreadable keeps the previous results on screen, with the error shown).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from goldeval.errors import GoldevalError
from goldeval.report.page import payload_json, results_payload
from goldeval.scorecard.model import Scorecard


class ResultsSource(Protocol):
    def current(self) -> tuple[bytes, str, str | None]: ...


class FixedResults:
    """One payload for the life of the server (an evaluation run by `goldeval serve` itself)."""

    def __init__(self, payload: Mapping[str, Any]) -> None:
        self._body = payload_json({**payload, "version": "fixed"}).encode("utf-8")

    def current(self) -> tuple[bytes, str, str | None]:
        return self._body, "fixed", None


class ResultsFiles:
    """Results files, re-read whenever one's modification time or size changes.

    `Scorecard.save` writes atomically (temp file + rename), so a re-read never sees half a file.
    """

    def __init__(self, paths: Sequence[str | Path], names: Sequence[str] | None = None,
                 extra: Mapping[str, Any] | None = None) -> None:
        """`extra`: more keys of the page's payload, fixed for the server's life (`judges`: the Judges tab).
        `cards`: the scorecards of the last good read, so whoever else needs them at start (the pool of
        `serve --golden`) takes them from here instead of reading the files again."""
        self.paths = [Path(p) for p in paths]
        self.names = list(names) if names is not None else [path.name for path in self.paths]
        self.extra = dict(extra or {})
        self.cards: list[Scorecard] = []
        self._lock = threading.Lock()
        self._count = 0
        self._error: str | None = None
        self._signature = self._stat()
        self._body = self._read()  # errors here are the caller's bad input: raised, not kept

    def current(self) -> tuple[bytes, str, str | None]:
        with self._lock:
            signature = self._stat()
            if signature != self._signature:
                self._signature = signature
                try:
                    self._body = self._read()
                    self._error = None
                except GoldevalError as exc:
                    self._error = f"could not reload the results: {exc}"
                except Exception as exc:  # noqa: BLE001 - any failure is shown in the page, never a dropped connection
                    self._error = f"could not reload the results: {type(exc).__name__}: {exc}"
            return self._body, str(self._count), self._error

    def _read(self) -> bytes:
        cards = [Scorecard.load(path) for path in self.paths]  # each file read once, for the page and the pool
        payload = results_payload(cards, self.names)
        self.cards = cards
        self._count += 1
        return payload_json({**payload, **self.extra, "version": str(self._count)}).encode("utf-8")

    def _stat(self) -> tuple[tuple[int, int] | None, ...]:
        out: list[tuple[int, int] | None] = []
        for path in self.paths:
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)


def version_body(version: str, error: str | None, lifecycle: str = "") -> bytes:
    """`/version`: the results' version token, the last reload error, and the lifecycle's token (the
    history, the golden set and its changelog), so a page reloads what changed."""
    return json.dumps({"version": version, "error": error, "lifecycle": lifecycle}).encode("utf-8")
