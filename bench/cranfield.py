"""Cranfield 1400: BM25, dense models, hybrid and rerank side by side; BM25 checked against rank_bm25.

    python -m bench.cranfield                 # every installed retriever below, table on stdout
    python -m bench.cranfield bm25 dense:minilm 'hybrid:bm25+dense:minilm'

Metrics: nDCG@10, MAP (over the top 1000, trec_eval's default run depth) and recall@100, averaged
over the 225 queries; graded relevance as goldeval.golden.cranfield maps it (1->4 ... 4->1, -1->0).
Embeddings are cached in the workspace (`.goldeval/` by default, `GOLDEVAL_WORKSPACE` to move it),
so only the first run of a model pays for embedding the collection.

The rank_bm25 check: the same tokens (bm25s' tokenizer with goldeval's settings: lower-case,
English stopwords, Snowball stemming; title + text) scored by rank_bm25's BM25Okapi (k1=1.5,
b=0.75; its idf differs from bm25s' Lucene idf in the epsilon floor for very common terms).
The three metrics must agree within 0.01.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from goldeval.corpus.model import Corpus, Passage
from goldeval.run import Run

_ROOT = Path(__file__).resolve().parents[1]
DATA = next((p for p in (_ROOT / "cranfield", _ROOT.parent / "shared" / "data" / "cranfield") if p.is_dir()),
            _ROOT / "cranfield")
"""The Cranfield folder: `cranfield/` in the repository root, where the README has a user put it (it is not
shipped), else the development workspace's copy beside the repository."""
METRICS = ["ndcg@10", "map", "recall@100"]
DEPTH = 1000
RETRIEVERS = [
    "bm25",
    "dense:wordllama",
    "dense:minilm-l3",
    "dense:minilm",
    "dense:e5-small",
    "dense:mpnet-base",
    "hybrid:bm25+dense:minilm",
    "hybrid:bm25+dense:minilm?method=norm&weight=0.5",
    "hybrid:bm25+dense:mpnet-base",
    "rerank:bm25>dense:mpnet-base?top=100",
    "dense:minilm?backend=ann",
]


def load(folder: Path = DATA) -> tuple[Corpus, Any]:
    from goldeval.corpus import load_corpus
    from goldeval.golden.cranfield import load_cranfield_golden

    return load_corpus(folder), load_cranfield_golden(folder)


def evaluate_specs(specs: Sequence[str], folder: Path = DATA, workspace: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Metrics and seconds per retriever spec; a retriever whose model is missing is reported, not fatal."""
    from goldeval import evaluate
    from goldeval.errors import GoldevalError
    from goldeval.store.workspace import Workspace

    corpus, golden = load(folder)
    ws = Workspace.at(workspace).root
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        start = time.perf_counter()
        try:
            card = evaluate([spec], golden, corpus=corpus, k=(10,), metrics=METRICS, depth=DEPTH,
                            workspace=ws)
        except GoldevalError as exc:
            out[spec] = {"error": str(exc).splitlines()[0]}
            print(f"{spec}: skipped: {out[spec]['error']}", file=sys.stderr)
            continue
        values = {str(m): v for m, v in card.retrievers[0].metrics.items()}
        out[spec] = {**{m: values[m] for m in METRICS}, "seconds": round(time.perf_counter() - start, 2)}
        print(f"{spec}: " + "  ".join(f"{m}={values[m]:.4f}" for m in METRICS), file=sys.stderr)
    return out


class RankBM25Retriever:
    """rank_bm25's BM25Okapi over bm25s-tokenised text (goldeval's tokenisation settings)."""

    name = "rank_bm25"

    def __init__(self, passages: Sequence[Passage], k1: float = 1.5, b: float = 0.75) -> None:
        from rank_bm25 import BM25Okapi

        self._ids = [p.id for p in passages]
        tokens = _tokenize([f"{p.title}\n{p.text}" if p.title else p.text for p in passages])
        self._bm25 = BM25Okapi(tokens, k1=k1, b=b)

    def search(self, queries: Mapping[str, str], *, top_k: int) -> Run:
        run = Run(self.name)
        qids = list(queries)
        for qid, tokens in zip(qids, _tokenize([queries[q] for q in qids]), strict=True):
            scores = self._bm25.get_scores(tokens)
            top = np.argsort(-scores, kind="stable")[:top_k]
            run.add(qid, [(self._ids[i], float(scores[i])) for i in top if scores[i] > 0])
        return run


def _tokenize(texts: list[str]) -> list[list[str]]:
    import Stemmer
    from bm25s.tokenization import Tokenizer

    tokenizer = Tokenizer(lower=True, stopwords="english", stemmer=Stemmer.Stemmer("english").stemWord)
    strings: list[list[str]] = tokenizer.tokenize(texts, update_vocab=True, return_as="string", show_progress=False)
    return strings


def check_bm25(folder: Path = DATA) -> dict[str, Any]:
    """goldeval's BM25 against rank_bm25 on the same tokens: per-metric difference, must be <= 0.01."""
    from goldeval import evaluate

    corpus, golden = load(folder)
    card = evaluate({"bm25": "bm25", "rank_bm25": RankBM25Retriever(corpus.passages())}, golden, corpus=corpus,
                    k=(10,), metrics=METRICS, depth=DEPTH)
    ours = {str(m): v for m, v in card.retrievers[0].metrics.items()}
    theirs = {str(m): v for m, v in card.retrievers[1].metrics.items()}
    diff = {m: abs(ours[m] - theirs[m]) for m in METRICS}
    return {"goldeval": {m: ours[m] for m in METRICS}, "rank_bm25": {m: theirs[m] for m in METRICS},
            "abs_diff": diff, "within_0.01": all(d <= 0.01 for d in diff.values())}


