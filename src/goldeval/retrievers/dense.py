"""Dense retrieval: embed passages once (cached in the workspace), search a vector index.

Spec: `dense:MODEL[?backend=exact|ann|pgvector&batch_size=N&threads=N&precision=int8|fp32|auto]`, where
MODEL is a short name from the registry (`goldeval models`), a path to a sentence-transformers folder, or a
hub name `hf:ORG/NAME[@REVISION]` (encoders/hub.py; `query_prefix`/`passage_prefix` override its family's);
`precision` picks a registry model's variant (encoders/precision.py: never chosen by the machine unasked). The same
options may come from `BuildContext.options` (`--option`, the CLI's `--index`, `--dsn`); the spec
wins. The backend's own options (`hnsw=true`, `connectivity=32`) are declared by the backend and
apply only with it (`retrievers.backends`).
Passages are embedded as `title\\ntext` (the text alone when there is no title), like BM25 indexes.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.limits import NUMBERS
from goldeval.retrievers.backends import (
    BACKENDS,
    VectorIndex,
    backend_options,
    index_identity,
    make_index,
    recall_against_exact,
)
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.encoders.base import Encoder, cached_encode, threads
from goldeval.retrievers.long_documents import MODES, best_per_passage, plan_windows, warning
from goldeval.retrievers.options import Option, OptionSet, Values, split_spec
from goldeval.run import Run
from goldeval.store.cache import CacheStats, EmbeddingCache
from goldeval.store.workspace import Workspace
from goldeval.textsafe import warn
from goldeval.types import QuestionId

HUB_OPTIONS = ("query_prefix", "passage_prefix", "trust_remote_code")
"""The dense options that only hub models (`hf:ORG/NAME`) take."""
PRECISIONS = ("int8", "fp32", "auto")
"""What `precision=` takes: a variant by name (models.toml's `precision` and `variants`), or the faster here."""

OPTIONS = OptionSet("dense", "dense:MODEL[?backend=exact|ann|pgvector&batch_size=N&threads=N&long=max|truncate"
                             "&precision=int8|fp32|auto]", (
    Option("backend", "choice", "vector index: exact (numpy), ann (usearch HNSW) or pgvector (PostgreSQL)", "exact",
           choices=BACKENDS),
    Option("batch_size", "int", "texts per model call (unset: the model's own)", low=1, high=NUMBERS["batch_size"].high),
    Option("threads", "int", "CPU threads the model runs on for this retriever (unset: every core the process may "
           "use; e5-small takes it when it first loads)", low=1,
           high=NUMBERS["threads"].high),
    Option("long", "choice", "a passage longer than the model's window: max ranks it by its best window (split along "
           "the model's tokens), truncate embeds its start only, as the model alone would", "max", choices=MODES),
    Option("precision", "choice", "a model with int8 and float32 variants (minilm) runs this one: auto is the "
           "faster on this CPU, measured once per machine; the results record which ran (unset: the model's own, "
           "int8 for minilm, the same on every machine)", choices=PRECISIONS),
    Option("query_prefix", "str", "text put before each question, for a hub model (hf:ORG/NAME): percent-encoded "
           "(query:%20 for a trailing space), none for no prefix (unset: its family's, docs/models.md)"),
    Option("passage_prefix", "str", "text put before each passage, for a hub model, written as query_prefix"),
    Option("trust_remote_code", "bool", "run the hub model repository's own Python code (nomic-embed-text and "
           "jina need it); only for a repository you trust, at a pinned @REVISION (unset: false)"),
    Option("base_url", "str", "an API model's server (openai:, ollama:), e.g. http://localhost:8000/v1 (unset: "
           "OpenAI's, or Ollama's http://localhost:11434/v1)"),
    Option("dimensions", "int", "vector size an API model is asked for (text-embedding-3 models take it; unset: "
           "the model's own)", low=1, high=NUMBERS["dimensions"].high),
    Option("key_env", "str", "environment variable holding an API model's key (unset: OPENAI_API_KEY; ollama: "
           "none needed)"),
    Option("timeout", "float", "seconds per API request before it is retried (unset: 60)", low=0, low_open=True,
           high=NUMBERS["timeout"].high),
    Option("concurrency", "int", "API requests in flight at once (unset: 4)", low=1, high=NUMBERS["concurrency"].high),
    Option("max_batch_tokens", "int", "estimated tokens per API request at most (unset: 100000; OpenAI takes "
           "300000)", low=1, high=NUMBERS["max_batch_tokens"].high),
    Option("prices", "path", "a price table of your own for an API model's dollars (unset: $GOLDEVAL_PRICES, else "
           "goldeval's, data/prices.toml)"),
    *(replace(o, when=("backend", b)) for b in ("ann", "pgvector") for o in backend_options(b).options),
))


def passage_text(passage: Passage) -> str:
    """What a dense model embeds for a passage."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


class DenseRetriever:
    """Bi-encoder retrieval: cosine similarity of L2-normalised query and passage vectors."""

    def __init__(
        self,
        passages: Sequence[Passage],
        encoder: Encoder,
        *,
        workspace: Workspace | None = None,
        backend: str = "exact",
        options: Mapping[str, object] | None = None,
        name: str | None = None,
    ) -> None:
        """`options`: the backend's (e.g. `{"dsn": ..., "hnsw": True}` for pgvector), strings or values."""
        self.name = name or f"dense:{encoder.name}"
        self.encoder = encoder
        values = OPTIONS.resolve({}, {**(options or {}), "backend": backend}, spec=self.name)  # before embedding
        workspace = workspace or Workspace.at()
        usage = getattr(encoder, "usage", None)  # an API model counts what it used (retrievers.usage)
        self._usage_start = usage.snapshot() if usage is not None else None
        self.cache = EmbeddingCache(workspace, encoder.key, slug=encoder.name, about={"model": encoder.name})
        # long passages: split into windows the model reads whole, ranked by the best (retrievers.long_documents)
        self.windows = plan_windows([p.id for p in passages], [passage_text(p) for p in passages], encoder,
                                    mode=values.text("long") or "max", label=self.name)
        self.passage_ids = self.windows.ids
        """The ids in the index: passage ids, and window ids for the windows of long passages."""
        self.vectors = cached_encode(self.cache, encoder, self.windows.texts, "passage")
        self.passage_stats: CacheStats = self.cache.stats
        self.index: VectorIndex = make_index(backend, int(self.vectors.shape[1]) if passages else encoder.dim, values)
        self.config: dict[str, object] = dense_config(self.name, encoder, self.index, values)
        self._note_usage()
        if self.windows.report is not None:
            self.config["long_documents"] = self.windows.report
            line = warning(self.name, self.windows.report)
            if line:
                warn(line)
        if passages:
            self.index.add(self.passage_ids, self.vectors)
        self.ann_recall: float | None = None
        if backend == "ann" and passages:
            self.ann_recall = self._check_ann()

    def _check_ann(self, sample: int = 200, top_k: int = 10) -> float:
        """Recall@10 of the ANN index against exact search, passages sampled as queries (stderr)."""
        rng = np.random.default_rng(0)
        rows = rng.choice(len(self.passage_ids), size=min(sample, len(self.passage_ids)), replace=False)
        recall = recall_against_exact(self.index, self.passage_ids, self.vectors, self.vectors[rows], top_k)
        print(f"goldeval: {self.name}: ANN recall@{top_k} against exact search on {len(rows)} sampled passages: "
              f"{recall:.3f}", file=sys.stderr)
        return recall

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        run = Run(self.name)
        qids = list(queries)
        if not qids:
            return run
        if not self.passage_ids:
            for qid in qids:
                run.add(qid, [])
            return run
        vectors = cached_encode(self.cache, self.encoder, [queries[q] for q in qids], "query")
        self._note_usage()
        if self.windows.owner:
            for qid, hits in zip(qids, self._best_windows(vectors, top_k), strict=True):
                run.add(qid, hits)
            return run
        ids, scores = self.index.search(vectors, top_k)
        for row, qid in enumerate(qids):
            run.add(qid, zip(ids[row], scores[row, : len(ids[row])].tolist(), strict=True))
        return run

    def _note_usage(self) -> None:
        """Record in `config["api"]` what this retriever's API model used so far: requests, tokens, dollars."""
        usage = getattr(self.encoder, "usage", None)
        if usage is not None and self._usage_start is not None:
            prices = getattr(getattr(self.encoder, "settings", None), "prices", None)
            self.config["api"] = usage.since(self._usage_start).to_dict(self.encoder.name, prices)

    def _best_windows(self, vectors: np.ndarray, top_k: int) -> list[list[tuple[str, float]]]:
        """Each passage once, at its best window's score: windows are searched, deeper until top_k
        distinct passages are found (or every window was), so the ranking is exact."""
        n = len(self.passage_ids)
        width, rows = min(n, 2 * top_k), list(range(len(vectors)))
        out: list[list[tuple[str, float]]] = [[] for _ in rows]
        while rows:
            ids, scores = self.index.search(vectors[rows], width)
            deeper = []
            for i, row in enumerate(rows):
                out[row] = best_per_passage(ids[i], scores[i, : len(ids[i])].tolist(), self.windows.owner, top_k)
                if len(out[row]) < top_k and width < n:
                    deeper.append(row)
            rows, width = deeper, min(n, width * 4)
        return out

    def close(self) -> None:
        self.index.close()


def dense_config(spec: str, encoder: Encoder, index: VectorIndex, values: Values) -> dict[str, object]:
    """The resolved configuration: model (name, cache key, weights file, package versions), backend,
    every option with the value in effect (the encoder's batch size, the thread count), no password."""
    options = OPTIONS.effective(values) | {"batch_size": getattr(encoder, "batch_size", None),
                                           "threads": getattr(encoder, "n_threads", None) or threads()}
    hub = getattr(encoder, "hub", None)
    for kind in ("query", "passage"):  # a hub model's prefixes in effect (given or its family's); others have none
        if hub is not None:
            options[f"{kind}_prefix"] = encoder.prefix(kind)  # type: ignore[arg-type]
        else:
            options.pop(f"{kind}_prefix", None)
    if hub is not None and hub.trust_remote_code:  # recorded only where it was given: it changes what runs
        options["trust_remote_code"] = True
    else:
        options.pop("trust_remote_code", None)
    model = getattr(encoder, "spec", None)
    precision_auto = None
    if model is not None and model.precisions:  # the variant that ran (auto resolved), never "auto"
        options["precision"] = model.precision
        if values.get("precision") == "auto":
            from goldeval.retrievers.encoders.precision import read_decision

            decision = read_decision(model)
            precision_auto = decision.to_config() if decision is not None else None
    else:
        options.pop("precision", None)
    if getattr(encoder, "usage", None) is None:  # the API options mean something for an API model only
        from goldeval.retrievers.encoders.api import API_OPTIONS

        for name in API_OPTIONS:
            options.pop(name, None)
    identity = index_identity(index)
    if options.get("dsn") is not None:
        options["dsn"] = identity.get("dsn", "<hidden>")
    return {"spec": spec, "kind": "dense", **encoder_identity(encoder), "backend": values["backend"],
            "index": identity, "options": options, **({"precision_auto": precision_auto} if precision_auto else {})}


def encoder_identity(encoder: Encoder) -> dict[str, object]:
    """Which model embeds: its short name, its cache key and, where known, its file and packages."""
    from goldeval.retrievers.encoders.registry import model_key, registry

    spec = getattr(encoder, "spec", None) or registry().get(encoder.name)
    if spec is not None and model_key(spec.identity()) != encoder.key:
        spec = None  # a model of the user's that shares a registry name
    folder = getattr(encoder, "folder", None)
    model_file = (spec.model or spec.folder or ",".join(spec.parts) or None) if spec is not None else None
    versions = spec.identity()["versions"] if spec is not None else {}
    out: dict[str, object] = {"model": encoder.name, "model_key": encoder.key,
                              "model_file": str(folder) if folder else model_file, "model_packages": versions}
    api = getattr(encoder, "identity", None)
    if callable(api) and getattr(encoder, "usage", None) is not None:  # openai:/ollama: where it was asked, no key
        out["model_api"] = api()
    hub = getattr(encoder, "hub", None)
    if hub is not None:  # hf:ORG/NAME: which commit, and the prefixes in effect (and where they came from)
        out["model_hub"] = {**hub.identity(), "family": getattr(encoder, "family", None),
                            "query_prefix": encoder.prefix("query"), "passage_prefix": encoder.prefix("passage")}
    return out


def left_out(rest: str) -> dict[str, str]:
    """The run-wide options (`--option KEY=VALUE`, `--timeout`) the model of `dense:REST` leaves out, each with
    who takes it: the API options (`API_OPTIONS`) unless the model is an API model (`openai:`, `ollama:`), the
    prefixes and `trust_remote_code` unless it is a hub model (`hf:`), and `precision` unless it has int8 and
    float32 variants. One given in the spec itself is not left out: the model
    refuses it in one line. The one rule the build (`api_values`, `precision_value`) and the run's check that each
    `--option` is taken by a retriever (`base.check_run_options`) go by."""
    from goldeval.retrievers.encoders.api import API_OPTIONS, is_api_name
    from goldeval.retrievers.encoders.registry import registry

    model, own = split_spec(rest)
    out: dict[str, str] = {}
    if not is_api_name(model):
        out.update(dict.fromkeys(API_OPTIONS, "API models (openai:, ollama:)"))
    if not model.startswith("hf:"):
        out.update(dict.fromkeys(HUB_OPTIONS, "hub models (hf:ORG/NAME)"))
    models = registry()
    spec = models.get(model)
    if spec is None or not spec.precisions:
        out["precision"] = "models with int8 and float32 variants (" + ", ".join(
            s.name for s in models.values() if s.precisions) + ")"
    return {key: who for key, who in out.items() if key not in own}


def api_values(values: Mapping[str, object], rest: str, skip: Mapping[str, str] | None = None) -> dict[str, object] | None:
    """The API options given (base_url, dimensions, ...) to `dense:REST`, None when none is: what an API model
    is built with. Those its model leaves out (`left_out`: another model's, from `--option` or `--timeout`)
    are not given to it, as `Option.when` leaves out an option of another backend. `skip`: `left_out(rest)`,
    where the caller has it already."""
    from goldeval.retrievers.encoders.api import API_OPTIONS

    skipped = left_out(rest) if skip is None else skip
    given = {k: values[k] for k in API_OPTIONS if values.get(k) is not None and k not in skipped}
    return given or None


def precision_value(values: Mapping[str, object], rest: str, skip: Mapping[str, str] | None = None) -> str | None:
    """The precision asked of the model of `dense:REST`, None for its default or where its model leaves
    `precision` out (`left_out`; `skip`, where the caller has it already)."""
    asked = values.get("precision")
    return None if asked is None or "precision" in (left_out(rest) if skip is None else skip) else str(asked)


def prefix_value(raw: str | None) -> str | None:
    """A prefix option as written in a spec (values are stripped, `&` separates options): percent-decoded,
    `none` for the empty prefix."""
    if raw is None:
        return None
    from urllib.parse import unquote

    return "" if raw.lower() == "none" else unquote(raw)


def build(rest: str, ctx: BuildContext) -> DenseRetriever:
    """Factory for `dense:MODEL[?options]`; `--option` keys it declares apply too."""
    from goldeval.retrievers.encoders.registry import shared_encoder

    spec = f"dense:{rest}"
    model, own = split_spec(rest)
    values = OPTIONS.resolve(own, ctx.options, spec=spec)
    if not model:
        raise InputError(f"{spec!r} names no model", value=spec, hint="e.g. dense:minilm; `goldeval models` lists them")
    workspace = Workspace.at(ctx.workspace)
    skip = left_out(rest)  # run-wide options for other models: not given to this one
    encoder = shared_encoder(
        model,
        batch_size=values.whole("batch_size"),
        threads=values.whole("threads"),
        progress=bool(ctx.options.get("progress", True)),
        query_prefix=prefix_value(None if "query_prefix" in skip else values.text("query_prefix")),
        passage_prefix=prefix_value(None if "passage_prefix" in skip else values.text("passage_prefix")),
        api=api_values(values, rest, skip),
        trust_remote_code="trust_remote_code" not in skip and values.flag("trust_remote_code"),
        precision=precision_value(values, rest, skip),
    )
    backend = values.text("backend") or "exact"
    retriever = DenseRetriever(ctx.passages, encoder, workspace=workspace, backend=backend, options=values,
                               name=f"dense:{model}")
    retriever.config["spec"] = spec
    return retriever
