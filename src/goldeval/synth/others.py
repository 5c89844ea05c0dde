"""Other answers: documents besides the source that may also answer a generated question.

A generated question lists only the document it was written from, so any other document that answers it
would score as a miss (three of five label errors in one team's first generated set were this). For each
question, each configured retriever (`--retriever`, default bm25) searches the corpus; its best passages
from documents not already expected are offered on the review page as possible extra expected documents,
one entry a document (its best passage shown), with the rank each retriever gave it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from goldeval.corpus.model import Passage
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.store.workspace import default_workspace

SHOWN_CHARS = 1200
"""How much of an offered passage the candidates file keeps for the review page."""


def other_answers(questions: Mapping[str, tuple[str, Sequence[str]]], passages: Sequence[Passage],
                  retrievers: Sequence[str], *, top: int = 5, workspace: Path | None = None,
                  ) -> dict[str, list[dict[str, Any]]]:
    """For each question id -> (question text, expected doc ids): up to `top` other documents per
    retriever, merged across retrievers, in order of their best rank."""
    if not questions or not passages:
        return {qid: [] for qid in questions}
    by_id = {p.id: p for p in passages}
    ctx = BuildContext(passages=passages, workspace=workspace or default_workspace())  # $GOLDEVAL_WORKSPACE
    found: dict[str, dict[str, dict[str, Any]]] = {qid: {} for qid in questions}
    for spec in retrievers:
        retriever = build_retriever(spec, ctx)
        depth = top * 4 + 10  # room for the expected documents' own passages, skipped below
        run = retriever.search({qid: text for qid, (text, _) in questions.items()}, top_k=depth)
        for qid, (_, expected) in questions.items():
            _collect(found[qid], run.results.get(qid, []), by_id, set(expected), retriever.name, top)
    return {qid: sorted(docs.values(), key=lambda o: (min(o["ranks"].values()), o["doc"]))
            for qid, docs in found.items()}


def _collect(found: dict[str, dict[str, Any]], hits: Sequence[tuple[str, float]], by_id: Mapping[str, Passage],
             expected: set[str], name: str, top: int) -> None:
    taken = 0
    for rank, (pid, _score) in enumerate(hits, start=1):
        if taken >= top:
            return
        passage = by_id.get(pid)
        doc = passage.doc_id if passage is not None else pid
        if doc in expected or pid in expected:
            continue
        taken += 1
        entry = found.get(doc)
        if entry is None:
            text = passage.text if passage is not None else ""
            entry = found[doc] = {"doc": doc, "passage": pid, "title": passage.title if passage else "",
                                  "text": text[:SHOWN_CHARS] + ("..." if len(text) > SHOWN_CHARS else ""),
                                  "ranks": {}}
        entry["ranks"].setdefault(name, rank)
