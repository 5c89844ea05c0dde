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

Rows, each passages per second and per CPU second on the same texts, best of `ROUNDS`, the rows taking
turns within each round (interleaved, so the machine's load falls on all alike), nothing cached:
- goldeval `dense:minilm` as it runs (dynamic int8, one text per run, a thread per core), batches sorted by
  tokens (the model's tokenizer counts each text once; issue 19), and sorted by characters (as before);
- `dense:minilm?precision=fp32`: the float32 graph on onnxruntime in batches of 8, sorted by tokens, by
  characters, and in input order (what sorting saves in padding);
- PyTorch float32 through sentence-transformers (`minilm-st`), when installed.
Beside the timings, the padding each order makes float32 batches of 8 compute for nothing (counted, not
timed; on the demo's sample and on Cranfield's abstracts, of every length), float32 sorted by tokens and by
characters timed on `CRANFIELD_SAMPLE` abstracts, and how many cores each row kept busy (CPU seconds over
wall seconds; on a shared machine the load decides that, not goldeval).
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
from pathlib import Path
from typing import Any

import numpy as np

from bench import write_results
from goldeval.retrievers.encoders.base import available_cores

SAMPLE = 100
"""Windows timed (every n-th of the demo's, so long and short ones both): a few minutes on 2 busy cores."""
ROUNDS = 3
CRANFIELD_SAMPLE = 280
"""Every 5th Cranfield abstract, for the float32 sorting rows (a minute of CPU on 2 busy cores)."""
OURS = "dense:minilm (int8, dynamic; one text per run, a thread per core), sorted by tokens"
"""The row of goldeval's default as it runs (bench/table.py quotes it)."""
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


def encoder_rows() -> list[tuple[str, Any]]:
    """Each way to run the model here, as (label, encoder), loaded: both precisions, batches sorted by tokens
    (as goldeval runs them now) and by characters (as before), float32 also in input order."""
    from goldeval.retrievers.encoders.registry import load_encoder, registry

    int8 = load_encoder("minilm", progress=False)
    int8_chars = load_encoder("minilm", progress=False)
    int8_chars.token_counts = lambda texts: None  # type: ignore[method-assign]  # characters, as before
    fp32 = load_encoder("minilm", precision="fp32", progress=False)
    fp32_chars = load_encoder("minilm", precision="fp32", progress=False)
    fp32_chars.token_counts = lambda texts: None  # type: ignore[method-assign]
    fp32_input = load_encoder("minilm", precision="fp32", progress=False)
    fp32_input.sort_by_length = False
    rows: list[tuple[str, Any]] = [
        (OURS, int8),
        ("the same, sorted by characters", int8_chars),
        ("dense:minilm?precision=fp32 (onnxruntime float32), batches of 8 sorted by tokens", fp32),
        ("the same, batches of 8 sorted by characters", fp32_chars),
        ("the same, batches of 8 in input order", fp32_input),
    ]
    if registry()["minilm-st"].installed:
        rows.append(("PyTorch float32 (minilm-st), batches of 32 sorted by tokens", load_encoder("minilm-st", progress=False)))
    return rows


def interleaved(texts: list[str], rows: list[tuple[str, Any]]) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of each row's best of `ROUNDS`, the rows taking turns within each round, so a
    change in the machine's load falls on all of them alike."""
    for _, encoder in rows:
        encoder.encode(texts[:4])  # loaded (the int8 copy made once per machine) outside the timing
    best = {label: (float("inf"), float("inf")) for label, _ in rows}
    for _ in range(ROUNDS):
        for label, encoder in rows:
            start, cpu = time.perf_counter(), time.process_time()
            encoder.encode(texts)
            best[label] = min(best[label], (time.perf_counter() - start, time.process_time() - cpu))
    return best


def cranfield_texts() -> list[str]:
    """Cranfield's 1,400 abstracts (title and text, of every length): where sorting has padding to save."""
    from bench.cranfield import DATA
    from goldeval.corpus import load_corpus
    from goldeval.retrievers.dense import passage_text

    return [passage_text(p) for p in load_corpus(DATA).passages()]


def mixed_lengths(texts: list[str]) -> dict[str, float]:
    """Passages per CPU second of float32 batches sorted by tokens and by characters on texts of every length
    (the demo's windows are nearly all full, so the order barely matters there), interleaved."""
    from goldeval.retrievers.encoders.registry import load_encoder

    by_tokens = load_encoder("minilm", precision="fp32", progress=False)
    by_chars = load_encoder("minilm", precision="fp32", progress=False)
    by_chars.token_counts = lambda texts: None  # type: ignore[method-assign]
    best = interleaved(texts, [("tokens", by_tokens), ("characters", by_chars)])
    return {order: round(len(texts) / cpu, 1) for order, (_, cpu) in best.items()}


def padding(texts: list[str], batch: int = 8) -> dict[str, float]:
    """Padded tokens per real token of float32 batches of `batch` in each order (no timing: what each order
    makes the model compute for nothing)."""
    from goldeval.retrievers.encoders.base import longest_first

    lengths = token_lengths(texts)
    orders = {"tokens": longest_first(lengths), "characters": longest_first([len(t) for t in texts]),
              "input": list(range(len(texts)))}
    out = {}
    for name, order in orders.items():
        padded = sum(max(lengths[i] for i in order[s : s + batch]) * len(order[s : s + batch])
                     for s in range(0, len(order), batch))
        out[name] = round(padded / sum(lengths) - 1, 4)
    return out


def main() -> None:
    windows = demo_windows()
    texts = windows[:: max(1, len(windows) // SAMPLE)][:SAMPLE]
    lengths = token_lengths(texts)
    limit = single_thread_limit(lengths, weight_shapes())
    n, cores = len(texts), available_cores()
    limit_cpu_rate = n / limit["cpu_seconds"]
    load = os.getloadavg()[0]
    print(f"demo windows: {len(windows)}; timed: {n}, {sum(lengths):,} tokens (mean {np.mean(lengths):.0f}, "
          f"{sum(1 for x in lengths if x < 200)} under 200); cores: {cores}, load {load:.1f}", flush=True)
    print(f"{'limit: float32 sgemm of the model products, no padding':78s} {limit_cpu_rate * cores:8.1f} passages/s "
          f"{limit_cpu_rate:7.1f} per CPU s ({limit['gflops_per_cpu_s']:.0f} GFLOP per CPU s)", flush=True)
    waste = {"demo_sample": padding(texts), "cranfield": padding(cranfield_texts())}
    for name, counted in waste.items():
        print(f"padding of float32 batches of 8, per real token, {name}: " + ", ".join(
            f"sorted by {k} {v:.1%}" if k != "input" else f"input order {v:.1%}" for k, v in counted.items()))
    cranfield = cranfield_texts()[::5][:CRANFIELD_SAMPLE]
    mixed = mixed_lengths(cranfield)
    print(f"float32 batches of 8 on {len(cranfield)} Cranfield abstracts, passages per CPU s: sorted by tokens "
          f"{mixed['tokens']}, by characters {mixed['characters']}", flush=True)
    rows = {}
    for label, (wall, cpu) in interleaved(texts, encoder_rows()).items():
        rows[label] = {"per_s": round(n / wall, 1), "per_cpu_s": round(n / cpu, 1),
                       "of_limit_cpu": round(n / cpu / limit_cpu_rate, 2), "cpu_per_wall": round(cpu / wall, 2)}
        print(f"{label:78s} {n / wall:8.1f} passages/s {n / cpu:7.1f} per CPU s   "
              f"{rows[label]['of_limit_cpu']:.2f} of the limit per CPU s  ({cpu / wall:.2f} cores busy)", flush=True)
    out = write_results("embed_limit", {
        "windows": len(windows), "texts": n, "tokens": sum(lengths), "cores": cores,
        "load": round(load, 1), "limit_per_cpu_s": round(limit_cpu_rate, 1),
        "limit_per_s": round(limit_cpu_rate * cores, 1), "limit_gflops_per_cpu_s": round(limit["gflops_per_cpu_s"], 1),
        "demo_cpu_seconds_at_limit": round(len(windows) / limit_cpu_rate, 1), "padding_per_token": waste,
        "cranfield_fp32_per_cpu_s": {"texts": len(cranfield), **mixed},
        "rows": rows,
    })
    print(f"wrote {out}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--limit"]:  # the child of single_thread_limit
        lengths, shapes = json.loads(sys.stdin.read())
        print(json.dumps(sgemm_limit(lengths, [tuple(s) for s in shapes])))
    else:
        main()
