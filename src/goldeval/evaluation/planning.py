"""The first step of `evaluate`: one frozen `EvalSettings`, checked and resolved with the loaded golden set
and corpus into a `Plan` (cut-offs, metrics, depth, passages, their fingerprint, the build context).

`EvalSettings` is the one settings object of an evaluation: `goldeval.evaluate(..., k=..., depth=...)`
makes one from its keywords, `goldeval eval` from its flags (`cli.eval_cmd.eval_settings`) and a sweep for
each of its cells (`sweep.score`), so the three read the same names with the same defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldeval.corpus.model import Corpus, Passage
from goldeval.errors import InputError, InputErrors
from goldeval.fingerprint import Fingerprinter
from goldeval.golden.model import GoldenSet
from goldeval.ids import DocumentOf, doc_part
from goldeval.limits import check_int
from goldeval.metrics.definitions import Metric, default_metrics, parse_metric
from goldeval.retrievers.base import BuildContext
from goldeval.store.workspace import Workspace


@dataclass(frozen=True)
class EvalSettings:
    """How to evaluate, apart from what (retrievers, golden set, corpus). Every field is `evaluate`'s keyword
    of the same name, with its default."""

    k: int | Sequence[int] = (1, 5, 10)
    metrics: Sequence[Metric | str] | None = None
    headline: Metric | str | None = None
    level: str = "doc"
    depth: int = 100
    chunking: Any = None
    """None (whole documents), a spec string such as `800:100`, or a parsed chunking."""
    workspace: str | Path | None = None
    options: Mapping[str, object] = field(default_factory=dict)
    progress: bool = False
    strict: bool = False
    cache: bool = True


@dataclass
class Plan:
    """An evaluation resolved: what `searching.runs` searches or reads and `assembling` scores and gathers."""

    settings: EvalSettings
    golden: GoldenSet
    corpus: Corpus | None
    ks: list[int]
    metrics: list[Metric]
    headline: Metric | None
    depth: int
    chunking: Any
    chunk_spec: str | None
    passages: Sequence[Passage]
    fingerprint: str
    ctx: BuildContext
    document_of: DocumentOf


def plan(golden: GoldenSet | str | Path, corpus: Corpus | None, settings: EvalSettings) -> Plan:
    """Check the settings and resolve them (InputError on a bad one, before anything is built)."""
    if settings.level not in ("doc", "chunk"):
        raise InputError(f"level must be doc or chunk, not {settings.level!r}", value=settings.level,
                         hint="--level doc|chunk")
    k = settings.k
    ks = sorted({k} if isinstance(k, int) else set(k))
    if not ks or ks[0] < 1:
        raise InputError(f"k must be positive integers, got {k!r}", value=k, hint="e.g. --k 1,5,10")
    ks = [check_int("k", one) for one in ks]  # the bounds of `goldeval.limits`, for the API as for the CLI
    depth = check_int("depth", settings.depth)
    golden_set = _golden(golden, corpus)
    if not len(golden_set):
        raise InputError("the golden set has no questions", hint="add questions: id, question, expected")
    metric_list = _metrics(settings.metrics, tuple(ks))
    if golden_set.qrels.any_not_relevant() and Metric("bpref") not in metric_list:
        metric_list.append(Metric("bpref"))  # judged-not-relevant ids say judging is partial: bpref skips the unjudged
    chosen = parse_metric(settings.headline) if isinstance(settings.headline, str) else settings.headline
    if chosen is not None and chosen not in metric_list:
        metric_list.append(chosen)
    # retrieve deep enough for every cut-off asked for (recall@200 needs 200 results, not 100)
    depth = max(depth, ks[-1], *(m.k for m in metric_list if m.k is not None))
    chunking = settings.chunking
    chunk_spec = chunking if isinstance(chunking, str) else None
    if isinstance(chunking, str):
        from goldeval.corpus.chunking import parse_chunk_spec

        chunking = parse_chunk_spec(chunking)
    passages = corpus.passages(chunking) if corpus is not None else []
    if corpus is not None and settings.level == "chunk":
        _check_chunk_ids(golden_set, passages, chunked=chunking is not None)
    fingerprint = passages_fingerprint(passages) if corpus is not None else ""
    ctx = BuildContext(
        passages=passages,
        workspace=Workspace.at(settings.workspace).root,  # None: $GOLDEVAL_WORKSPACE, else .goldeval
        corpus_key=fingerprint[:16],
        options={"progress": settings.progress, **settings.options},  # encoders draw their bar only with progress
    )
    doc_of = {p.id: p.doc_id for p in passages}
    document_of = DocumentOf(doc_of, None if passages else lambda: _judged_docs(golden_set))
    return Plan(settings, golden_set, corpus, ks, metric_list, chosen, depth, chunking, chunk_spec, passages,
                fingerprint, ctx, document_of)


def passages_fingerprint(passages: Sequence[Passage]) -> str:
    """The passages as indexed: one `Fingerprinter` record (id, text) each, in order, so chunking changes it."""
    digest = Fingerprinter()
    for p in passages:
        digest.record(p.id, p.text)
    return digest.hexdigest()


def _judged_docs(golden: GoldenSet) -> set[str]:
    """Without a corpus, the documents the golden set judges are the known ones (see goldeval.ids)."""
    return golden.qrels.judged_ids(q.id for q in golden)


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