def ann_check(model: str = "minilm", folder: Path = DATA, top_k: int = 10) -> dict[str, float]:
    """Recall@k of the usearch index against exact search, for the 225 real queries."""
    from goldeval.retrievers.backends import recall_against_exact
    from goldeval.retrievers.dense import DenseRetriever
    from goldeval.retrievers.encoders.registry import load_encoder

    corpus, golden = load(folder)
    retriever = DenseRetriever(corpus.passages(), load_encoder(model, progress=False), backend="ann")
    queries = retriever.cache.get_or_compute(
        [q.question for q in golden], lambda t: retriever.encoder.encode(t, kind="query"),
        prefix=retriever.encoder.prefix("query"),
    )
    real = recall_against_exact(retriever.index, retriever.passage_ids, retriever.vectors, queries, top_k)
    return {"sampled_passages": retriever.ann_recall or 0.0, "queries": real}


PAIRS = [("dense:minilm", "dense:mpnet-base"), ("bm25", "hybrid:bm25+dense:minilm"), ("dense:minilm", "hybrid:bm25+dense:minilm")]
"""Is the base model better than the small one, or did it get lucky? Paired verdicts (goldeval.stats)."""


def verdicts(pairs: Sequence[tuple[str, str]] = PAIRS, folder: Path = DATA) -> list[str]:
    """Paired-bootstrap verdicts on nDCG@10 and MAP for each (A, B) pair whose models are installed."""
    from goldeval import evaluate
    from goldeval.errors import GoldevalError
    from goldeval.stats.compare import compare_scorecards
    from goldeval.store.workspace import Workspace

    corpus, golden = load(folder)
    lines = []
    for a, b in pairs:
        try:
            cards = [evaluate(spec, golden, corpus=corpus, k=(10,), metrics=METRICS, depth=DEPTH,
                              workspace=Workspace.at().root) for spec in (a, b)]
        except GoldevalError as exc:
            lines.append(f"{a} vs {b}: skipped ({str(exc).splitlines()[0]})")
            continue
        comparison = compare_scorecards(cards, labels=[a, b], seed=0)
        lines += [r.verdict for m in ("ndcg@10", "map") for r in comparison.for_metric(m)]
        lines.append(comparison.for_metric("ndcg@10")[0].detectable)
    return lines


def markdown_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    lines = ["| retriever | nDCG@10 | MAP | recall@100 | seconds |", "|---|---|---|---|---|"]
    for spec, row in results.items():
        if "error" in row:
            lines.append(f"| `{spec}` | not installed | | | |")
        else:
            lines.append(f"| `{spec}` | {row['ndcg@10']:.4f} | {row['map']:.4f} | {row['recall@100']:.4f} | {row['seconds']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    specs = (sys.argv[1:] if argv is None else argv) or RETRIEVERS
    results = evaluate_specs(specs)
    check = check_bm25()
    print(markdown_table(results))
    print(f"\nBM25 vs rank_bm25: {json.dumps(check['abs_diff'])}, within 0.01: {check['within_0.01']}")
    ann = ann_check()
    print(f"ANN (usearch) recall@10 against exact search, minilm: {json.dumps(ann)}")
    lines = verdicts()
    print("\n" + "\n".join(f"- {line}" for line in lines))
    return {"retrievers": results, "bm25_check": check, "ann_recall@10": ann, "verdicts": lines}


if __name__ == "__main__":
    main()
