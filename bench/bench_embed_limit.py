"""The default embedder against this machine's limit for the same shapes (issue 19).

The texts are what `make demo` waits for: the demo's stdlib pages cut into dense:minilm's 256-token
windows (3,148 windows on Python 3.11), a fixed sample of `SAMPLE` of them, every one tokenized by the
model's own tokenizer.

The limit: all-MiniLM-L6-v2's matrix products for exactly those tokens, as float32 numpy matmuls
(sgemm), timed best of `ROUNDS` in a child process with one BLAS thread (OpenBLAS's threads, spinning on a
busy machine, made small products 30x slower per CPU second), as passages per CPU second; the machine's
limit is that times its cores (texts side by side, one per core, as dense:minilm runs them). Per layer, the weight products (Q, K, V,
the output projection, the two feed-forward ones; their shapes read from the ONNX model's own weights)
over every token of every text at once (no padding, the largest M sgemm can get), and each text's
attention products (12 heads, L x 32 @ 32 x L and L x L @ L x 32). The rest of the model (embeddings,
layer norms, GELU, softmax, pooling) and tokenizing are left out, so this is an upper bound for float32 on
this CPU; int8 kernels (VNNI) can pass it.

Rows, each passages per second on the same texts, best of `ROUNDS`, nothing cached:
- goldeval `dense:minilm` as it runs (dynamic int8, one text per run, a thread per core);
- the same model in float32 on onnxruntime through goldeval's encoder (length-sorted batches of 8), and
  with sorting off (input order: what length-bucketing saves in padding);
- PyTorch float32 through sentence-transformers (`minilm-st`), when installed.
Results: bench/results/embed_limit.json. The first `make demo`'s time is bench/bench_demo.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bench import write_results

SAMPLE = 100
"""Windows timed (every n-th of the demo's, so long and short ones both): a few minutes on 2 busy cores."""
ROUNDS = 2
HEADS = 12
"""all-MiniLM-L6-v2's `num_attention_heads` (its config.json): head size 384 / 12 = 32."""


def demo_windows() -> list[str]:
    """The demo's passages cut to dense:minilm's window, as `goldeval demo` embeds them."""
    from goldeval.corpus.stdlib import build_stdlib_corpus
    from goldeval.retrievers.dense import passage_text
    from goldeval.retrievers.encoders.registry import load_encoder
    from goldeval.retrievers.long_documents import plan_windows

    with tempfile.TemporaryDirectory() as folder:
        passages = build_stdlib_corpus(workspace=Path(folder)).passages()
    encoder = load_encoder("minilm", progress=False)
    return plan_windows([p.id for p in passages], [passage_text(p) for p in passages], encoder, mode="max").texts


def token_lengths(texts: list[str]) -> list[int]:
    """Each text's tokens as the model reads them: special tokens included, cut at its window."""
    from tokenizers import Tokenizer

    from goldeval.retrievers.encoders.registry import package_file, registry

    spec = registry()["minilm"]
    tokenizer = Tokenizer.from_file(str(package_file(spec.tokenizer)))
    tokenizer.enable_truncation(max_length=spec.max_length)
    tokenizer.no_padding()
    return [len(e.ids) for e in tokenizer.encode_batch(texts)]


def weight_shapes() -> list[tuple[int, int]]:
    """The (in, out) shape of every weight product of the model, layer after layer, from its ONNX weights."""
    import onnx

    from goldeval.retrievers.encoders.registry import package_file, registry

    model = onnx.load(str(package_file(registry()["minilm"].model)))
    hidden = {tuple(i.dims) for i in model.graph.initializer if len(i.dims) == 2 and min(i.dims) > 2}
    shapes = [tuple(i.dims) for i in model.graph.initializer
              if len(i.dims) == 2 and tuple(i.dims) in hidden and max(i.dims) < 30000 and 512 not in i.dims]
    return [(int(a), int(b)) for a, b in shapes]


def _best(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process: every thread) of the fastest of ROUNDS runs. On a machine
    shared with other work the wall time grows with its load; CPU seconds much less."""
    best = (float("inf"), float("inf"))
    for _ in range(ROUNDS):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
    return best


def _plus(a: tuple[float, float], b: tuple[float, float], times: int = 1) -> tuple[float, float]:
    return a[0] + times * b[0], a[1] + times * b[1]


def sgemm_limit(lengths: list[int], shapes: list[tuple[int, int]]) -> dict[str, float]:
    """Seconds of the model's float32 matmuls for these token counts, and the GFLOP they are."""
    rng = np.random.default_rng(0)
    tokens = sum(lengths)
    layers = sum(1 for a, b in shapes if a < b)  # one widening feed-forward product per layer
    weights = {shape: rng.standard_normal(shape, dtype=np.float32) for shape in set(shapes)}
    x = {n: rng.standard_normal((tokens, n), dtype=np.float32) for n in {a for a, _ in shapes}}
    head = shapes[0][0] // HEADS
    queries = [rng.standard_normal((HEADS, length, head), dtype=np.float32) for length in lengths]

    def products() -> None:
        for a, b in shapes:
            np.matmul(x[a], weights[(a, b)])

    def attention() -> None:  # one layer's: Q x K^T, then the weights x V, per text
        for q in queries:
            np.matmul(np.matmul(q, q.transpose(0, 2, 1)), q)

    flops = 2.0 * tokens * sum(a * b for a, b in shapes) + layers * 4.0 * HEADS * head * sum(n * n for n in lengths)
    wall, cpu = _plus(_best(products), _best(attention), layers)
    return {"seconds": wall, "cpu_seconds": cpu, "gflop": flops / 1e9, "gflops_per_cpu_s": flops / 1e9 / cpu}


def single_thread_limit(lengths: list[int], shapes: list[tuple[int, int]]) -> dict[str, float]:
    """`sgemm_limit` in a child process whose BLAS runs one thread (set before numpy loads)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "bench.bench_embed_limit", "--limit"], input=json.dumps(
        [lengths, shapes]), capture_output=True, text=True, env=env, check=True, cwd=Path(__file__).parents[1])
    result: dict[str, float] = json.loads(done.stdout)
    return result


def encoder_rates(texts: list[str]) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of each way to run the model here, on the same texts."""
    from goldeval.retrievers.encoders.onnx import OnnxEncoder
    from goldeval.retrievers.encoders.registry import load_encoder, registry

    rates: dict[str, tuple[float, float]] = {}
    ours = load_encoder("minilm", progress=False)
    ours.encode(texts[:4])  # the int8 copy made (once per machine) and loaded outside the timing
    rates["goldeval dense:minilm (" + registry()["minilm"].runtime + ")"] = _best(lambda: ours.encode(texts))
    fp32 = OnnxEncoder(replace(registry()["minilm"], quantize=""), "bench")
    fp32.show_progress = False
    fp32.encode(texts[:4])
    rates["onnxruntime float32, length-sorted batches of 8"] = _best(lambda: fp32.encode(texts))
    fp32.sort_by_length = False
    rates["onnxruntime float32, batches of 8 in input order"] = _best(lambda: fp32.encode(texts))
    if registry()["minilm-st"].installed:
        torch = load_encoder("minilm-st", progress=False)
        torch.encode(texts[:4])
        rates["PyTorch float32 (minilm-st), length-sorted batches of 32"] = _best(lambda: torch.encode(texts))
    return rates


def main() -> None:
    windows = demo_windows()
    texts = windows[:: max(1, len(windows) // SAMPLE)][:SAMPLE]
    lengths = token_lengths(texts)
    limit = single_thread_limit(lengths, weight_shapes())
    n, cores = len(texts), os.cpu_count() or 1
    limit_cpu_rate = n / limit["cpu_seconds"]
    print(f"demo windows: {len(windows)}; timed: {n}, {sum(lengths):,} tokens (mean {np.mean(lengths):.0f}); "
          f"cores: {cores}, load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"{'limit: float32 sgemm of the model products, no padding':60s} {limit_cpu_rate * cores:8.1f} passages/s "
          f"{limit_cpu_rate:7.1f} per CPU s ({limit['gflops_per_cpu_s']:.0f} GFLOP per CPU s)", flush=True)
    rows = {}
    for label, (wall, cpu) in encoder_rates(texts).items():
        rows[label] = {"per_s": round(n / wall, 1), "per_cpu_s": round(n / cpu, 1),
                       "of_limit_cpu": round(n / cpu / limit_cpu_rate, 2)}
        print(f"{label:60s} {n / wall:8.1f} passages/s {n / cpu:7.1f} per CPU s   "
              f"{rows[label]['of_limit_cpu']:.2f} of the limit per CPU s", flush=True)
    out = write_results("embed_limit", {
        "windows": len(windows), "texts": n, "tokens": sum(lengths), "cores": cores,
        "load": round(os.getloadavg()[0], 1), "limit_per_cpu_s": round(limit_cpu_rate, 1),
        "limit_per_s": round(limit_cpu_rate * cores, 1), "limit_gflops_per_cpu_s": round(limit["gflops_per_cpu_s"], 1),
        "demo_cpu_seconds_at_limit": round(len(windows) / limit_cpu_rate, 1), "rows": rows,
    })
    print(f"wrote {out}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--limit"]:  # the child of single_thread_limit
        lengths, shapes = json.loads(sys.stdin.read())
        print(json.dumps(sgemm_limit(lengths, [tuple(s) for s in shapes])))
    else:
        main()
