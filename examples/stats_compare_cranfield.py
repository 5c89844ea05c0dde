"""Is stemming worth it? BM25 with and without stemming on Cranfield, compared honestly.

    python examples/stats_compare_cranfield.py [path/to/cranfield]   # default: ../shared/data/cranfield

Two evaluations (as `goldeval eval --json` would save them) compared with each other: intervals, the
verdicts (wins and losses counted in questions, the difference with its paired-bootstrap interval,
the paired test), and what 225 questions can detect.
"""

from __future__ import annotations

import sys
from pathlib import Path

from goldeval.corpus import load_corpus
from goldeval.evaluation import evaluate
from goldeval.golden.cranfield import load_cranfield_golden
from goldeval.retrievers.bm25 import BM25Retriever
from goldeval.stats.compare import compare_scorecards

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    corpus = load_corpus(folder)
    golden = load_cranfield_golden(folder)
    unstemmed = BM25Retriever(corpus.passages(), stem=False, name="bm25")
    plain = evaluate(unstemmed, golden, corpus=corpus, k=(1, 10))
    stemmed = evaluate("bm25", golden, corpus=corpus, k=(1, 10))
    for label, card in (("no stemming", plain), ("stemming", stemmed)):
        r = card.retrievers[0]
        low, high = r.intervals["ndcg@10"]
        print(f"{label:<12} ndcg@10 {r.metrics['ndcg@10']:.3f} (95% CI {low:.3f} to {high:.3f}), "
              f"{len(r.answerable)} questions")
    comparison = compare_scorecards([plain, stemmed], labels=["no-stem", "stem"], seed=0)
    for metric in ("hit@10", "mrr", "ndcg@10"):
        for result in comparison.for_metric(metric):
            print(" ", result.verdict)
    print(" ", comparison.for_metric("ndcg@10")[0].detectable)


if __name__ == "__main__":
    main()
