"""`evaluate`: run retrievers over a golden set and score every question.

Levels. At `doc` level a retrieved chunk counts for its document: the ranking keeps the chunk
positions, the first chunk of an expected document is the hit ("search returns the top ten chunks and
we record the rank of the first one that comes from an expected post"), and later chunks of a document
already seen count as non-relevant, so no document is counted twice (recall, precision, nDCG and MAP stay
within [0, 1]). At `chunk` level an expected chunk id must itself be retrieved; an expected id without
`#` (a whole document) is satisfied by any of its chunks, once.

Off-topic questions (no expected answer) are searched too, for their top-1 score, but never averaged
into the retrieval metrics.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldeval import __version__
from goldeval.corpus.model import Corpus, Passage
from goldeval.errors import GoldevalError, InputError, InputErrors
from goldeval.fingerprint import Fingerprinter
from goldeval.golden.changelog import golden_changes
from goldeval.golden.model import GoldenSet
from goldeval.ids import DocumentOf, doc_part
from goldeval.limits import check_int
from goldeval.metrics.definitions import Metric, default_metrics, headline_metrics, parse_metric
from goldeval.progress import progress_bar
from goldeval.retrievers.answers import check_foreign, foreign_ids, refuse_bad_answers
from goldeval.retrievers.base import BuildContext, Retriever, build_retriever, check_run_options, needs_corpus
from goldeval.retrievers.function import DEFAULT_TIMEOUT, FunctionRetriever
from goldeval.run import Run
from goldeval.runstore import RunStore, StoredRun, cacheable, questions_fingerprint, run_key
from goldeval.scorecard.curves import flips, summarise
from goldeval.scorecard.depth import returned_of
from goldeval.scorecard.model import RetrieverResult, RunIdentity, Scorecard
from goldeval.scorecard.scoring import score_run
from goldeval.store.workspace import Workspace
from goldeval.textsafe import cut, recording, warn

RetrieverLike = Retriever | Callable[[str, int], Any] | str
"""A Retriever, a `search_fn(question, k)`, a LangChain or LlamaIndex retriever object, or a spec string
such as `bm25`, `dense:minilm` or `http://host/search?q={question}`."""

SNIPPET_CHARS = 400
RUN_SETTINGS = frozenset({"progress", "backend", "dsn", "timeout"})
"""Options the CLI passes from its own flags, for whichever retrievers take them; not checked per key."""


def evaluate(
    retrievers: RetrieverLike | Sequence[RetrieverLike] | Mapping[str, RetrieverLike],
    golden: GoldenSet | str | Path,
    *,
    corpus: Corpus | None = None,
    k: int | Sequence[int] = (1, 5, 10),
    metrics: Sequence[Metric | str] | None = None,
    headline: Metric | str | None = None,
    level: str = "doc",
    depth: int = 100,
    chunking: Any = None,
    workspace: str | Path | None = None,
    options: Mapping[str, object] | None = None,
    progress: bool = False,
    strict: bool = False,
    cache: bool = True,
) -> Scorecard:
    """Evaluate one or more retrievers on a golden set; returns a Scorecard of scores, no statistics.

    `goldeval.evaluate(search_fn, golden, k=10)` works with just a function `search_fn(question, k)`
    returning ids or (id, score) pairs. Spec strings (`bm25`, `dense:minilm`) need `corpus`.
    `depth` is how many results are retrieved per question (N): a miss reports the rank where an
    expected answer finally appeared within it, and the scorecard holds every metric curve for k = 1..depth.
    Statistics (bootstrap intervals, paired tests, off-topic separability, miss causes) are a separate
    step, `goldeval.compare(scorecard)`, as ranx keeps `evaluate` and `compare` apart.
    Answers are checked first (`retrievers.answers`): a NaN/inf score or a repeated id fails that question;
    ids the corpus lacks are a warning (an InputError with `strict`).
    With `cache`, the runs of goldeval's own retrievers (bm25, dense, hybrid, rerank over a local index)
    are kept in the workspace by content (`goldeval.runstore`): an unchanged evaluation reads them
    instead of indexing and searching again, and says so in the scorecard's notes.
    """
    if level not in ("doc", "chunk"):
        raise InputError(f"level must be doc or chunk, not {level!r}", value=level, hint="--level doc|chunk")
    ks = sorted({k} if isinstance(k, int) else set(k))
    if not ks or ks[0] < 1:
        raise InputError(f"k must be positive integers, got {k!r}", value=k, hint="e.g. --k 1,5,10")
    ks = [check_int("k", one) for one in ks]  # the bounds of `goldeval.limits`, for the API as for the CLI
    depth = check_int("depth", depth)
    golden_set = _golden(golden, corpus)
    if not len(golden_set):
        raise InputError("the golden set has no questions", hint="add questions: id, question, expected")
    metric_list = _metrics(metrics, tuple(ks))
    if any(not j.relevant for j in golden_set.qrels) and Metric("bpref") not in metric_list:
        metric_list.append(Metric("bpref"))  # judged-not-relevant ids say judging is partial: bpref skips the unjudged
    chosen = parse_metric(headline) if isinstance(headline, str) else headline
    if chosen is not None and chosen not in metric_list:
        metric_list.append(chosen)
    # retrieve deep enough for every cut-off asked for (recall@200 needs 200 results, not 100)
    depth = max(depth, ks[-1], *(m.k for m in metric_list if m.k is not None))
    chunk_spec = chunking if isinstance(chunking, str) else None
    if isinstance(chunking, str):
        from goldeval.corpus.chunking import parse_chunk_spec

        chunking = parse_chunk_spec(chunking)
    passages = corpus.passages(chunking) if corpus is not None else []
    if corpus is not None and level == "chunk":
        _check_chunk_ids(golden_set, passages, chunked=chunking is not None)
    fingerprint = passages_fingerprint(passages) if corpus is not None else ""
    ctx = BuildContext(
        passages=passages,
        workspace=Workspace.at(workspace).root,  # None: $GOLDEVAL_WORKSPACE, else .goldeval
        corpus_key=fingerprint[:16],
        options={"progress": progress, **(options or {})},  # encoders draw their bar only with progress
    )
    named = _named(retrievers)
    # an option no retriever of the run declares would be silently ignored: refuse it before building
    given = set(options or {}) - RUN_SETTINGS
    check_run_options([s for s in named.values() if isinstance(s, str)], dict(options or {}), given)
    doc_of = {p.id: p.doc_id for p in passages}
    document_of = DocumentOf(doc_of, None if passages else _judged_docs(golden_set))
    results = []
    notes: list[str] = []
    store = _Runs(ctx, golden_set, fingerprint, depth, options or {}) if cache and corpus is not None else None
    try:
        for name, spec in named.items():
            started = time.perf_counter()
            key = store.key(spec) if store is not None and isinstance(spec, str) else None
            stored = store.get(key) if store is not None and key else None
            if stored is None:
                with recording() as said:  # what building and searching warned about, said again when read back
                    retriever = _build(spec, name, ctx, corpus, progress)
                    run = search_golden_set(retriever, golden_set, depth, progress)
                config = dict(getattr(retriever, "config", None) or {"spec": spec if isinstance(spec, str) else name})
                if store is not None and key:
                    store.put(key, str(spec), run, config, time.perf_counter() - started, said)
            else:
                run, config = stored.run(), dict(stored.config)
                for line in stored.warnings:
                    warn(line)
                if progress and store is not None:
                    print(f"goldeval: {spec}: stored run read from {store.store.folder} (nothing it depends on "
                          "changed; --no-cache searches again)", file=sys.stderr)
            chunked = chunking is not None  # ids the corpus lacks: said, and kept in the results' notes
            if corpus is not None and (found := check_foreign(foreign_ids(run, document_of, chunked=chunked), strict=strict)):
                warn(found)
                notes.append(found)
            seconds = float(stored.cost.get("seconds", 0.0)) if stored else time.perf_counter() - started
            result = score_run(name, run, golden_set, metric_list, level, document_of, ks[-1], seconds)
            result.config = {**config, "depth": depth}
            result.returned = returned_of([q.returned for q in result.questions if q.returned is not None], asked=depth,
                                          kind=config.get("kind"), n_passages=len(passages))
            summarise(result, metric_list, depth)  # means and curves over the headline, synthetic beside
            results.append(result)
    finally:
        _close_built(ctx)
    if store is not None and store.served:
        notes.append(store.note())
    created = datetime.now(UTC).isoformat(timespec="seconds")
    golden_fingerprint = golden_set.fingerprint()
    return Scorecard(
        retrievers=results,
        metrics=metric_list,
        k=ks,
        depth=depth,
        headline=headline_metrics(metric_list, ks, chosen),
        level=level,
        identity=RunIdentity(
            corpus_fingerprint=fingerprint, golden_fingerprint=golden_fingerprint,
            golden_version=golden_set.version, chunking=chunk_spec or (str(chunking) if chunking else None),
            goldeval_version=__version__, created=created, machine=machine(),
        ),
        golden={
            "path": golden_set.path,
            "n_questions": len(golden_set),
            "n_answerable": len(golden_set.answerable),
            "n_off_topic": len(golden_set.off_topic),
            "fingerprint": golden_fingerprint,
            "version": golden_set.version,
            **golden_changes(golden_set.path, golden_set.version),  # "5 labels fixed since version 3"
        },
        corpus={
            "path": corpus.path if corpus else "",
            "name": corpus.name if corpus else "",
            "n_documents": len(corpus) if corpus else 0,
            "n_passages": len(passages),
            "warnings": len(corpus.warnings) if corpus else 0,
            "fingerprint": fingerprint,
        },
        snippets=_snippets(results, passages),
        flips=flips(results, depth),
        notes=notes,
    )


class _Runs:
    """The evaluation's view of the workspace's stored runs: a key per spec, what was served from it."""

    def __init__(self, ctx: BuildContext, golden: GoldenSet, passages: str, depth: int,
                 options: Mapping[str, object]) -> None:  # fmt: skip
        self.workspace = Workspace(ctx.workspace)
        self.store = RunStore.for_eval(self.workspace)
        self.questions = questions_fingerprint({q.id: q.question for q in golden})
        self.passages, self.depth, self.options = passages, depth, dict(options)
        self.served: list[str] = []

    def key(self, spec: str) -> str | None:
        """The stored-run key of `spec`, or None for a retriever whose runs are never kept."""
        if not cacheable(spec, self.options):
            return None
        return run_key(spec, passages=self.passages, questions=self.questions, depth=self.depth,
                       options=self.options, workspace=self.workspace)

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


def passages_fingerprint(passages: Sequence[Passage]) -> str:
    """The passages as indexed: one `Fingerprinter` record (id, text) each, in order, so chunking changes it."""
    digest = Fingerprinter()
    for p in passages:
        digest.record(p.id, p.text)
    return digest.hexdigest()


def _judged_docs(golden: GoldenSet) -> set[str]:
    """Without a corpus, the documents the golden set judges are the known ones (see goldeval.ids)."""
    return {d for q in golden for d in golden.grades(q.id)}


def _check_chunk_ids(golden: GoldenSet, passages: Sequence[Passage], *, chunked: bool) -> None:
    """At chunk level an expected chunk id that no passage has would score as a silent miss: refuse it."""
    ids = {p.id for p in passages}
    by_doc: dict[str, list[str]] = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append(p.id)
    problems = []
    for q in golden:
        for e in golden.grades(q.id):
            if "#" not in e or e in ids:
                continue
            near = ", ".join(f"`{c}`" for c in by_doc.get(doc_part(e), [])[:4])
            problems.append(InputError(
                f"question `{q.id}`: expected chunk `{e}` is not a chunk of this corpus",
                path=golden.path or None, line=q.line, value=e,
                hint=(f"its document's chunks are {near}" if near and chunked
                      else "chunk ids exist only when documents are split: pass --chunk SIZE[:OVERLAP]"),
            ))
    if problems:
        raise InputErrors(problems, summary=f"{len(problems)} expected chunk id(s) match no chunk")


def _golden(golden: GoldenSet | str | Path, corpus: Corpus | None) -> GoldenSet:
    if isinstance(golden, GoldenSet):
        if corpus is not None:
            from goldeval.golden.io import validate_golden

            problems = validate_golden(golden, corpus)
            if problems:
                raise InputErrors(problems, summary=f"the golden set has {len(problems)} problem(s)")
        return golden
    from goldeval.golden.io import load_golden

    return load_golden(golden, corpus=corpus)


def _metrics(metrics: Sequence[Metric | str] | None, ks: tuple[int, ...]) -> list[Metric]:
    if metrics is None:
        return default_metrics(ks)
    out = [m if isinstance(m, Metric) else parse_metric(m) for m in metrics]
    return list(dict.fromkeys(out))


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


def _close_built(ctx: BuildContext) -> None:
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
                got = retriever.search(part, top_k=depth)
                run.results.update(got.results)
                run.errors.update(got.errors)
            except GoldevalError:
                raise  # bad input or configuration: every question would fail the same way
            except (Exception, SystemExit):  # noqa: BLE001 - isolate the failing question below
                for qid, text in part.items():
                    try:
                        got = retriever.search({qid: text}, top_k=depth)
                        run.results.update(got.results)
                        run.errors.update(got.errors)
                    except GoldevalError:
                        raise
                    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the retriever's, not goldeval's exit
                        run.errors[qid] = cut(f"{type(exc).__name__}: {exc}")
            advance(len(part))
    # a search function may ignore k: every retriever is scored on the same depth
    for qid, hits in run.results.items():
        if len(hits) > depth:
            run.results[qid] = hits[:depth]
    refuse_bad_answers(run, queries)  # NaN/inf scores, repeated ids: that question's error; failures said once
    return run


def _snippets(results: list[RetrieverResult], passages: Sequence[Passage]) -> dict[str, dict[str, str]]:
    wanted = {h.id for r in results for q in r.questions for h in q.top}
    wanted |= {e for r in results for q in r.questions for e in q.expected}
    out: dict[str, dict[str, str]] = {}
    for p in passages:
        if p.id in wanted:
            out[p.id] = {"doc": p.doc_id, "title": p.title, "text": p.text[:SNIPPET_CHARS]}
    return out
