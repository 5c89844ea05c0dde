"""Search vectors in PostgreSQL + pgvector without touching anything goldeval did not create.

    python examples/pgvector_isolated_search.py                      # a throwaway local server (sudo make pgvector)
    python examples/pgvector_isolated_search.py postgresql://me@db/app   # your own database

goldeval creates a fresh `goldeval_eval_<time>_<random>` schema, loads the vectors with a binary
COPY, searches exactly in SQL, checks the answer against numpy, and drops its schema again. A
target that is not an eval namespace (here: `public`) is refused before any statement runs.
"""

from __future__ import annotations

import sys

import numpy as np

from goldeval import InputError
from goldeval.retrievers import PgVectorIndex
from goldeval.store import server_until_exit


def main() -> None:
    dsn = sys.argv[1] if len(sys.argv) > 1 else server_until_exit()
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(1000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"doc{i}" for i in range(len(vectors))]
    queries = vectors[:5] + 0.05 * rng.normal(size=(5, 64)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    try:
        PgVectorIndex(dsn, schema="public")
    except InputError as exc:
        print(f"refused as it should be:\n  {exc}\n")

    with PgVectorIndex(dsn) as index:
        print(f"working in schema {index.schema}")
        index.add(ids, vectors)
        found, scores = index.search(queries, top_k=3)
    print("schema dropped:", index.closed)

    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :3]
    for row, hits in enumerate(found):
        same = hits == [ids[j] for j in exact[row]]
        print(f"query {row}: {hits}  scores {[round(float(s), 3) for s in scores[row]]}  equal to numpy: {same}")


if __name__ == "__main__":
    main()
