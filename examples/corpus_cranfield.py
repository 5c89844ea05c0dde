"""Evaluate BM25 on the Cranfield 1400 collection: 1400 abstracts, 225 queries, graded judgments.

    python examples/corpus_cranfield.py [path/to/cranfield]   # default: ../shared/data/cranfield
"""

from __future__ import annotations

import sys
from pathlib import Path

from goldeval import evaluate
from goldeval.corpus import load_corpus
from goldeval.golden import load_cranfield_golden

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    corpus = load_corpus(folder)  # auto-detected: the folder holds cran.all.1400
    golden = load_cranfield_golden(folder)  # question ids are positions in cran.qry
    print(f"{len(corpus)} documents, {len(golden)} questions; {corpus.warnings[0] if corpus.warnings else ''}")
    q = golden["4"]
    print(f"question 4 ({q.notes}): {q.question}\n  judged: {golden.grades(q.id)}")
    card = evaluate("bm25", golden, corpus=corpus, k=(1, 10), workspace=".goldeval")
    for name, value in card.to_dict()["retrievers"][0]["metrics"].items():
        print(f"  {name:<14} {value:.4f}")


if __name__ == "__main__":
    main()
