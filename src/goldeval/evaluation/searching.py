"""The second step of `evaluate`: each retriever's run, searched or read from the workspace's stored runs.

With `cache`, the runs of goldeval's own retrievers (bm25, dense, hybrid, rerank over a local index) are
kept in the workspace by content (`goldeval.runstore`): an unchanged evaluation reads them instead of
indexing and searching again. Whatever a build or a search warned about is kept with the run and said
again when it is read back.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from goldeval.corpus.model import Corpus
from goldeval.errors import GoldevalError, InputError
from goldeval.evaluation.planning import Plan
from goldeval.golden.model import GoldenSet
from goldeval.progress import progress_bar
from goldeval.retrievers.answers import refuse_bad_answers
from goldeval.retrievers.base import BuildContext, Retriever, build_retriever, check_run_options, needs_corpus
from goldeval.retrievers.function import DEFAULT_TIMEOUT, FunctionRetriever
from goldeval.run import Run
from goldeval.runstore import RunStore, StoredRun, cacheable, questions_fingerprint, run_key
from goldeval.store.workspace import Workspace
from goldeval.textsafe import cut, recording, warn

RetrieverLike = Retriever | Callable[[str, int], Any] | str
"""A Retriever, a `search_fn(question, k)`, a LangChain or LlamaIndex retriever object, or a spec string
such as `bm25`, `dense:minilm` or `http://host/search?q={question}`."""

RUN_SETTINGS = frozenset({"progress", "backend", "dsn", "timeout"})
"""Options the CLI passes from its own flags, for whichever retrievers take them; not checked per key."""


@dataclass
class Found:
    """One retriever's run as searched or read back, with its configuration and cost."""

    name: str
    run: Run
    config: dict[str, Any]
    seconds: float


def named_retrievers(retrievers: Any, options: Mapping[str, object]) -> dict[str, RetrieverLike]:
    """The retrievers by name; an option no retriever of the run declares would be silently ignored:
    refused here, before anything is built."""
    named = _named(retrievers)
    given = set(options) - RUN_SETTINGS
    check_run_options([s for s in named.values() if isinstance(s, str)], dict(options), given)
    return named


def runs(plan: Plan, named: Mapping[str, RetrieverLike], store: StoredRuns | None) -> Iterator[Found]:
    """Each retriever's run in turn: read from `store` when kept there, else built and searched (and kept)."""
    progress = plan.settings.progress
    for name, spec in named.items():
        started = time.perf_counter()
        key = store.key(spec) if store is not None and isinstance(spec, str) else None
        stored = store.get(key) if store is not None and key else None
        if stored is None:
            with recording() as said:  # what building and searching warned about, said again when read back
                retriever = _build(spec, name, plan.ctx, plan.corpus, progress)
                run = search_golden_set(retriever, plan.golden, plan.depth, progress)
            config = dict(getattr(retriever, "config", None) or {"spec": spec if isinstance(spec, str) else name})
            if store is not None and key:
                store.put(key, str(spec), run, config, time.perf_counter() - started, said)
            yield Found(name, run, config, time.perf_counter() - started)
            continue
        for line in stored.warnings:
            warn(line)
        if progress and store is not None:
            print(f"goldeval: {spec}: stored run read from {store.store.folder} (nothing it depends on "
                  "changed; --no-cache searches again)", file=sys.stderr)
        yield Found(name, stored.run(), dict(stored.config), float(stored.cost.get("seconds", 0.0)))


class StoredRuns:
    """The evaluation's view of the workspace's stored runs: a key per spec, what was served from it."""

    def __init__(self, plan: Plan) -> None:
        self.workspace = Workspace(plan.ctx.workspace)
        self.store = RunStore.for_eval(self.workspace)
        self.questions = questions_fingerprint({q.id: q.question for q in plan.golden})
        self.passages, self.depth, self.options = plan.fingerprint, plan.depth, dict(plan.settings.options)
        self.served: list[str] = []

    @classmethod
    def of(cls, plan: Plan) -> StoredRuns | None:
        """The store when the settings keep runs and there is a corpus to key them on, else None."""
        return cls(plan) if plan.settings.cache and plan.corpus is not None else None

    def key(self, spec: str) -> str | None:
        """The stored-run key of `spec`, or None for a retriever whose runs are never kept."""
        if not cacheable(spec, self.options):
            return None
        return run_key(spec, passages=self.passages, questions=self.questions, depth=self.depth,
                       options=self.options)

    def get(self, key: str) -> StoredRun | None:
        stored = self.store.get(key)
        if stored is not None:
            self.served.append(stored.spec)
        return stored

    def put(self, key: str, spec: str, run: Run, config: Mapping[str, Any], seconds: float, said: list[str]) -> None:
        """Keep a run that fully succeeded (a failed question may succeed next time: never stored)."""
        if not run.errors:
            stored = StoredRun.from_run(run, spec=spec, depth=self.depth, config=config)
            stored.cost, stored.machine, stored.warnings = {"seconds": seconds}, machine(), list(said)
            self.store.put(key, stored)

    def note(self) -> str:
        return (f"{', '.join(self.served)}: results read from the workspace's stored runs ({self.store.folder}): "
                "nothing they depend on changed; --no-cache searches again")


