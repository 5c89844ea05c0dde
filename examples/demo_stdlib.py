"""The demo's data from Python: build the stdlib corpus, load the shipped golden set, score BM25.

    python examples/demo_stdlib.py

The first run renders ~200 modules with pydoc (a few seconds) and caches them in .goldeval/;
later runs read the cache.
"""

from __future__ import annotations

import time
from pathlib import Path

import goldeval
from goldeval import load_golden
from goldeval.corpus import build_stdlib_corpus
from goldeval.golden import demo_golden_path, drop_unavailable

started = time.perf_counter()
corpus = build_stdlib_corpus(workspace=Path(".goldeval"))
print(f"{len(corpus)} modules in {time.perf_counter() - started:.2f} s; e.g. json: {corpus.documents['json'].title!r}")
for warning in corpus.warnings:
    print("warning:", warning)

golden = drop_unavailable(load_golden(demo_golden_path(), corpus=corpus), corpus)
print(f"{len(golden.answerable)} answerable and {len(golden.off_topic)} off-topic questions")

card = goldeval.evaluate("bm25", golden, corpus=corpus, k=(1, 5, 10))
result = card.to_dict()["retrievers"][0]
print({name: round(value, 3) for name, value in result["metrics"].items() if name in ("hit@1", "hit@5", "mrr")})
