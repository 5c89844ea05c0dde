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
from goldeval.retrievers.base import BuildContext, Retriever, build_retriever
from goldeval.retrievers.fusion import FUSIONS, NORMALISERS, fuse
from goldeval.retrievers.spec import check_known, float_option, split_options
from goldeval.run import Run
from goldeval.types import QuestionId

OPTIONS = {
    "method": "rrf (default) or norm",
    "k": "RRF constant, default 60",
    "weight": "two parts: A's weight w, B gets 1 - w",
    "weights": "one weight per part, comma-separated",
    "norm": "score normalisation for method=norm: minmax (default) or zscore",
    "depth": "results fetched from each part before fusing, default max(top_k, 100)",
}


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
    ) -> None:
        if len(parts) < 2:
            raise InputError("a hybrid retriever needs at least two parts", hint="hybrid:bm25+dense:minilm")
        if method not in FUSIONS:
            raise InputError(f"unknown fusion method {method!r}", value=method, hint=f"use one of {', '.join(FUSIONS)}")
        self.parts = list(parts)
        self.method = method
        self.params = dict(params or {})
        self.depth = depth
        self.name = name or "hybrid:" + "+".join(p.name for p in parts)
        self.last_runs: list[Run] = []

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        depth = self.depth or max(top_k, 100)
        self.last_runs = [part.search(queries, top_k=depth) for part in self.parts]
        fused = fuse(self.last_runs, self.method, name=self.name, **self.params)
        return fused.top(top_k)


def split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` outside parentheses; raises on unbalanced parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise InputError(f"unbalanced ')' in retriever spec {text!r}", value=text)
        if char == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise InputError(f"unbalanced '(' in retriever spec {text!r}", value=text)
    parts.append("".join(current))
    return parts


def unwrap(part: str) -> str:
    """`(bm25?k1=1.2)` -> `bm25?k1=1.2`; other parts are returned stripped."""
    part = part.strip()
    while part.startswith("(") and part.endswith(")") and len(split_top(part[1:-1], "\0")) == 1:
        part = part[1:-1].strip()
    return part


def split_own_options(text: str) -> tuple[str, dict[str, str]]:
    """Split `body?opts` at the first `?` outside parentheses (the options of this spec)."""
    pieces = split_top(text, "?")
    body = pieces[0]
    if len(pieces) == 1:
        return body, {}
    _, options = split_options("x?" + "?".join(pieces[1:]))
    return body, options


def build(rest: str, ctx: BuildContext) -> HybridRetriever:
    """Factory for `hybrid:A+B[?options]`."""
    spec = f"hybrid:{rest}"
    body, options = split_own_options(rest)
    check_known(spec, options, OPTIONS)
    parts = [unwrap(p) for p in split_top(body, "+")]
    if len(parts) < 2 or any(not p for p in parts):
        raise InputError(
            f"{spec!r} needs two or more retrievers joined by '+'", value=spec,
            hint="e.g. hybrid:bm25+dense:minilm?method=rrf&k=60",
        )
    method = options.get("method", "rrf")
    if method not in FUSIONS:
        raise InputError(f"unknown fusion method {method!r} in {spec!r}", value=method, hint="use method=rrf or method=norm")
    params: dict[str, object] = {}
    weights = _weights(spec, options, len(parts))
    if weights is not None:
        params["weights"] = weights
    elif method == "norm":
        params["weights"] = [1.0 / len(parts)] * len(parts)
    if method == "rrf":
        params["k"] = float_option(spec, options, "k", 60.0)
    elif "k" in options:
        raise InputError(f"option k is for method=rrf, not {method} ({spec!r})", value=spec)
    if "norm" in options:
        if method != "norm" or options["norm"] not in NORMALISERS:
            raise InputError(f"option norm={options['norm']!r} needs method=norm and minmax or zscore", value=spec)
        params["norm"] = options["norm"]
    depth = int(float_option(spec, options, "depth", 0)) or None
    retrievers = [build_retriever(p, ctx) for p in parts]
    return HybridRetriever(retrievers, method=method, params=params, depth=depth, name=spec)


def _weights(spec: str, options: dict[str, str], n: int) -> list[float] | None:
    if "weight" in options and "weights" in options:
        raise InputError(f"give weight= or weights=, not both ({spec!r})", value=spec)
    if "weight" in options:
        if n != 2:
            raise InputError(f"weight= is for two parts; {spec!r} has {n}", value=spec, hint="use weights=w1,w2,...")
        w = float_option(spec, options, "weight", 0.5)
        if not 0.0 <= w <= 1.0:
            raise InputError(f"weight={w:g} in {spec!r} is outside [0, 1]", value=w, hint="A gets w, B gets 1 - w")
        return [w, 1.0 - w]
    if "weights" in options:
        try:
            values = [float(x) for x in options["weights"].split(",")]
        except ValueError:
            raise InputError(f"weights={options['weights']!r} in {spec!r} are not numbers", value=spec) from None
        if len(values) != n:
            raise InputError(f"{len(values)} weights for {n} parts in {spec!r}", value=spec)
        return values
    return None
