"""pgvector search equals goldeval's numpy search on the real model's vectors (384 dimensions).

Every vector here is minilm's (the default dense model) of a Cranfield title or question
(tests/pg_fixtures.py), searched in a real PostgreSQL + pgvector over a real psycopg connection;
nothing is mocked. The reference is goldeval's own exact search (`ExactIndex`, numpy) ordered by the
one ranking rule (`goldeval.ranking.ranked`, as a Run orders it), and float64 inner products
computed here with numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from goldeval.errors import InputError
from goldeval.ranking import ranked
from goldeval.retrievers.backends.index import ExactIndex
from goldeval.retrievers.backends.pgvector import PgVectorIndex

try:  # tests/ is on sys.path in pytest's default import mode; a package if tests/__init__.py exists
    from pg_fixtures import DIM, Embedded
except ImportError:  # pragma: no cover
    from tests.pg_fixtures import DIM, Embedded

pytestmark = [pytest.mark.postgres, pytest.mark.models]

ROUNDING = 1e-6
"""Scores of 384-dimension float32 unit vectors carry rounding of a few 1e-7 (pgvector and BLAS sum in
different orders); two passages closer than this may swap places between the two searches."""


def numpy_search(data: Embedded, k: int) -> list[list[str]]:
    """goldeval's numpy search, ordered as a Run orders it (the one ranking rule)."""
    index = ExactIndex()
    index.add(data.ids, data.vectors)
    ids, scores = index.search(data.queries, k)
    return [[pid for pid, _ in ranked(zip(row, values.tolist(), strict=True))] for row, values in zip(ids, scores, strict=True)]


def float64_scores(data: Embedded) -> np.ndarray:
    return data.queries.astype(np.float64) @ data.vectors.astype(np.float64).T


@pytest.mark.parametrize("metric", ["ip", "cosine"])
def test_exact_search_equals_numpy_at_every_rank(production_dsn: str, minilm_cranfield: Embedded, metric: str) -> None:
    data = minilm_cranfield
    with PgVectorIndex(production_dsn, metric=metric) as index:  # type: ignore[arg-type]
        index.add(data.ids[:600], data.vectors[:600])  # two batches, as an encoder yields them
        index.add(data.ids[600:], data.vectors[600:])
        got_ids, got_scores = index.search(data.queries, top_k=1400)
    expected = numpy_search(data, 1400)
    reference = float64_scores(data)
    column = {pid: j for j, pid in enumerate(data.ids)}
    assert got_scores.dtype == np.float32 and got_scores.shape == (len(data.queries), 1400)
    for row, (got, want) in enumerate(zip(got_ids, expected, strict=True)):
        assert got[:10] == want[:10], f"question {data.question_ids[row]}"
        assert sorted(got) == sorted(want) == sorted(data.ids)
        # The whole ranking is the same up to rounding: where the ids differ, their scores do not.
        swapped = [abs(reference[row, column[g]] - reference[row, column[w]]) for g, w in zip(got, want, strict=True) if g != w]
        assert max(swapped, default=0.0) < ROUNDING, f"question {data.question_ids[row]}"
        np.testing.assert_allclose(got_scores[row], reference[row, [column[g] for g in got]], atol=ROUNDING)
    # The top-10 identity above does not hinge on rounding: neighbours there are further apart.
    gaps = [-np.diff(np.sort(reference[row])[::-1][:11]) for row in range(len(data.queries))]
    assert min(g[g > 0].min() for g in gaps) > 2 * ROUNDING


