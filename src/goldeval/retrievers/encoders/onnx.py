"""ONNX encoders on onnxruntime with a Hugging Face `tokenizers` tokenizer: no PyTorch.

Pooling follows the sentence-transformers recipe of each model: mean over real tokens of
`last_hidden_state` (all-MiniLM-L6-v2), or a graph that already pools (`pooling = "none"`,
paraphrase-MiniLM-L3-v2's output `461`); rows are L2-normalised by `BatchedEncoder`.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from goldeval.errors import require
from goldeval.retrievers.encoders.base import BatchedEncoder, Kind
from goldeval.retrievers.encoders.registry import ModelSpec, package_file
from goldeval.store.workspace import user_folder


class OnnxEncoder(BatchedEncoder):
    """A transformer encoder exported to ONNX, run with onnxruntime on the CPU."""

    # Measured on Cranfield, 2 cores: batches of 8 length-sorted texts beat 32 by 10-20% (less padding,
    # activations stay in cache); bench/bench_embed.py.
    batch_size = 8

    def __init__(self, spec: ModelSpec, key: str) -> None:
        self.spec = spec
        self.name, self.dim, self.key = spec.name, spec.dim, key
        self.query_prefix, self.passage_prefix = spec.query_prefix, spec.passage_prefix
        self.max_tokens = spec.max_length or None
        self._session: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._tokenizer: Any = None
        self._counter: Any = None
        self._inputs: set[str] = set()
        self._threads = 0
        """The threads the session (float32) or the pool (quantized) was made for."""

    def token_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]] | None:
        """The model's own tokenizer, without truncation or padding: exact spans of what it would read."""
        encoded = self._counting().encode_batch(list(texts), add_special_tokens=False)
        return [list(e.offsets) for e in encoded]

    def token_counts(self, texts: Sequence[str]) -> list[int] | None:
        """Tokens each text is run as: its own, the special tokens, at most the window (measured: 0.84 CPU s
        for the demo's 3,148 windows, against about 210 to embed them)."""
        encoded = self._counting().encode_batch(list(texts), add_special_tokens=False)
        limit = self.max_tokens or None
        return [min(len(e.ids) + self.special_tokens, limit or len(e.ids) + self.special_tokens) for e in encoded]

    def _counting(self) -> Any:
        """The model's tokenizer without truncation or padding (the embedding one pads each batch)."""
        if self._counter is None:
            tokenizers = require("tokenizers", extra="dense", purpose=f"the embedding model {self.name!r}")
            counter = tokenizers.Tokenizer.from_file(str(package_file(self.spec.tokenizer)))
            counter.no_truncation()
            counter.no_padding()
            self._counter = counter
        return self._counter

    def load(self) -> None:
        """Open the ONNX session and the tokenizer (done on first use, once), with this encoder's threads."""
        if self._session is not None:
            return
        ort = require("onnxruntime", extra="dense", purpose=f"the embedding model {self.name!r}")
        tokenizers = require("tokenizers", extra="dense", purpose=f"the embedding model {self.name!r}")
        self._session = self._open(ort, self.n_threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer = tokenizers.Tokenizer.from_file(str(package_file(self.spec.tokenizer)))
        tokenizer.enable_truncation(max_length=self.spec.max_length)
        # Pad to the longest text of the batch (the shipped tokenizer.json pads every text to 128).
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer

    def _open(self, ort: Any, threads: int) -> Any:
        """An onnxruntime session on `threads` cores: a float32 model splits each batch over them (intra-op
        threads); a quantized one runs one text per call on one thread, `threads` calls side by side."""
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1 if self.spec.quantize else threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # Idle threads sleep instead of spinning: on a shared machine spinning threads steal the cores the
        # busy ones need (measured: 2 threads, 4.9 -> 10.6 passages/s on a loaded 2-core machine).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        model = package_file(self.spec.model)
        if self.spec.quantize == "int8-dynamic":
            from goldeval.retrievers.encoders.quantize import dynamic_int8

            model = dynamic_int8(model, user_folder("models"), self.name)  # once per machine, every project's
        self._threads = threads
        return ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])

    def _follow_threads(self) -> None:
        """A memoised model handed to a retriever with another `threads` option runs with that many: the
        float32 session is opened again on them, the quantized model's pool resized (issue 19)."""
        wanted = self.n_threads
        if wanted == self._threads:
            return
        if self.spec.quantize:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None
            self._threads = wanted
        else:
            ort = require("onnxruntime", extra="dense", purpose=f"the embedding model {self.name!r}")
            self._session = self._open(ort, wanted)

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        self.load()
        self._follow_threads()
        if self.spec.quantize and len(texts) > 1:
            # Dynamic quantization scales activations per input tensor: a text batched with others would
            # not get the vector it gets alone. One text per run keeps vectors independent of batching
            # (and wastes no padding; measured faster than batches of 8 for this model). onnxruntime
            # releases the GIL in `run`, so the texts go to one thread per core.
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="goldeval-onnx")
            return np.concatenate(list(self._pool.map(lambda text: self._embed([text], kind), texts)))
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        (out,) = self._session.run([self.spec.output], feed)
        if self.spec.pooling == "none":
            return np.asarray(out, dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        summed = (np.asarray(out, dtype=np.float32) * weights).sum(axis=1)
        return summed / np.maximum(weights.sum(axis=1), 1e-9)
