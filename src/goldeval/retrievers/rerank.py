"""Reranking: re-score the top N of a base retriever with a stronger, slower model.

Spec grammar:

    rerank:BASE>RERANKER[?top=50&batch_size=32]

- BASE: any retriever spec, options included (`rerank:hybrid:bm25+dense:minilm?method=norm>...`);
  everything after the last top-level `>` is the reranker and this stage's options.
- RERANKER:
  - `dense:MODEL` -- the fallback that works offline today: re-score with a (stronger) bi-encoder,
    e.g. `rerank:bm25>dense:mpnet-base`; vectors are cached like dense retrieval's.
  - `hf:ORG/NAME[@REVISION]` -- a CrossEncoder from the Hugging Face hub by name, e.g.
    `rerank:bm25>hf:cross-encoder/ms-marco-MiniLM-L-6-v2` (the user's cache and token; encoders/hub.py).
  - `ce:PATH` or a folder path -- a sentence-transformers CrossEncoder folder (extra `st`).
  - `module:function` -- your `score(query, texts) -> list[float]`, higher is better.
  - `api:MODEL?url=URL` -- a rerank API, Cohere-shaped or TEI-shaped (`rerank_api.py`).
- `top`: how many base results to re-score (default 50). Results ranked below `top` keep the base
  order beneath the reranked ones (their scores are shifted below the lowest reranked score).
- `batch_size`: pairs (cross-encoder) or texts (bi-encoder) per model call.
- `trust_remote_code`: a hub CrossEncoder whose repository defines its model in its own Python code.

Scores of a cross-encoder (`hf:`, `ce:`) and of a rerank API are kept in the workspace's rerank score cache
(`store.cache.ScoreCache`), keyed by the reranker's identity (`Scorer.cache_key`: the model's commit or files,
or the API's model, URL and format) and by each (query text, passage text) pair, stored a chunk of questions
at a time as they are scored: a re-run, or a run after one was killed, scores only the pairs not scored
before. A bi-encoder's vectors are in the embedding cache already; a function's scores are not kept (its
code may change under the same name).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from goldeval.corpus.model import Passage
from goldeval.errors import InputError, require
from goldeval.fingerprint import fingerprint
from goldeval.limits import NUMBERS
from goldeval.retrievers.base import BuildContext, Retriever, build_retriever
from goldeval.retrievers.dense import encoder_identity, passage_text
from goldeval.retrievers.encoders.base import Encoder, cached_encode, threads
from goldeval.retrievers.encoders.hub import HubModel, is_hub_name
from goldeval.retrievers.options import Option, OptionSet, split_spec, split_top, unwrap
from goldeval.run import Run
from goldeval.store.cache import EmbeddingCache, ScoreCache
from goldeval.store.workspace import Workspace
from goldeval.textsafe import redact
from goldeval.types import PassageId, QuestionId

OPTIONS = OptionSet("rerank", "rerank:BASE>RERANKER[?top=50&batch_size=N]", (
    Option("top", "int", "base results re-scored per question", 50, low=1, high=NUMBERS["depth"].high),
    Option("batch_size", "int", "pairs (ce:) or texts (dense:) per model call (unset: the model's own, 32 for ce:)",
           low=1, high=NUMBERS["batch_size"].high),
    Option("url", "str", "a rerank API's endpoint, for api:MODEL, e.g. https://api.cohere.com/v2/rerank or "
           "http://localhost:8080/rerank"),
    Option("format", "choice", "a rerank API's wire format: cohere (Cohere, Jina, Voyage, vLLM, LiteLLM) or tei "
           "(Text Embeddings Inference)", "cohere", choices=("cohere", "tei")),
    Option("key_env", "str", "environment variable holding a rerank API's key, sent as a bearer token (unset: no "
           "key is sent)"),
    Option("timeout", "float", "seconds per rerank API request before it is retried (unset: 60)", low=0,
           low_open=True, high=NUMBERS["timeout"].high),
    Option("concurrency", "int", "rerank API requests in flight at once (unset: 4)", low=1,
           high=NUMBERS["concurrency"].high),
    Option("prices", "path", "a price table of your own for a rerank API's dollars (unset: $GOLDEVAL_PRICES, else "
           "goldeval's)"),
    Option("trust_remote_code", "bool", "run a hub cross-encoder repository's own Python code (hf:ORG/NAME); only "
           "for a repository you trust, at a pinned @REVISION (unset: false)"),
))
API_OPTIONS = ("url", "key_env", "timeout", "concurrency", "prices")
"""Options only a rerank API (`api:MODEL`) takes."""

ScoreFn = Callable[[str, list[str]], Sequence[float]]
"""A user's reranker: `score(query, texts) -> one score per text`, higher is better."""
CROSS_ENCODER_CHUNK = 32
"""Questions a cross-encoder scores, then stores in the rerank score cache, at a time."""


