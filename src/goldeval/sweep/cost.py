"""What a configuration costs: index time and size, embedding time, query latency.

Latency is what one user waits for one question, measured the same way for every configuration so
that none looks faster because an earlier one warmed a cache:
- each sampled question is searched alone against the built index, with its query vector already in
  the embedding cache (the index search alone), and
- each embedding model the retriever uses embeds that question alone, fresh (the model's time,
  measured once per model and question in a process: it is the same for every configuration),
and the two are added. A hybrid adds its parts' latencies and its own fusion time (the parts run one
after the other); a reranked configuration adds the reranker's time on its base's results, scored afresh
(never read from the rerank score cache, which holds every pair once the run is done). The sample
is the same questions for every configuration (`latency_sample`), so per-question sums line up.
Percentiles are numpy's linear interpolation.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

LATENCY_SAMPLE = 200
"""Questions timed per configuration (all of them when there are fewer)."""
COST_AXES = ("latency_p50_ms", "latency_p95_ms", "index_seconds", "embedding_seconds", "index_bytes", "api_dollars")
"""The costs a Pareto front is drawn against (lower is better on each)."""


@dataclass
class Cost:
    """What one configuration costs; None where it was not measured (the reason is in `notes`)."""

    index_seconds: float | None = None
    """Building the index from passages (and from vectors already embedded, for dense)."""
    embedding_seconds: float | None = None
    """Embedding every passage once (one worker's time, summed over shards); 0 for bm25."""
    embedding_estimated: bool = False
    """True when only some passages were embedded by this sweep and the time is scaled to all of them."""
    index_bytes: int | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    latency_questions: int = 0
    api_tokens: int | None = None
    """Tokens the API models of this configuration are sent: an embedding API (dense:openai:, dense:ollama:)
    every passage once and every question once; a rerank API (`rerank:...>api:MODEL`) one request a question
    with its top candidates (`rerank_api_cost`); estimated (`retrievers.usage.estimate_tokens`) so it does not
    depend on the caches."""
    api_dollars: float | None = None
    """Those tokens (and a rerank API's requests) at each model's list price (`retrievers.usage.dollars`,
    data/prices.toml), summed; 0 for local models, None when an API model has no price."""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def value(self, axis: str) -> float | None:
        value = getattr(self, axis)
        return None if value is None else float(value)


def api_cost(model: str, texts: Sequence[str], prices: str | None = None) -> tuple[int, float | None]:
    """(tokens, dollars) of sending `texts` to `model` once: 0 and 0.0 for a local model."""
    from goldeval.retrievers.encoders.api import is_api_name
    from goldeval.retrievers.usage import dollars, estimate_tokens

    if not is_api_name(model):
        return 0, 0.0
    tokens = sum(estimate_tokens(t) for t in texts)
    return tokens, dollars(model, tokens, 0, prices=prices)


def rerank_api_cost(model: str, items: Sequence[tuple[str, Sequence[str]]],
                    prices: str | None = None) -> tuple[int, float | None]:
    """(tokens, dollars) of reranking `items` (question, candidate texts) with the rerank API `model`
    (`api:NAME`) once: one request a question that has candidates, carrying what `rerank_api.sent_texts`
    says a request carries."""
    from goldeval.retrievers.rerank_api import sent_texts
    from goldeval.retrievers.usage import dollars, estimate_tokens

    asked = [(query, list(texts)) for query, texts in items if texts]
    tokens = sum(estimate_tokens(t) for query, texts in asked for t in sent_texts(query, texts))
    return tokens, dollars(model, tokens, len(asked), prices=prices)


def latency_sample(qids: Sequence[str], *, seed: int = 0, size: int = LATENCY_SAMPLE) -> list[str]:
    """The questions every configuration is timed on: a seeded sample, in golden-set order."""
    if len(qids) <= size:
        return list(qids)
    rows = np.random.default_rng(seed).choice(len(qids), size=size, replace=False)
    return [qids[i] for i in sorted(rows.tolist())]


def measure_latency(retriever: Any, questions: Mapping[str, str], qids: Sequence[str], depth: int) -> dict[str, float]:
    """Milliseconds per sampled question: its search alone, plus each model's fresh embedding of it."""
    encoders = encoders_of(retriever)
    fresh = getattr(retriever, "without_score_cache", None)  # a reranker's scores, computed, not read back
    retriever = fresh() if callable(fresh) else retriever
    out: dict[str, float] = {}
    for qid in qids:
        start = time.perf_counter()
        retriever.search({qid: questions[qid]}, top_k=depth)
        seconds = time.perf_counter() - start
        out[qid] = seconds * 1000.0 + sum(encode_ms(encoder, questions[qid]) for encoder in encoders)
    return out


_ENCODE_MS: dict[tuple[str, str], float] = {}


def encode_ms(encoder: Any, question: str) -> float:
    """Milliseconds for `encoder` to embed `question` alone, fresh; measured once per process, since it
    is the same for every configuration that uses the model (and one measurement keeps them comparable)."""
    memo = (str(getattr(encoder, "key", id(encoder))), question)
    if memo not in _ENCODE_MS:
        start = time.perf_counter()
        encoder.encode([question], kind="query")
        _ENCODE_MS[memo] = (time.perf_counter() - start) * 1000.0
    return _ENCODE_MS[memo]


def encoders_of(retriever: Any) -> list[Any]:
    """The embedding models a built retriever calls per question: a dense retriever's, a bi-encoder
    reranker's (a cross-encoder scores inside its search, so its time is already in the search)."""
    found = [getattr(retriever, "encoder", None), getattr(getattr(retriever, "scorer", None), "encoder", None)]
    return [e for e in found if e is not None and callable(getattr(e, "encode", None))]


def index_bytes(retriever: Any) -> int | None:
    """The in-memory size of what a built retriever searches: the vectors (or the ANN graph) of a dense
    retriever, the score matrix of bm25s; None for a retriever whose index goldeval cannot see."""
    own = getattr(retriever, "index_bytes", None)
    if isinstance(own, int):
        return own
    vectors = getattr(retriever, "vectors", None)
    if isinstance(vectors, np.ndarray):
        graph = getattr(getattr(retriever, "index", None), "_index", None)  # usearch's Index, when ann
        usage = getattr(graph, "memory_usage", None)
        return int(usage) if isinstance(usage, int) else int(vectors.nbytes)
    scores = getattr(getattr(retriever, "_model", None), "scores", None)  # bm25s keeps its CSC matrix here
    if isinstance(scores, dict):
        return int(sum(a.nbytes for a in scores.values() if isinstance(a, np.ndarray)))
    return None


def percentile(values: Sequence[float], q: float) -> float | None:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else None


def add_latencies(*parts: Mapping[str, float]) -> dict[str, float]:
    """Per-question sums over stages run one after the other; only questions every stage timed."""
    if not parts:
        return {}
    common = [q for q in parts[0] if all(q in p for p in parts[1:])]
    return {q: float(sum(p[q] for p in parts)) for q in common}


def add(*values: float | None) -> float | None:
    """A sum that is unknown when any part is unknown."""
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))
