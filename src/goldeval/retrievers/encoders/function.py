"""A user's own encoder function, `encode(texts) -> np.ndarray`, as an Encoder (Python API)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from goldeval.errors import InputError
from goldeval.retrievers.encoders.base import BatchedEncoder, Kind

EncodeFn = Callable[[list[str]], np.ndarray]


class FunctionEncoder(BatchedEncoder):
    """Wraps `encode(texts) -> array (n, dim)`; rows are L2-normalised afterwards.

    `key` names the model for the embedding cache: change it whenever the function's output
    changes, or cached vectors of the old function are reused.
    """

    def __init__(
        self,
        encode: EncodeFn,
        *,
        name: str,
        key: str | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 64,
    ) -> None:
        self._fn = encode
        self.name = name
        self.key = key or f"function:{getattr(encode, '__module__', '?')}.{getattr(encode, '__qualname__', name)}"
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.batch_size = batch_size
        self.dim = 0

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        return self._call(texts)

    def _call(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self._fn(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise InputError(
                f"encoder function {self.name!r} returned shape {vectors.shape} for {len(texts)} texts",
                value=vectors.shape, hint="return a 2-d array with one row per text",
            )
        return vectors
