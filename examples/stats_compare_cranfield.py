"""Is stemming worth it? BM25 with and without stemming on Cranfield, compared honestly.

    python examples/stats_compare_cranfield.py [path/to/cranfield]   # default: ../shared/data/cranfield

Two evaluations (as `goldeval eval --json` would save them) compared with each other: intervals, the
verdicts (wins and losses counted in questions, the difference with its paired-bootstrap interval,
the paired test), and what 225 questions can detect.
"""

from __future__ import annotations

import sys
from pathlib import Path

import goldeval
from goldeval import evaluate
from goldeval.corpus import load_corpus
from goldeval.golden import load_cranfield_golden
from goldeval.retrievers import BM25Retriever

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    corpus = load_corpus(folder)
    golden = load_cranfield_golden(folder)
    unstemmed = BM25Retriever(corpus.passages(), stem=False, name="bm25")
    plain = evaluate(unstemmed, golden, corpus=corpus, k=(1, 10))
    stemmed = evaluate("bm25", golden, corpus=corpus, k=(1, 10))
    ndcg = goldeval.parse_metric("ndcg@10")  # results are keyed by Metric values
    for label, card in (("no stemming", plain), ("stemming", stemmed)):
        r = goldeval.compare(card).retrievers[0]  # the intervals are statistics: compare() adds them
        low, high = r.intervals[ndcg]
        print(f"{label:<12} ndcg@10 {r.metrics[ndcg]:.3f} (95% CI {low:.3f} to {high:.3f}), "
              f"{len(r.answerable)} questions")
    report = goldeval.compare_results(plain, stemmed, labels=["no-stem", "stem"],
                                      metrics=["hit@10", "mrr", "ndcg@10"], seed=0)
    comparison = report.comparison
    for metric in map(goldeval.parse_metric, ("hit@10", "mrr", "ndcg@10")):
        for result in comparison.for_metric(metric):
            print(" ", result.verdict)
    print(" ", comparison.for_metric(ndcg)[0].detectable)


if __name__ == "__main__":
    main()
