"""`--dry-run`: what the API parts of a run would send, estimated before anything is called (issue 19).

For each `dense:openai:` / `dense:ollama:` part: the passages and questions the embedding cache lacks (so a
re-run estimates 0), cut into requests exactly as `ApiEncoder` would cut them (cache chunks, then
`plan_batches`), tokens by `usage.estimate_tokens`, dollars by `usage.dollars` (the price table). For each
`rerank:...>api:MODEL` part: one request per question, each carrying the question and `top` passages of
average length (an upper bound: the base may return fewer). No key is read, no model loaded, nothing sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from goldeval.corpus.model import Passage
from goldeval.retrievers.base import declared_options
from goldeval.retrievers.options import split_spec
from goldeval.retrievers.usage import dollars, estimate_tokens
from goldeval.store.cache import EmbeddingCache
from goldeval.store.workspace import Workspace


@dataclass(frozen=True)
class Estimate:
    """What one API model of a run would cost, before it runs."""

    spec: str
    model: str
    texts: int
    """Texts it would be sent (embedding: those not cached yet; rerank: questions)."""
    cached: int
    requests: int
    tokens: int
    dollars: float | None
    """None: the price table has no price for the model."""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def estimate(specs: Sequence[str], passages: Sequence[Passage], questions: Sequence[str], *,
             workspace: str | Path | None, options: Mapping[str, object]) -> list[Estimate]:
    """An Estimate per API model part of `specs` (local parts cost no request and are left out)."""
    out: list[Estimate] = []
    for spec in specs:
        for part in declared_options(spec, options):
            if part.options.kind == "dense":
                found = _dense(part.spec, part.values, passages, questions, workspace)
            elif part.options.kind == "rerank":
                found = _rerank(part.spec, part.values, passages, questions)
            else:
                found = None
            if found is not None and found not in out:
                out.append(found)
    return out


def _dense(spec: str, values: Mapping[str, object], passages: Sequence[Passage], questions: Sequence[str],
           workspace: str | Path | None) -> Estimate | None:
    from goldeval.retrievers.dense import api_values, passage_text
    from goldeval.retrievers.encoders.api import ApiEncoder, ApiSettings, is_api_name, plan_batches

    rest = spec.removeprefix("dense:")
    model, _ = split_spec(rest)
    if not is_api_name(model):
        return None
    encoder = ApiEncoder(model, ApiSettings.of(api_values(values, rest) or {}))
    if values.get("batch_size"):
        encoder.batch_size = int(values["batch_size"])  # type: ignore[call-overload]
    cache = EmbeddingCache(Workspace.at(workspace), encoder.key, slug=encoder.name)
    requests = tokens = sent = total = 0
    for kind, texts in (("passage", [passage_text(p) for p in passages]), ("query", list(questions))):
        missing = cache.missing(texts, prefix=encoder.prefix(kind))  # type: ignore[arg-type]
        total += len(set(texts))
        sent += len(missing)
        step = encoder.cache_chunk
        for start in range(0, len(missing), step):
            chunk = missing[start : start + step]
            requests += len(plan_batches(chunk, max_texts=encoder.batch_size,
                                         max_tokens=encoder.settings.max_batch_tokens))
        tokens += sum(estimate_tokens(t) for t in missing)
    return Estimate(spec, model, sent, total - sent, requests, tokens,
                    dollars(model, tokens, requests, prices=encoder.settings.prices))


def _rerank(spec: str, values: Mapping[str, object], passages: Sequence[Passage],
            questions: Sequence[str]) -> Estimate | None:
    from goldeval.retrievers.dense import passage_text
    from goldeval.retrievers.rerank import parse

    _, reranker, _ = parse(spec.removeprefix("rerank:"))
    if not reranker.startswith("api:"):
        return None
    top = min(int(values.get("top") or 50), len(passages))  # type: ignore[call-overload]
    mean = sum(estimate_tokens(passage_text(p)) for p in passages) / max(1, len(passages))
    tokens = round(sum(estimate_tokens(q) + top * mean for q in questions)) if top else 0
    requests = len(questions) if top else 0
    prices = str(values["prices"]) if values.get("prices") else None
    return Estimate(spec, reranker, len(questions), 0, requests, tokens, dollars(reranker, tokens, requests, prices=prices))


def table(estimates: Sequence[Estimate]) -> str:
    """The lines `--dry-run` prints: one per API model, then the total."""
    if not estimates:
        return "goldeval: dry run: no retriever of this run calls an API (nothing to pay, nothing sent)"
    lines = ["goldeval: dry run: nothing was sent; estimated (tokens at 4 bytes a token; the server's count differs)"]
    for e in estimates:
        cost = "no price in the table" if e.dollars is None else f"${e.dollars:,.4f}"
        lines.append(f"  {e.spec}: {e.requests:,} request(s), {e.texts:,} text(s) to send ({e.cached:,} cached), "
                     f"~{e.tokens:,} tokens, {cost}")
    known = [e.dollars for e in estimates if e.dollars is not None]
    lines.append(f"  total: {sum(e.requests for e in estimates):,} request(s), ~{sum(e.tokens for e in estimates):,} "
                 f"tokens, ${sum(known):,.4f}" + (" (models without a price left out)" if len(known) < len(estimates) else ""))
    return "\n".join(lines)
