"""Why did each miss miss? Two retrievers on a tiny corpus, every miss diagnosed, off-topic checked.

    python examples/stats_diagnosis.py

BM25 beside a stand-in "dense" retriever (a function that knows one paraphrase). Each miss gets its
cause from its own retriever and the corpus (a vocabulary gap for BM25, exact terms a dense model
missed); the corpus holds a near-duplicate page; one question is off-topic.
"""

from __future__ import annotations

from rich.console import Console

import goldeval
from goldeval import Corpus, Document, GoldenSet, Judgment, Qrels, Question
from goldeval.report import render_stats

INSTALL = "To install the package run pip install goldeval, then import goldeval and evaluate a golden set."
DOCS = {
    "install.md": INSTALL + " Updated for release two.",
    "install-old.md": INSTALL,
    "retry.md": "A failed call is attempted again, waiting longer after each failure.",
    "timeouts.md": "Set the request timeout with the timeout argument of the client.",
    "music.md": "Violins and cellos make music in an orchestra.",
}
QUESTIONS = [
    ("install", "install the package", "install.md"),
    ("retry", "how do I keep trying when something breaks", "retry.md"),
    ("timeout", "request timeout argument", "timeouts.md"),
    ("cello", "cellos in an orchestra", "music.md"),
    ("pizza", "best pizza dough recipe", None),  # off-topic: the corpus does not cover it
]
GOLDEN = GoldenSet(
    [Question(qid, text, intent="answerable" if doc else "off_topic") for qid, text, doc in QUESTIONS],
    qrels=Qrels(Judgment(qid, doc, 1) for qid, _, doc in QUESTIONS if doc),
)


def toy_dense(question: str, k: int) -> list[tuple[str, float]]:
    """Stands in for an embedding model: it understands the retry paraphrase and little else."""
    if "trying" in question:
        return [("retry.md", 0.82), ("timeouts.md", 0.41)]
    if "orchestra" in question:
        return [("music.md", 0.77)]
    return [("music.md", 0.35), ("install-old.md", 0.30)]


def main() -> None:
    corpus = Corpus({d: Document(d, text) for d, text in DOCS.items()})
    card = goldeval.evaluate({"bm25": "bm25", "dense:toy": toy_dense}, GOLDEN, corpus=corpus, k=(1,))
    # the diagnosis reads the passages' texts, and is told that the toy function stands for a dense model
    card = goldeval.compare(card, resamples=2000, passages=corpus.passages(), kinds={"dense:toy": "semantic"})
    for r in card.retrievers:
        for q in r.questions:
            if q.diagnosis:
                print(f"{r.name} {q.id}: {q.diagnosis['label']}: {q.diagnosis['evidence']}")
    render_stats(card, Console(width=120))


if __name__ == "__main__":
    main()