def machine() -> dict[str, Any]:
    """Where the run happened: enough to tell two timings apart, nothing that identifies a person."""
    return {"cores": os.cpu_count() or 0, "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}"}


def _named(retrievers: Any) -> dict[str, RetrieverLike]:
    if isinstance(retrievers, Mapping):
        return dict(retrievers)
    items = [retrievers] if isinstance(retrievers, str) or not isinstance(retrievers, Sequence) else list(retrievers)
    named: dict[str, RetrieverLike] = {}
    for item in items:
        name = item if isinstance(item, str) else str(getattr(item, "name", None) or getattr(item, "__name__", "retriever"))
        if isinstance(item, str) and name in named:
            raise InputError(f"retriever {name!r} is given twice", value=name, hint="give each --retriever once")
        while name in named:
            name += "'"
        named[name] = item
    return named


def _build(spec: RetrieverLike, name: str, ctx: BuildContext, corpus: Corpus | None, progress: bool) -> Retriever:
    if isinstance(spec, str):
        if corpus is None and needs_corpus(spec):
            raise InputError(f"retriever {spec!r} needs a corpus to index", value=spec, hint="pass corpus=... (--corpus PATH)")
        if progress:
            print(f"goldeval: building {spec} over {len(ctx.passages)} passages", file=sys.stderr)
        return build_retriever(spec, ctx)
    if isinstance(spec, Retriever):
        return spec
    from goldeval.retrievers.adapters import adapt

    limit = ctx.options.get("timeout")
    adapted = adapt(spec, name=name, timeout=float(limit)) if isinstance(limit, (int, float)) else adapt(spec, name=name)
    if adapted is not None:  # a LangChain or LlamaIndex retriever, evaluated as it is (issue 13)
        return adapted
    if callable(spec):
        limit = ctx.options.get("timeout")  # the run's time limit, else the default one
        return FunctionRetriever(spec, name=name, timeout=float(limit) if isinstance(limit, (int, float)) else DEFAULT_TIMEOUT)
    raise InputError(f"cannot use {spec!r} as a retriever", hint="pass a Retriever, a search_fn(question, k) or a spec string")


def close_built(ctx: BuildContext) -> None:
    """Close what this evaluation built (a pgvector index drops its eval schema), even after an error."""
    for retriever in ctx.built.values():
        close = getattr(retriever, "close", None)
        if callable(close):
            close()


def search_golden_set(retriever: Retriever, golden: GoldenSet, depth: int, progress: bool) -> Run:
    """Search all questions in batches; if a batch fails, retry its questions one by one so a single
    bad question is reported by name and the others keep their results."""
    queries = {q.id: q.question for q in golden}
    run = Run(retriever.name)
    batch = 256
    ids = list(queries)
    with progress_bar(f"searching ({retriever.name})", total=len(ids), enabled=progress) as advance:
        for start in range(0, len(ids), batch):
            part = {q: queries[q] for q in ids[start : start + batch]}
            try:
                run.update(retriever.search(part, top_k=depth))
            except GoldevalError:
                raise  # bad input or configuration: every question would fail the same way
            except (Exception, SystemExit):  # noqa: BLE001 - isolate the failing question below
                for qid, text in part.items():
                    try:
                        run.update(retriever.search({qid: text}, top_k=depth))
                    except GoldevalError:
                        raise
                    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the retriever's, not goldeval's exit
                        run.errors[qid] = cut(f"{type(exc).__name__}: {exc}")
            advance(len(part))
    run.cut(depth)  # a search function may ignore k: every retriever is scored on the same depth
    refuse_bad_answers(run, queries)  # NaN/inf scores, repeated ids: that question's error; failures said once
    return run
