"""Cranfield 1400 with all-MiniLM-L6-v2: numpy exact search next to PostgreSQL + pgvector.

    python examples/pgvector_cranfield.py                 # a throwaway local server (sudo make pgvector)
    python examples/pgvector_cranfield.py postgresql://me@db/app

Both backends rank the same vectors (cached in .goldeval/ after the first run, which embeds the
1400 abstracts), so nDCG@10, MAP and recall@100 must agree. Needs ../shared/data/cranfield beside
the repository and `pip install 'goldeval[dense,pg]'`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from goldeval import evaluate
from goldeval.corpus import load_cranfield_corpus
from goldeval.golden import load_cranfield_golden
from goldeval.store import server_until_exit

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


def main() -> None:
    dsn = sys.argv[1] if len(sys.argv) > 1 else server_until_exit()
    corpus, golden = load_cranfield_corpus(DATA), load_cranfield_golden(DATA)
    for spec in ["dense:minilm", "dense:minilm?backend=pgvector"]:
        started = time.perf_counter()
        card = evaluate([spec], golden, corpus=corpus, metrics=["ndcg@10", "map", "recall@100"], depth=1000,
                        options={"dsn": dsn, "progress": False})
        scores = "  ".join(f"{name} {value:.4f}" for name, value in card.retrievers[0].metrics.items())
        print(f"{spec:32s} {scores}  ({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
