"""pgvector backend: goldeval's PgVectorIndex next to pgvector-python used as its README shows.

Both sides run in this process against one throwaway PostgreSQL + pgvector server (goldeval.store.pg_local):
load N L2-normalised vectors, then answer Q queries by exact inner-product search. The peer
(pgvector-python, `register_vector` + binary COPY + one `SELECT … ORDER BY embedding <#> %s LIMIT k`
per query) works in a database of its own. goldeval adds what isolation costs (creating and dropping
its schema) and sends queries pipelined. Both answers are checked against numpy's exact top k.

Prints the timings and ratios and writes bench/results/pgvector.json.
"""

from __future__ import annotations

import time

import numpy as np

from bench import write_results
from goldeval.store.pg_local import local_server

N_VECTORS = 20_000
DIM = 384
N_QUERIES = 200
TOP_K = 10


def _data() -> tuple[list[str], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(200, DIM))
    vectors = (centres[rng.integers(0, 200, N_VECTORS)] + 0.5 * rng.normal(size=(N_VECTORS, DIM))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[rng.integers(0, N_VECTORS, N_QUERIES)] + 0.3 * rng.normal(size=(N_QUERIES, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return [f"doc{i:06d}" for i in range(N_VECTORS)], vectors, queries


def _goldeval(dsn: str, ids: list[str], vectors: np.ndarray, queries: np.ndarray) -> tuple[float, float, list[list[str]]]:
    from goldeval.retrievers.backends.pgvector import PgVectorIndex

    start = time.perf_counter()
    index = PgVectorIndex(dsn)
    index.add(ids, vectors)
    loaded = time.perf_counter()
    found, _ = index.search(queries, TOP_K)
    searched = time.perf_counter()
    index.close()
    closed = time.perf_counter()
    return loaded - start, (searched - loaded) + (closed - searched), found


def _peer(dsn: str, ids: list[str], vectors: np.ndarray, queries: np.ndarray) -> tuple[float, float, list[list[str]]]:
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("CREATE DATABASE peer")
    peer_dsn = dsn.replace("/postgres?", "/peer?")
    with psycopg.connect(peer_dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        start = time.perf_counter()
        register_vector(conn)
        conn.execute(f"CREATE TABLE items (id text, embedding vector({DIM}))")
        with conn.cursor() as cur, cur.copy("COPY items (id, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "vector"])
            for pid, row in zip(ids, vectors, strict=True):
                copy.write_row([pid, row])
        loaded = time.perf_counter()
        found = [
            [r[0] for r in conn.execute("SELECT id FROM items ORDER BY embedding <#> %s LIMIT %s", (q, TOP_K)).fetchall()]
            for q in queries
        ]
        searched = time.perf_counter()
        conn.execute("DROP TABLE items")
    return loaded - start, searched - loaded, found


def main() -> None:
    ids, vectors, queries = _data()
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :TOP_K]
    truth = [[ids[j] for j in row] for row in exact]

    with local_server() as dsn:
        g_load, g_search, g_found = _goldeval(dsn, ids, vectors, queries)
        p_load, p_search, p_found = _peer(dsn, ids, vectors, queries)

    result = {
        "setup": {"vectors": N_VECTORS, "dim": DIM, "queries": N_QUERIES, "top_k": TOP_K, "search": "exact"},
        "goldeval": {"load_s": round(g_load, 3), "search_s": round(g_search, 3),
                    "queries_per_s": round(N_QUERIES / g_search, 1), "same_top_k_as_numpy": g_found == truth},
        "pgvector_python": {"load_s": round(p_load, 3), "search_s": round(p_search, 3),
                            "queries_per_s": round(N_QUERIES / p_search, 1), "same_top_k_as_numpy": p_found == truth},
        "ratio_load_goldeval_over_peer": round(g_load / p_load, 2),
        "ratio_search_goldeval_over_peer": round(g_search / p_search, 2),
    }
    print(f"pgvector backend: {N_VECTORS} x {DIM} vectors, {N_QUERIES} queries, top {TOP_K}, exact")
    print(f"  load   goldeval {g_load:7.2f} s   pgvector-python {p_load:7.2f} s   ratio {result['ratio_load_goldeval_over_peer']}")
    print(f"  search goldeval {g_search:7.2f} s   pgvector-python {p_search:7.2f} s   ratio {result['ratio_search_goldeval_over_peer']}")
    print(f"  same top {TOP_K} as numpy: goldeval {g_found == truth}, pgvector-python {p_found == truth}")
    print(f"wrote {write_results('pgvector', result)}")


if __name__ == "__main__":
    main()