def test_real_ties_follow_the_ranking_rule(production_dsn: str, minilm_cranfield: Embedded) -> None:
    # Cranfield has 17 documents titled "note on creep buckling of columns ." (1017-1031, 1034, 1035) and
    # two titled "oscillatory aerodynamic coefficients ..." (272, 1272): identical titles, identical vectors.
    data = minilm_cranfield
    row = {pid: j for j, pid in enumerate(data.ids)}
    queries = data.vectors[[row["1017"], row["1272"]]]
    with PgVectorIndex(production_dsn) as index:
        index.add(data.ids, data.vectors)
        got, scores = index.search(queries, top_k=5)
    # trec_eval's rule: ties by id descending in byte order, so "1035" before "1029" and "272" before "1272".
    assert got[0] == ["1035", "1034", "1031", "1030", "1029"]
    assert got[1][:2] == ["272", "1272"]
    assert scores[0][0] == scores[0][4] and scores[1][0] == scores[1][1]
    np.testing.assert_allclose(scores[0], 1.0, atol=ROUNDING)
    exact = ExactIndex()
    exact.add(data.ids, data.vectors)
    numpy_ids, numpy_scores = exact.search(queries, 5)
    assert [[p for p, _ in ranked(zip(r, s.tolist(), strict=True))] for r, s in zip(numpy_ids, numpy_scores, strict=True)] == got


def test_hnsw_index_is_built_used_and_finds_the_exact_top_10(production_dsn: str, minilm_cranfield: Embedded) -> None:
    data = minilm_cranfield
    with PgVectorIndex(production_dsn, hnsw=True) as index:
        index.add(data.ids, data.vectors)
        index._conn.execute("SET enable_seqscan = off")  # 1400 rows: make the planner take the index
        got_ids, got_scores = index.search(data.queries, top_k=10)
        conn = index._conn
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT id FROM {index.schema}.passages ORDER BY embedding <#> %s LIMIT 10", (data.queries[0],)
        ).fetchall())
        indexes = conn.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = %s", (index.schema,)).fetchall()
    assert len(indexes) == 1 and "USING hnsw (embedding vector_ip_ops)" in indexes[0][0]
    assert "Index Scan using passages_hnsw" in plan
    exact = numpy_search(data, 10)
    recall = np.mean([len(set(g) & set(e)) / 10 for g, e in zip(got_ids, exact, strict=True)])
    assert recall >= 0.95
    column = {pid: j for j, pid in enumerate(data.ids)}
    reference = float64_scores(data)
    for row, got in enumerate(got_ids):  # what HNSW returns is scored exactly and ranked by the rule
        np.testing.assert_allclose(got_scores[row], reference[row, [column[g] for g in got]], atol=ROUNDING)
        assert got == [p for p, _ in ranked(zip(got, got_scores[row].tolist(), strict=True))]


def test_hnsw_returns_more_than_ef_search_rows(production_dsn: str, minilm_cranfield: Embedded) -> None:
    # pgvector's HNSW scan stops at hnsw.ef_search (<= 1000) rows; a deep run (top_k=1200) must still get
    # 1200 when the planner uses the index (pgvector 0.8's iterative scan).
    data = minilm_cranfield
    with PgVectorIndex(production_dsn, hnsw=True) as index:
        index.add(data.ids, data.vectors)
        index._conn.execute("SET enable_seqscan = off")
        got, scores = index.search(data.queries[:2], top_k=1200)
    assert [len(row) for row in got] == [1200, 1200] and all(len(set(row)) == 1200 for row in got)
    assert np.all(np.diff(scores, axis=1) <= 0)


def test_wrong_dimension_and_bad_vectors_are_refused(production_dsn: str, minilm_cranfield: Embedded) -> None:
    vectors = minilm_cranfield.vectors
    with PgVectorIndex(production_dsn) as index:
        index.add(["a"], vectors[:1])
        with pytest.raises(InputError, match=rf"queries have 383 dimensions but the index holds {DIM}-dimensional"):
            index.search(vectors[:1, :383], top_k=1)
        with pytest.raises(InputError, match=r"2 ids but 1 vectors"):
            index.add(["b", "c"], vectors[1:2])
        with pytest.raises(InputError, match=r"NaN or infinite"):
            index.add(["b"], np.full((1, DIM), np.nan, dtype=np.float32))

