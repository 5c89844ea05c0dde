"""The Retriever protocol and the registry that builds retrievers from CLI specs.

A retriever is anything with a `name` and `search(queries, *, top_k) -> Run`. BM25, dense,
hybrid, reranked, a user's own function and a saved TREC run all fit it. Building one over a
corpus is the job of a factory registered under a spec prefix:

    bm25                      -> retrievers.bm25
    dense:minilm              -> retrievers.dense   (issue: dense/hybrid/rerank)
    hybrid:bm25+dense:minilm  -> retrievers.hybrid
    rerank:...                -> retrievers.rerank
    run:path/to/file.trec     -> retrievers.function (a saved TREC run)
    package.module:function   -> retrievers.function (the user's own search function, or a LangChain
                                 or LlamaIndex retriever object: retrievers.adapters)
    langchain:module:object   -> retrievers.adapters.langchain (with options: id_key, timeout)
    llamaindex:module:object  -> retrievers.adapters.llamaindex
    http://host/path?q={question}#options -> retrievers.adapters.http (a search service)

Each kind's module declares its options as data (`OPTIONS`, a `retrievers.options.OptionSet`) and,
when its spec nests other specs (hybrid, rerank), a `split(rest) -> (own options, part specs)`, so
the options of a whole run are checked before anything is built (`check_run_options`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Protocol, runtime_checkable

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.options import OptionSet, split_spec
from goldeval.run import Run
from goldeval.store.workspace import default_workspace
from goldeval.types import QuestionId


@runtime_checkable
class Retriever(Protocol):
    """Search many questions at once; return a Run ranked by the one ranking rule.

    Retrievers goldeval builds also have `config: dict[str, object]`, their resolved configuration
    (spec, kind, model, backend, every option's value), which the results record; it is optional.
    """

    name: str

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run: ...


@dataclass
class BuildContext:
    """What a factory gets besides the spec: the passages to index and where it may cache."""

    passages: Sequence[Passage]
    workspace: Path = field(default_factory=default_workspace)
    """goldeval's cache folder: `$GOLDEVAL_WORKSPACE` or `.goldeval` unless given."""
    corpus_key: str = ""
    """A content hash of the passages, so caches of two corpora never collide."""
    options: dict[str, object] = field(default_factory=dict)
    """Options shared by the run: `--option KEY=VALUE` and the CLI's --index, --dsn, --timeout
    (plus `progress`); each retriever takes the keys it declares, and its spec's own values win."""
    built: dict[str, Retriever] = field(default_factory=dict)
    """Retrievers already built in this evaluation, by spec, so hybrid can reuse its parts."""


Factory = Callable[[str, BuildContext], Retriever]
"""Builds a retriever from the part of the spec after its prefix (e.g. `minilm` in `dense:minilm`)."""

# prefix -> "module:function" of its factory, imported only when used (models are heavy).
_FACTORIES: dict[str, str] = {
    "bm25": "goldeval.retrievers.bm25:build",
    "dense": "goldeval.retrievers.dense:build",
    "hybrid": "goldeval.retrievers.hybrid:build",
    "rerank": "goldeval.retrievers.rerank:build",
    "run": "goldeval.retrievers.runfile:build",
    # retrievers people already have (issue 13): retriever objects of other libraries, search services
    "langchain": "goldeval.retrievers.adapters.langchain:build",
    "llamaindex": "goldeval.retrievers.adapters.llamaindex:build",
    "http": "goldeval.retrievers.adapters.http:build_http",
    "https": "goldeval.retrievers.adapters.http:build_https",
}
_FUNCTION = "goldeval.retrievers.function:build"
"""`package.module:function`: the user's own search function."""
_BUILTIN = dict(_FACTORIES)


def register(prefix: str, target: str) -> None:
    """Register a factory `module:function` for specs starting with `prefix`."""
    _FACTORIES[prefix] = target


def spec_prefix(spec: str) -> str:
    """The registry key of a spec: `bm25` for `bm25?k1=1.2`, `dense` for `dense:minilm`."""
    return re.split(r"[:?]", spec, maxsplit=1)[0]


def needs_corpus(spec: str) -> bool:
    """Whether the spec indexes the corpus (bm25, dense, hybrid, rerank), unlike run: or module:function."""
    return spec_prefix(spec) in ("bm25", "dense", "hybrid", "rerank")


def build_retriever(spec: str, ctx: BuildContext) -> Retriever:
    """Build the retriever a CLI spec names, reusing one already built in `ctx`."""
    if spec in ctx.built:
        return ctx.built[spec]
    target, rest = _locate(spec)
    retriever = _load(target)(rest, ctx)
    ctx.built[spec] = retriever
    return retriever


@dataclass(frozen=True)
class Declared:
    """One retriever of a run, before it is built: its spec, declared options and their values."""

    spec: str
    options: OptionSet
    values: dict[str, object]
    left_out: Mapping[str, str] = field(default_factory=dict)
    """Run-wide options its model leaves out, each with who takes it (a kind's `left_out(rest)`: dense's API
    options for a local model, `precision` for a model of one precision)."""


def declared_options(spec: str, shared: Mapping[str, object]) -> list[Declared]:
    """The retrievers `spec` builds, itself first, then its parts, each with its options resolved.

    Nothing is built or imported from the user: a kind registered without `OPTIONS` is skipped.
    """
    target, rest = _locate(spec)
    module = _module(target)
    options: OptionSet | None = getattr(module, "OPTIONS", None)
    if options is None:
        return []
    split: Callable[[str], tuple[dict[str, str], list[str]]] | None = getattr(module, "split", None)
    own, parts = split(rest) if split else (split_spec(rest)[1], [])
    left_out: Callable[[str], dict[str, str]] | None = getattr(module, "left_out", None)
    found = [Declared(spec, options, options.resolve(own, shared, spec=spec), left_out(rest) if left_out else {})]
    for part in parts:
        found += declared_options(part, shared)
    return found


def check_run_options(specs: Sequence[str], shared: Mapping[str, object], keys: Iterable[str]) -> None:
    """Check every spec's own options, and that each of `keys` (the `--option`s) is taken by at
    least one retriever of the run, before anything is built (a model can take minutes to load)."""
    found = [d for spec in specs for d in declared_options(spec, shared)]
    for key in keys:
        if not any(key in d.options and d.options[key].applies(d.values) and key not in d.left_out for d in found):
            raise _not_taken(key, shared.get(key), found)


def _not_taken(key: str, value: object, found: list[Declared]) -> InputError:
    """`--option typo=1`: name the retrievers of the run and the keys each one takes."""
    declaring = [d for d in found if key in d.options]
    if declaring and all(key in d.left_out for d in declaring):
        problem = f"{key} is for {declaring[0].left_out[key]}, and " + ", ".join(
            dict.fromkeys(d.spec for d in declaring)) + (" is not one" if len(declaring) == 1 else " are not")
    elif declaring:
        other, wanted = declaring[0].options[key].when or ("", "")
        uses = ", ".join(f"{d.spec} has {other}={d.values.get(other)}" for d in declaring)
        problem = f"{key} is for {other}={wanted}, and {uses}"
    else:
        problem = "no retriever in this run declares it"
    unique = {d.spec: d for d in found}.values()  # hybrid:bm25+dense:x and bm25 share a part
    takes = "; ".join(f"{d.spec} takes {', '.join(_applicable(d)) or 'no options'}" for d in unique)
    return InputError(
        f"--option {key}={value}: {problem}", value=key,
        hint=(takes or "the retrievers of this run take no options") + " (`goldeval docs retrieval` says what each means)",
    )


def _applicable(declared: Declared) -> list[str]:
    return [o.name for o in declared.options.options if o.applies(declared.values) and o.name not in declared.left_out]


def option_tables() -> str:
    """The Markdown tables of every built-in kind's options, as docs/retrieval.md shows them."""
    modules = dict.fromkeys(_module(t) for t in [*_BUILTIN.values(), _FUNCTION])  # http and https share one
    return "\n\n".join(m.OPTIONS.markdown() for m in modules) + "\n"


def _locate(spec: str) -> tuple[str, str]:
    """The factory target of a spec and the part after its prefix (`?options` included)."""
    prefix = spec_prefix(spec)
    if prefix in _FACTORIES:
        rest = spec[len(prefix) :]
        return _FACTORIES[prefix], rest[1:] if rest.startswith(":") else rest  # `bm25?k1=1.2` keeps `?`
    if ":" in spec:
        return _FUNCTION, spec
    raise InputError(
        f"unknown retriever {spec!r}",
        value=spec,
        hint="use bm25, dense:MODEL, hybrid:A+B, rerank:..., run:FILE.trec, module:function or http://URL",
    )


def _module(target: str) -> ModuleType:
    return importlib.import_module(target.partition(":")[0])


def _load(target: str) -> Factory:
    module, _, func = target.partition(":")
    factory: Factory = getattr(importlib.import_module(module), func)
    return factory
