"""Hybrid retrieval: run several retrievers and fuse their runs (RRF or normalised scores).

Spec grammar:

    hybrid:A+B[+C...][?method=rrf|norm&k=60&weight=0.3&weights=0.2,0.8&norm=minmax|zscore&depth=100]

- A, B, ... are any retriever specs (`bm25`, `dense:minilm`, ...), reused from the evaluation
  when already built. A part with its own `?options` or a `+` inside is wrapped in parentheses:
  `hybrid:(bm25?k1=1.2)+dense:minilm?method=norm&weight=0.3`.
- `method`: `rrf` (default, k=60) or `norm` (min-max normalised score sum).
- `weight=w` (two parts only): A gets w and B gets 1 - w; `weights=` gives one per part.
  Default: equal weights (1 each for rrf, 1/n each for norm).
- `depth`: how many results each part returns before fusion (default max(top_k, 100)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from goldeval.errors import InputError
from goldeval.limits import NUMBERS
from goldeval.retrievers.base import BuildContext, Retriever, build_retriever
from goldeval.retrievers.fusion import FUSIONS, fuse, score_scale
from goldeval.retrievers.options import Option, OptionSet, Values, split_spec, split_top, unwrap
from goldeval.run import Run
from goldeval.types import QuestionId

__all__ = ["OPTIONS", "HybridRetriever", "build", "split", "split_top", "unwrap"]

OPTIONS = OptionSet(
    "hybrid", "hybrid:A+B[+C...][?method=rrf|norm&k=60&weight=W&weights=W1,W2,...&norm=minmax|zscore&depth=N]", (
        Option("method", "choice", "rrf: reciprocal rank fusion; norm: weighted sum of normalised scores", "rrf",
               choices=tuple(FUSIONS)),
        Option("k", "float", "RRF constant: score = sum of w / (k + rank)", 60.0, low=0.0, when=("method", "rrf")),
        Option("weight", "float", "two parts: the first gets W, the second 1 - W (unset: equal weights)",
               low=0.0, high=1.0),
        Option("weights", "floats", "one weight per part, comma-separated (unset: equal weights)", low=0.0),
        Option("norm", "choice", "score normalisation", "minmax", choices=("minmax", "zscore"), when=("method", "norm")),
        Option("depth", "int", "results fetched from each part before fusing (unset: max(top_k, 100))", low=1,
               high=NUMBERS["depth"].high),
    ))


class HybridRetriever:
    """Fuses the runs of its parts; keeps the last part runs so weights can be swept offline."""

    def __init__(
        self,
        parts: Sequence[Retriever],
        *,
        method: str = "rrf",
        params: Mapping[str, object] | None = None,
        depth: int | None = None,
        name: str | None = None,
        options: Mapping[str, object] | None = None,
    ) -> None:
        """`options`: the resolved spec options, recorded in `config` (derived from the rest if absent)."""
        if len(parts) < 2:
            raise InputError("a hybrid retriever needs at least two parts", hint="hybrid:bm25+dense:minilm")
        if method not in FUSIONS:
            raise InputError(f"unknown fusion method {method!r}", value=method, hint=f"use one of {', '.join(FUSIONS)}")
        self.parts = list(parts)
        self.method = method
        self.params = dict(params or {})
        self.depth = depth
        self.name = name or "hybrid:" + "+".join(p.name for p in parts)
        self.options = dict(options) if options is not None else {"method": method, **self.params, "depth": depth}
        self.last_runs: list[Run] = []

    @property
    def config(self) -> dict[str, object]:
        """Spec, method, what its scores measure (`score_scale`: `rank` for RRF), every option, the fused
        weights, and each part's own configuration."""
        return {
            "spec": self.name, "kind": "hybrid", "method": self.method, "score": score_scale(self.method),
            "options": OPTIONS.effective(self.options),
            "fusion": dict(self.params), "parts": [getattr(p, "config", None) or {"name": p.name} for p in self.parts],
        }

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        depth = self.depth or max(top_k, 100)
        self.last_runs = [part.search(queries, top_k=depth) for part in self.parts]
        fused = fuse(self.last_runs, self.method, name=self.name, **self.params)
        return fused.top(top_k)


def split(rest: str) -> tuple[dict[str, str], list[str]]:
    """`A+B?opts` -> (this hybrid's own options, the part specs); options after the first `?`
    outside parentheses are the hybrid's, so a part with its own options is wrapped: `(bm25?k1=1.2)`."""
    body, own = split_spec(rest)
    parts = [unwrap(p) for p in split_top(body, "+")]
    if len(parts) < 2 or any(not p for p in parts):
        raise InputError(
            f"'hybrid:{rest}' needs two or more retrievers joined by '+'", value=f"hybrid:{rest}",
            hint="e.g. hybrid:bm25+dense:minilm?method=rrf&k=60",
        )
    return own, parts


def build(rest: str, ctx: BuildContext) -> HybridRetriever:
    """Factory for `hybrid:A+B[?options]`; `--option` keys it declares apply too."""
    spec = f"hybrid:{rest}"
    own, parts = split(rest)
    values = OPTIONS.resolve(own, ctx.options, spec=spec)
    method = values.text("method") or "rrf"
    params: dict[str, object] = {}
    weights = _weights(spec, values, own, len(parts))
    if weights is not None:
        params["weights"] = weights
    elif method == "norm":
        params["weights"] = [1.0 / len(parts)] * len(parts)
    if method == "rrf":
        params["k"] = values.number("k")
    else:
        params["norm"] = values["norm"]
    retrievers = [build_retriever(p, ctx) for p in parts]
    return HybridRetriever(retrievers, method=method, params=params, depth=values.whole("depth"), name=spec,
                           options=values)


def _weights(spec: str, values: Values, own: Mapping[str, str], n: int) -> list[float] | None:
    weight, weights = values.number("weight"), values["weights"]
    if weight is not None and weights is not None:
        if ("weight" in own) == ("weights" in own):
            raise InputError(f"give weight= or weights=, not both ({spec!r})", value=spec)
        weight, weights = (weight, None) if "weight" in own else (None, weights)  # the spec's own wins
    if weight is not None:
        if n != 2:
            raise InputError(f"weight= is for two parts; {spec!r} has {n}", value=spec, hint="use weights=w1,w2,...")
        return [weight, 1.0 - weight]
    if isinstance(weights, list):
        if len(weights) != n:
            raise InputError(f"{len(weights)} weights for {n} parts in {spec!r}", value=spec)
        return [float(w) for w in weights]
    return None