class Scorer(Protocol):
    name: str
    config: dict[str, object]
    cache_key: str | None
    """What the scores depend on, for the rerank score cache (`goldeval.fingerprint` of the model's identity);
    None: its scores are not kept."""
    cache_chunk: int
    """Questions scored, then stored, at a time: what a killed run keeps."""

    def score(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        """For each (query, candidate texts), one score per candidate."""
        ...


class FunctionScorer:
    """Calls the user's `score(query, texts)` once per question."""

    cache_key: str | None = None  # the user's code may change under the same name: never kept
    cache_chunk = 1

    def __init__(self, fn: ScoreFn, name: str = "function") -> None:
        self.fn, self.name = fn, name
        self.config: dict[str, object] = {"kind": "function", "target": name}

    def score(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        out = []
        for query, texts in items:
            scores = [float(s) for s in self.fn(query, texts)]
            if len(scores) != len(texts):
                raise InputError(
                    f"reranker {self.name!r} returned {len(scores)} scores for {len(texts)} texts",
                    hint="return one score per text, in the order given",
                )
            out.append(scores)
        return out


class BiEncoderScorer:
    """The offline fallback: cosine similarity under a stronger bi-encoder, vectors cached."""

    cache_key: str | None = None  # its vectors are in the embedding cache; a score is one dot product
    cache_chunk = 1

    def __init__(self, encoder: Encoder, workspace: Workspace) -> None:
        self.encoder = encoder
        self.name = f"dense:{encoder.name}"
        self.cache = EmbeddingCache(workspace, encoder.key, slug=encoder.name, about={"model": encoder.name})
        self.config: dict[str, object] = {"kind": "dense", **encoder_identity(encoder),
                                          "batch_size": getattr(encoder, "batch_size", None)}

    def score(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        unique = list(dict.fromkeys(t for _, texts in items for t in texts))
        pvecs = cached_encode(self.cache, self.encoder, unique, "passage")
        qvecs = cached_encode(self.cache, self.encoder, [q for q, _ in items], "query")
        row = {text: i for i, text in enumerate(unique)}
        return [
            (pvecs[[row[t] for t in texts]] @ qvecs[n]).tolist() if texts else []
            for n, (_, texts) in enumerate(items)
        ]


class CrossEncoderScorer:
    """A sentence-transformers CrossEncoder (a folder, or a hub model at its commit) scoring (query,
    passage) pairs jointly."""

    cache_chunk = CROSS_ENCODER_CHUNK

    def __init__(self, folder: Path, *, batch_size: int = 32, hub: HubModel | None = None) -> None:
        from goldeval.retrievers.encoders.registry import package_version
        from goldeval.retrievers.encoders.st import folder_identity

        if not folder.is_dir():
            raise InputError("cross-encoder folder not found", path=folder, hint="pass a CrossEncoder folder saved with .save()")
        self.folder, self.batch_size, self.hub = folder, batch_size, hub
        self.name = hub.name if hub else f"ce:{folder.name}"
        self.config: dict[str, object] = {"kind": "cross-encoder", "folder": str(folder), "batch_size": batch_size,
                                          **({"model_hub": hub.identity()} if hub else {})}
        # the commit (a hub model) or the files (a folder), and the library that runs them; not the batch size,
        # as the embedding cache's key leaves it out
        weights = hub.identity() if hub else folder_identity(folder)
        self.cache_key: str | None = fingerprint({"reranker": "cross-encoder", **weights,
                                                  "sentence-transformers": package_version("sentence-transformers")})
        self._model: Any = None

    def score(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        if self._model is None:
            st = require("sentence_transformers", extra="st", purpose="the cross-encoder reranker",
                         package="sentence-transformers")
            require("torch", extra="st", purpose="the cross-encoder reranker").set_num_threads(threads())
            from goldeval.retrievers.encoders.st import load_hub, quiet_transformers

            quiet_transformers()
            if self.hub is None:
                self._model = st.CrossEncoder(str(self.folder), device="cpu", local_files_only=True)
            else:
                self._model = load_hub(st.CrossEncoder, self.hub, spec=f"rerank:BASE>{self.hub.name}")
        pairs = [(q, t) for q, texts in items for t in texts]
        flat = np.asarray(self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False), dtype=np.float64)
        flat = flat.reshape(len(pairs), -1)[:, -1] if len(pairs) else flat
        out, start = [], 0
        for _, texts in items:
            out.append(flat[start : start + len(texts)].tolist())
            start += len(texts)
        return out


class RerankRetriever:
    """Base retriever, then `scorer` over the top `top` results of each question."""

    def __init__(self, base: Retriever, scorer: Scorer, passages: Sequence[Passage], *, top: int = 50,
                 name: str | None = None, workspace: Workspace | None = None) -> None:
        if top < 1:
            raise InputError(f"rerank top must be >= 1, got {top}", value=top)
        self.base, self.scorer, self.top = base, scorer, top
        self.passages: dict[PassageId, Passage] = {p.id: p for p in passages}
        self.name = name or f"rerank:{base.name}>{scorer.name}"
        key = getattr(scorer, "cache_key", None)
        self.score_cache = ScoreCache(workspace, key, slug=scorer.name, about=_about(scorer)) \
            if workspace is not None and key else None
        """The rerank score cache of this reranker (None: its scores are not kept, or no workspace)."""

    def without_score_cache(self) -> RerankRetriever:
        """The same retriever scoring every pair afresh: what the sweep times, so a configuration's latency is
        its reranker's time, not a cache's read."""
        return RerankRetriever(self.base, self.scorer, list(self.passages.values()), top=self.top, name=self.name)

    @property
    def config(self) -> dict[str, object]:
        """Spec, options, the base retriever's configuration and the reranker's."""
        return {
            "spec": self.name, "kind": "rerank",
            "options": {"top": self.top, "batch_size": self.scorer.config.get("batch_size")},
            "base": getattr(self.base, "config", None) or {"name": self.base.name}, "reranker": self.scorer.config,
        }

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        base_run = self.base.search(queries, top_k=max(top_k, self.top))
        qids = [q for q in queries if q in base_run.results]
        # Only passages of the corpus have text to re-score; an id the base invented (a search
        # function's or a run file's) keeps its base order below the reranked block.
        items = [(queries[q], [self.passages[pid] for pid, _ in base_run.results[q][: self.top] if pid in self.passages])
                 for q in qids]
        scores = self._score([(query, [passage_text(p) for p in candidates]) for query, candidates in items])
        run = Run(self.name, errors=dict(base_run.errors))
        for qid, (_, candidates), new in zip(qids, items, scores, strict=True):
            reranked = [(p.id, s) for p, s in zip(candidates, new, strict=True)]
            bad = next(((pid, s) for pid, s in reranked if not math.isfinite(s)), None)
            if bad is not None:  # NaN or infinity would decide the order silently: this question fails
                run.errors[qid] = f"reranker {self.scorer.name} gave `{bad[0]}` the score {bad[1]}, not a finite number"
                continue
            floor = min(new, default=0.0)
            unknown = [(pid, sc) for pid, sc in base_run.results[qid][: self.top] if pid not in self.passages]
            rest = unknown + base_run.results[qid][self.top : max(top_k, self.top)]
            # Below the reranked block, keep the base order: floor - 1, floor - 2, ...
            tail = [(pid, floor - 1.0 - i) for i, (pid, _) in enumerate(rest)]
            run.add(qid, reranked + tail)
        return run.top(top_k)

    def _score(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        """The scorer's scores of `items`, through the rerank score cache where it has one."""
        if self.score_cache is None:
            return self.scorer.score(items)
        return self.score_cache.get_or_score(items, self.scorer.score, chunk=self.scorer.cache_chunk)


def _about(scorer: Scorer) -> dict[str, object]:
    """What the score cache's folder says its key stands for, for people: the reranker's configuration
    without its usage counters (a URL's password redacted; the key's variable name, never the key)."""
    return {"reranker": scorer.name, **{k: redact(str(v)) if k == "url" else v for k, v in scorer.config.items()
                                        if k not in ("api", "batch_size")}}


def parse(rest: str) -> tuple[str, str, dict[str, str]]:
    """`BASE>RERANKER?opts` -> (base spec, reranker, this stage's options): the reranker is what
    follows the last `>` outside parentheses, so the base may carry its own options."""
    spec = f"rerank:{rest}"
    pieces = split_top(rest, ">")
    if len(pieces) < 2 or not pieces[0].strip() or not pieces[-1].strip():
        raise InputError(
            f"{spec!r} needs a base and a reranker joined by '>'", value=spec,
            hint="e.g. rerank:bm25>dense:mpnet-base?top=50 or rerank:hybrid:bm25+dense:minilm>ce:path/to/folder",
        )
    reranker, own = split_spec(pieces[-1])
    return unwrap(">".join(pieces[:-1])), unwrap(reranker), own


def split(rest: str) -> tuple[dict[str, str], list[str]]:
    base, _, own = parse(rest)
    return own, [base]


def build(rest: str, ctx: BuildContext) -> RerankRetriever:
    """Factory for `rerank:BASE>RERANKER[?top=N&batch_size=N]`; `--option` keys it declares apply too."""
    spec = f"rerank:{rest}"
    base_spec, reranker, own = parse(rest)
    values = OPTIONS.resolve(own, ctx.options, spec=spec)
    trusted = values.flag("trust_remote_code")
    if trusted and not is_hub_name(reranker):
        raise InputError(f"trust_remote_code in {spec!r} is for a hub cross-encoder (hf:ORG/NAME), not {reranker!r}",
                         value=spec, hint="drop it: only a hub repository brings code of its own")
    if reranker.startswith("api:"):
        from goldeval.retrievers.rerank_api import ApiScorer

        scorer: Scorer = ApiScorer(reranker, values)
    else:
        given = [k for k in API_OPTIONS if k in own]
        if given:
            raise InputError(f"{', '.join(given)} in {spec!r} is for a rerank API (api:MODEL?url=...), not "
                             f"{reranker!r}", value=spec, hint="drop it, or rerank with api:MODEL?url=URL")
        scorer = make_scorer(reranker, ctx, batch_size=values.whole("batch_size"), trust_remote_code=trusted)
    base = build_retriever(base_spec, ctx)
    return RerankRetriever(base, scorer, ctx.passages, top=values.whole("top") or 50, name=spec,
                           workspace=Workspace.at(ctx.workspace))


def make_scorer(reranker: str, ctx: BuildContext, *, batch_size: int | None = None,
                trust_remote_code: bool = False) -> Scorer:
    """`dense:MODEL`, `hf:ORG/NAME` (a hub CrossEncoder; `trust_remote_code` lets its repository's own code
    run), `ce:PATH`, a CrossEncoder folder, or `module:function`."""
    if reranker.startswith("dense:"):
        from goldeval.retrievers.encoders.registry import shared_encoder

        workspace = Workspace.at(ctx.workspace)
        encoder = shared_encoder(reranker[len("dense:"):], batch_size=batch_size)
        return BiEncoderScorer(encoder, workspace)
    batch_size = batch_size or 32
    if is_hub_name(reranker):
        from dataclasses import replace

        from goldeval.retrievers.encoders.hub import resolve

        hub = replace(resolve(reranker), trust_remote_code=trust_remote_code)
        return CrossEncoderScorer(hub.folder, batch_size=batch_size, hub=hub)
    if reranker.startswith("ce:"):
        return CrossEncoderScorer(Path(reranker[3:]).expanduser(), batch_size=batch_size)
    if Path(reranker).expanduser().is_dir():
        return CrossEncoderScorer(Path(reranker).expanduser(), batch_size=batch_size)
    module, sep, attr = reranker.rpartition(":")
    if sep and module:
        from goldeval.retrievers.function import import_function

        fn = import_function(module, attr, reranker, what="reranker",
                             hint="module:function must be importable (is its folder on PYTHONPATH?)")
        return FunctionScorer(fn, name=reranker)
    raise InputError(
        f"unknown reranker {reranker!r}", value=reranker,
        hint="use dense:MODEL (bi-encoder), hf:ORG/NAME (hub CrossEncoder), ce:PATH (CrossEncoder folder) or module:function",
    )
