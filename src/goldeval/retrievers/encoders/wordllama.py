"""WordLlama static embeddings: token vectors averaged, thousands of passages a second.

The weights and tokenizer ship inside the `wordllama` package; we point `cache_dir` at the package
folder and disable downloads, so it never reaches the hub.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from goldeval.errors import require
from goldeval.retrievers.encoders.base import BatchedEncoder, Kind
from goldeval.retrievers.encoders.registry import ModelSpec


class WordLlamaEncoder(BatchedEncoder):
    # Measured (CPU s, length-sorted): the demo's 199 stdlib pages 2.8 at 4 against 4.4 at 32 and 9.2 at 64, at
    # 0.56 GB peak against 3.5 GB at 32 (a batch pads to its longest text: up to 183k characters); Cranfield's
    # 1,400 abstracts 0.95 at 4 against 1.34 at 32. Issue 19.
    batch_size = 4

    def __init__(self, spec: ModelSpec, key: str) -> None:
        self.name, self.dim, self.key = spec.name, spec.dim, key
        self._model: Any = None

    def load(self) -> None:
        if self._model is None:
            wordllama = _import_quietly()
            package = Path(str(wordllama.__file__)).parent
            self._model = wordllama.WordLlama.load(cache_dir=package, dim=self.dim, disable_download=True)

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        self.load()
        return np.asarray(self._model.embed(texts, norm=False, batch_size=self.batch_size), dtype=np.float32)


def _import_quietly() -> Any:
    """Import wordllama without its side effect: it calls `logging.basicConfig(level=INFO)` at import,
    which turns on every library's log lines (bm25s' DEBUG among them) in the user's process."""
    import logging

    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        return require("wordllama", extra="dense", purpose="the embedding model 'wordllama'")
    finally:
        root.setLevel(level)
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
