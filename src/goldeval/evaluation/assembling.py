"""The last step of `evaluate`: each run scored (`scorecard.scoring.score_run`) and summarised, and the
results gathered into a `Scorecard` with what it was computed on (identity, golden set, corpus, snippets).

The golden set's changelog summary comes with the loaded set (`GoldenSet.changelog`, read once by
`golden.io.load_golden`); only a set made in code, which has none, has its files read here by path.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from goldeval import __version__
from goldeval.corpus.model import Passage
from goldeval.evaluation.planning import Plan
from goldeval.evaluation.searching import Found, machine
from goldeval.golden.changelog import golden_changes
from goldeval.metrics.definitions import headline_metrics
from goldeval.retrievers.answers import check_foreign, foreign_ids
from goldeval.scorecard.curves import flips, summarise
from goldeval.scorecard.depth import returned_of
from goldeval.scorecard.model import RetrieverResult, RunIdentity, Scorecard
from goldeval.scorecard.scoring import score_run
from goldeval.textsafe import warn

SNIPPET_CHARS = 400


def scored(plan: Plan, found: Found, notes: list[str]) -> RetrieverResult:
    """One retriever's run scored on every question, its means and curves made; ids the corpus lacks are
    said and kept in `notes` (an InputError with `strict`)."""
    chunked = plan.chunking is not None
    if plan.corpus is not None and (foreign := check_foreign(foreign_ids(found.run, plan.document_of, chunked=chunked),
                                                             strict=plan.settings.strict)):  # fmt: skip
        warn(foreign)
        notes.append(foreign)
    result = score_run(found.name, found.run, plan.golden, plan.metrics, plan.settings.level, plan.document_of,
                       plan.ks[-1], found.seconds)
    result.config = {**found.config, "depth": plan.depth}
    counts = result.columns.returned() if result.columns is not None else [q.returned for q in result.questions]
    result.returned = returned_of([n for n in counts if n is not None], asked=plan.depth,
                                  kind=found.config.get("kind"), n_passages=len(plan.passages))
    summarise(result, plan.metrics, plan.depth)  # means and curves over the headline, synthetic beside
    return result


def assemble(plan: Plan, results: list[RetrieverResult], notes: list[str]) -> Scorecard:
    """The Scorecard of the scored `results`: no statistics (`goldeval.compare` adds them)."""
    golden = plan.golden
    created = datetime.now(UTC).isoformat(timespec="seconds")
    golden_fingerprint = golden.fingerprint()
    changes = golden.changelog if golden.changelog is not None else golden_changes(golden.path, golden.version)
    return Scorecard(
        retrievers=results,
        metrics=plan.metrics,
        k=plan.ks,
        depth=plan.depth,
        headline=headline_metrics(plan.metrics, plan.ks, plan.headline),
        level=plan.settings.level,
        identity=RunIdentity(
            corpus_fingerprint=plan.fingerprint, golden_fingerprint=golden_fingerprint,
            golden_version=golden.version, chunking=plan.chunk_spec or (str(plan.chunking) if plan.chunking else None),
            goldeval_version=__version__, created=created, machine=machine(),
        ),
        golden={
            "path": golden.path,
            "n_questions": len(golden),
            "n_answerable": len(golden.answerable),
            "n_off_topic": len(golden.off_topic),
            "fingerprint": golden_fingerprint,
            "version": golden.version,
            **changes,  # "5 labels fixed since version 3"
        },
        corpus=_corpus_block(plan),
        snippets=_snippets(results, plan.passages),
        flips=flips(results, plan.depth),
        notes=notes,
    )


def _corpus_block(plan: Plan) -> dict[str, Any]:
    corpus = plan.corpus
    return {
        "path": corpus.path if corpus else "",
        "name": corpus.name if corpus else "",
        "n_documents": len(corpus) if corpus else 0,
        "n_passages": len(plan.passages),
        "warnings": len(corpus.warnings) if corpus else 0,
        "fingerprint": plan.fingerprint,
    }


def _snippets(results: list[RetrieverResult], passages: Sequence[Passage]) -> dict[str, dict[str, str]]:
    """Passage id -> its snippet, for every kept result and expected id (none without passages)."""
    if not passages:
        return {}
    wanted: set[str] = set()
    for r in results:
        if r.columns is not None:
            wanted.update(r.columns.placed.kept.ids())
            wanted.update(k for k, g in zip(r.columns.judgments.keys, r.columns.judgments.grades.tolist(), strict=True)
                          if g > 0)  # fmt: skip
        else:
            wanted.update(h.id for q in r.questions for h in q.top)
            wanted.update(e for q in r.questions for e in q.expected)
    out: dict[str, dict[str, str]] = {}
    for p in passages:
        if p.id in wanted:
            out[p.id] = {"doc": p.doc_id, "title": p.title, "text": p.text[:SNIPPET_CHARS]}
    return out
