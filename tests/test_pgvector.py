"""PostgreSQL + pgvector backend: isolation guard, cleanup, and exact search equal to numpy.

Every test here runs against a real throwaway server (tests/pg_fixtures.py) over a real psycopg
connection; nothing is mocked.
"""

from __future__ import annotations

import json

import numpy as np
import psycopg
import pytest

from goldeval.errors import InputError
from goldeval.metrics.definitions import parse_metric
from goldeval.retrievers.backends import make_index
from goldeval.retrievers.backends.pgvector import CleanupError, PgVectorIndex, list_eval_schemas

try:  # tests/ is on sys.path in pytest's default import mode; a package if tests/__init__.py exists
    from golden_factory import make_golden
    from pg_fixtures import bare_dsn, eval_schemas, pg_server, production_dsn, snapshot  # noqa: F401
except ImportError:  # pragma: no cover
    from tests.golden_factory import make_golden
    from tests.pg_fixtures import bare_dsn, eval_schemas, pg_server, production_dsn, snapshot  # noqa: F401

pytestmark = pytest.mark.postgres


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def numpy_top(queries: np.ndarray, vectors: np.ndarray, ids: list[str], k: int) -> list[list[str]]:
    """Reference: float64 inner products, score descending, ties by id descending (trec_eval)."""
    scores = queries.astype(np.float64) @ vectors.astype(np.float64).T
    order = []
    for row in scores:
        pairs = sorted(zip(ids, row, strict=True), key=lambda p: (-p[1], [-ord(c) for c in p[0]]))
        order.append([pid for pid, _ in pairs[:k]])
    return order


# --- (2) the guard refuses production targets ----------------------------------------------------


@pytest.mark.parametrize("target", ["public", "app", "goldeval_evalx", "Goldeval_eval_x", "goldeval_eval_x;drop"])
def test_guard_refuses_a_production_schema_before_connecting(target: str) -> None:
    # The DSN points nowhere: the refusal must come before any connection or statement.
    nowhere = "postgresql://nobody@/nowhere?host=/nonexistent-socket-dir"
    with pytest.raises(InputError, match=rf"refusing to write to schema '{target}'.*start with 'goldeval_eval_'"):
        PgVectorIndex(nowhere, schema=target)


def test_guard_refuses_a_prefix_outside_the_eval_namespace() -> None:
    with pytest.raises(InputError, match=r"refusing to write to schema prefix 'myeval_'"):
        PgVectorIndex("postgresql://nobody@/nowhere?host=/nonexistent", prefix="myeval_")


def test_guard_refusal_through_the_dense_backend_options(production_dsn: str) -> None:
    before = snapshot(production_dsn)
    options = {"backend": "pgvector", "dsn": production_dsn, "schema": "public"}
    with pytest.raises(InputError, match=r"refusing to write to schema 'public'") as info:
        make_index("pgvector", 8, options)
    assert "leave the schema option out" in str(info.value)
    assert snapshot(production_dsn) == before


def test_an_existing_eval_schema_is_neither_used_nor_dropped(production_dsn: str) -> None:
    with psycopg.connect(production_dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA goldeval_eval_someone_elses")
        conn.execute("CREATE TABLE goldeval_eval_someone_elses.notes (x int)")
    try:
        before = snapshot(production_dsn)
        with pytest.raises(InputError, match=r"schema 'goldeval_eval_someone_elses' already exists"):
            PgVectorIndex(production_dsn, schema="goldeval_eval_someone_elses")
        assert snapshot(production_dsn) == before
    finally:
        with psycopg.connect(production_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE goldeval_eval_someone_elses.notes")
            conn.execute("DROP SCHEMA goldeval_eval_someone_elses")


def test_missing_dsn_and_unreachable_server_are_clear_errors() -> None:
    with pytest.raises(InputError, match=r"needs a PostgreSQL connection string"):
        make_index("pgvector", 8, {"backend": "pgvector"})
    dsn = "postgresql://alice:s3cret@/db?host=/nonexistent-socket-dir"
    with pytest.raises(InputError, match=r"cannot connect to PostgreSQL at .*user=alice") as info:
        PgVectorIndex(dsn)
    assert "s3cret" not in str(info.value)


# --- (3) pgvector search equals exact numpy search ---------------------------------------------


@pytest.mark.parametrize("metric", ["ip", "cosine"])
def test_exact_search_equals_numpy(production_dsn: str, metric: str) -> None:
    rng = np.random.default_rng(7)
    vectors = unit_rows(rng, 300, 32)
    ids = [f"doc/{i:03d}" for i in range(300)]
    queries = unit_rows(rng, 40, 32)
    with PgVectorIndex(production_dsn, metric=metric) as index:  # type: ignore[arg-type]
        index.add(ids[:120], vectors[:120])  # two batches, as an encoder yields them
        index.add(ids[120:], vectors[120:])
        got_ids, got_scores = index.search(queries, top_k=10)
    assert got_ids == numpy_top(queries, vectors, ids, 10)
    expected = np.sort(queries @ vectors.T, axis=1)[:, ::-1][:, :10]
    if metric == "cosine":  # 1 - cosine distance; equal to the inner product on unit vectors
        np.testing.assert_allclose(got_scores, expected, atol=1e-5)
    else:
        np.testing.assert_allclose(got_scores, expected, atol=1e-6)
    assert got_scores.dtype == np.float32


def test_ties_follow_the_ranking_rule_and_top_k_past_the_corpus(production_dsn: str) -> None:
    # Four identical vectors: trec_eval breaks the tie by id descending, in byte order ("b" > "B").
    same = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    other = np.array([[0.0, 1.0, 0.0]], dtype=np.float32)
    ids = ["a", "B", "b", "a2", "z"]
    vectors = np.vstack([same, same, same, same, other])
    with PgVectorIndex(production_dsn) as index:
        index.add(ids, vectors)
        got_ids, scores = index.search(same, top_k=2)
        all_ids, all_scores = index.search(same, top_k=50)
    assert got_ids == [["b", "a2"]]
    assert all_ids == [["b", "a2", "a", "B", "z"]]
    assert all_scores.shape == (1, 5)
    np.testing.assert_allclose(all_scores[0], [1, 1, 1, 1, 0], atol=1e-7)


def test_hnsw_index_is_built_used_and_close_to_exact(production_dsn: str) -> None:
    rng = np.random.default_rng(3)
    centres = unit_rows(rng, 20, 16)
    vectors = centres[rng.integers(0, 20, 2000)] + 0.2 * rng.normal(size=(2000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"p{i}" for i in range(2000)]
    queries = unit_rows(rng, 30, 16)
    with PgVectorIndex(production_dsn, hnsw=True) as index:
        index.add(ids, vectors)
        got_ids, _ = index.search(queries, top_k=10)
        indexes = psycopg.connect(production_dsn, autocommit=True).execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s", (index.schema,)
        ).fetchall()
    assert len(indexes) == 1 and "USING hnsw (embedding vector_ip_ops)" in indexes[0][0]
    exact = numpy_top(queries, vectors, ids, 10)
    recall = np.mean([len(set(g) & set(e)) / 10 for g, e in zip(got_ids, exact, strict=True)])
    assert recall >= 0.9


def test_wrong_dimension_and_bad_vectors_are_refused(production_dsn: str) -> None:
    with PgVectorIndex(production_dsn) as index:
        index.add(["a"], np.ones((1, 4), dtype=np.float32) / 2)
        with pytest.raises(InputError, match=r"queries have 3 dimensions but the index holds 4-dimensional"):
            index.search(np.ones((1, 3), dtype=np.float32), top_k=1)
        with pytest.raises(InputError, match=r"2 ids but 1 vectors"):
            index.add(["b", "c"], np.ones((1, 4), dtype=np.float32))
        with pytest.raises(InputError, match=r"NaN or infinite"):
            index.add(["b"], np.full((1, 4), np.nan, dtype=np.float32))


# --- cleanup: drop exactly what was created, never anything else ---------------------------------


def test_cleanup_on_exception_leaves_the_database_as_it_was(production_dsn: str) -> None:
    before = snapshot(production_dsn)
    with pytest.raises(RuntimeError, match="encoder crashed"), PgVectorIndex(production_dsn) as index:
        index.add(["a", "b"], np.eye(2, dtype=np.float32))
        assert index.schema in eval_schemas(production_dsn)
        raise RuntimeError("encoder crashed")
    assert index.closed
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_extension_is_created_in_goldevals_schema_and_dropped(bare_dsn: str) -> None:
    before = snapshot(bare_dsn)
    assert [e[0] for e in before["extensions"]] == ["plpgsql"]
    index = PgVectorIndex(bare_dsn)
    with psycopg.connect(bare_dsn, autocommit=True) as conn:
        where = conn.execute(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'vector'"
        ).fetchone()
    assert where == (index.schema,)
    index.add(["x", "y"], np.eye(2, dtype=np.float32))
    assert index.search(np.eye(2, dtype=np.float32)[:1], top_k=1)[0] == [["x"]]
    index.close()
    index.close()  # idempotent
    assert snapshot(bare_dsn) == before


def test_without_permission_to_create_the_extension_it_says_how(bare_dsn: str) -> None:
    before = snapshot(bare_dsn)
    with pytest.raises(InputError, match=r"pgvector is installed on the server but not enabled"):
        PgVectorIndex(bare_dsn, create_extension=False)
    assert snapshot(bare_dsn) == before  # the schema it had created was dropped again


def test_a_foreign_object_in_goldevals_schema_is_never_cascaded(production_dsn: str) -> None:
    index = PgVectorIndex(production_dsn)
    index.add(["a"], np.ones((1, 2), dtype=np.float32) / np.sqrt(2))
    with psycopg.connect(production_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {index.schema}.colleague_notes (x int)")
    try:
        with pytest.raises(CleanupError, match=rf"(?s)could not remove.*schema {index.schema} \(DependentObjectsStillExist.*colleague_notes"):
            index.close()
        with psycopg.connect(production_dsn, autocommit=True) as conn:
            left = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (index.schema,)
            ).fetchall()
        assert left == [("colleague_notes",)]  # goldeval's own table went, the colleague's stayed
    finally:
        with psycopg.connect(production_dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {index.schema}.colleague_notes")
            conn.execute(f"DROP SCHEMA {index.schema}")


# --- (1) a full evaluation leaves production byte-identical --------------------------------------


def test_evaluation_leaves_production_byte_identical(production_dsn: str) -> None:
    before = snapshot(production_dsn)
    assert before["data"]["public.products"][0] == 4
    rng = np.random.default_rng(11)
    vectors = unit_rows(rng, 200, 8)  # same dimension as the production table's vectors
    ids = [f"doc{i}" for i in range(200)]
    for hnsw in (False, True):
        index = make_index("pgvector", 8, {"backend": "pgvector", "dsn": production_dsn, "hnsw": str(hnsw)})
        assert isinstance(index, PgVectorIndex) and index.hnsw is hnsw
        with index:
            assert index.schema.startswith("goldeval_eval_")
            index.add(ids, vectors)
            got, _ = index.search(vectors[:20], top_k=5)
            assert [row[0] for row in got] == ids[:20]
    after = snapshot(production_dsn)
    assert after == before
    assert eval_schemas(production_dsn) == []


# --- (1) end to end: the dense retriever on the pgvector backend, scored by evaluate() -------------

_DOCS = {
    "kettle": "An electric kettle boils water quickly; descale the kettle with vinegar.",
    "teapot": "Warm the teapot, add loose leaf tea, pour water just off the boil.",
    "mug": "A ceramic mug keeps coffee hot; wash the mug by hand.",
    "grinder": "A burr grinder gives an even coffee grind for espresso.",
    "espresso": "Espresso needs finely ground coffee and nine bars of pressure.",
    "matcha": "Whisk matcha tea powder with hot water until it foams.",
    "chai": "Chai is black tea simmered with milk, ginger and cardamom.",
    "descaling": "Descaling removes limescale from a kettle or coffee machine with citric acid.",
}
_QUESTIONS = [
    ("q1", "how do I descale my kettle", {"kettle": 1, "descaling": 2}),
    ("q2", "what grind for espresso coffee", {"espresso": 2, "grinder": 1}),
    ("q3", "how to make chai with milk", {"chai": 1}),
    ("q4", "whisk matcha powder", {"matcha": 1}),
    ("q5", "keep coffee hot in a mug", {"mug": 1}),
    ("q6", "who won the football match", {}),  # off-topic
]


def _bag_of_words(texts: list[str]) -> np.ndarray:
    """A deterministic toy encoder: hashed word counts in 64 dimensions."""
    import hashlib

    out = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().replace(",", " ").replace(";", " ").replace(".", " ").split():
            out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
    return out


def test_full_evaluation_on_pgvector_matches_exact_and_leaves_production_identical(
    production_dsn: str, tmp_path
) -> None:
    from goldeval.corpus.model import Corpus, Document
    from goldeval.evaluation import evaluate
    from goldeval.retrievers.dense import DenseRetriever
    from goldeval.retrievers.encoders.function import FunctionEncoder
    from goldeval.store.workspace import Workspace

    corpus = Corpus({d: Document(d, text) for d, text in _DOCS.items()}, name="kitchen")
    golden = make_golden(_QUESTIONS)
    encoder = FunctionEncoder(_bag_of_words, name="bow64")
    workspace = Workspace.at(tmp_path / ".goldeval")
    before = snapshot(production_dsn)

    exact = DenseRetriever(corpus.passages(), encoder, workspace=workspace, name="dense:exact")
    on_pg = DenseRetriever(corpus.passages(), encoder, workspace=workspace, backend="pgvector",
                           options={"dsn": production_dsn}, name="dense:pg")
    try:
        assert isinstance(on_pg.index, PgVectorIndex)
        assert on_pg.index.schema in eval_schemas(production_dsn)
        card = evaluate({"exact": exact, "pgvector": on_pg}, golden, corpus=corpus, k=(1, 3, 5), depth=8)
    finally:
        on_pg.close()
        exact.close()

    assert snapshot(production_dsn) == before
    assert eval_schemas(production_dsn) == []
    by_name = {r.name: r for r in card.retrievers}
    assert by_name["pgvector"].metrics == pytest.approx(by_name["exact"].metrics, abs=1e-9)
    for q_exact, q_pg in zip(by_name["exact"].questions, by_name["pgvector"].questions, strict=True):
        assert [h.id for h in q_pg.top] == [h.id for h in q_exact.top]
        assert q_pg.error is None
    first = {q.id: q.rank for q in by_name["pgvector"].questions}
    assert first["q3"] == 1 and first["q4"] == 1  # the toy encoder finds the obvious ones
    assert by_name["pgvector"].off_topic[0].id == "q6"


@pytest.mark.models
def test_spec_dense_minilm_on_pgvector_cleans_up_when_evaluate_returns(production_dsn: str, tmp_path) -> None:
    # The user's path: `--retriever dense:minilm?backend=pgvector --dsn ...`, a real model from
    # site-packages. evaluate() builds the retriever itself; its schema must be gone when it returns.
    from goldeval.corpus.model import Corpus, Document
    from goldeval.evaluation import evaluate

    corpus = Corpus({d: Document(d, text) for d, text in _DOCS.items()}, name="kitchen")
    golden = make_golden(_QUESTIONS)
    before = snapshot(production_dsn)
    card = evaluate(
        ["dense:minilm?backend=pgvector", "dense:minilm"], golden, corpus=corpus, k=(1, 3),
        workspace=tmp_path / ".goldeval", options={"dsn": production_dsn, "progress": False},
    )
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before
    on_pg, exact = card.retrievers
    assert on_pg.metrics == pytest.approx(exact.metrics, abs=1e-6)
    assert on_pg.metrics[parse_metric("hit@3")] >= 0.8  # a real model answers these kitchen questions


def _write_kitchen(folder) -> tuple[str, str]:
    import json

    corpus = folder / "kitchen.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in _DOCS.items()), encoding="utf-8")
    golden = folder / "golden.jsonl"
    golden.write_text(
        "".join(json.dumps({"id": q, "question": t, "expected": list(e)}) + "\n" for q, t, e in _QUESTIONS),
        encoding="utf-8",
    )
    return str(corpus), str(golden)


@pytest.mark.models
def test_cli_eval_with_backend_pgvector(production_dsn: str, tmp_path, capsys) -> None:
    from goldeval.cli import main

    corpus, golden = _write_kitchen(tmp_path)
    before = snapshot(production_dsn)
    common = ["eval", "--corpus", corpus, "--golden", golden, "--retriever", "dense:minilm", "--quiet",
              "--workspace", str(tmp_path / ".goldeval"), "--backend", "pgvector", "--dsn", production_dsn]
    assert main([*common, "--json", str(tmp_path / "card.json")]) == 0
    assert (tmp_path / "card.json").exists()
    capsys.readouterr()
    # The guard from the command line: exit 2 (bad input) with the reason and the fix.
    assert main([*common, "--option", "schema=public"]) == 2
    err = capsys.readouterr().err
    assert "refusing to write to schema 'public'" in err and "leave the schema option out" in err
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_cleanup_survives_a_terminated_session(production_dsn: str) -> None:
    # The server ends goldeval's session mid-evaluation (restart, admin, network): the search fails
    # loudly, and close() still drops the schema over a fresh connection.
    before = snapshot(production_dsn)
    index = PgVectorIndex(production_dsn)
    index.add(["a", "b"], np.eye(2, dtype=np.float32))
    with psycopg.connect(production_dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'goldeval-eval'")
    with pytest.raises(psycopg.OperationalError):
        index.search(np.eye(2, dtype=np.float32), top_k=1)
    index.close()
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_list_eval_schemas_shows_goldevals_own_with_its_comment(production_dsn: str) -> None:
    with PgVectorIndex(production_dsn, prefix="goldeval_eval_listing_") as index:
        listed = dict(list_eval_schemas(production_dsn))
        assert list(listed) == [index.schema]
        assert listed[index.schema].startswith("created by goldeval (pid ")
    assert list_eval_schemas(production_dsn) == []


def test_a_closed_index_says_so(production_dsn: str) -> None:
    from goldeval.errors import GoldevalError

    index = PgVectorIndex(production_dsn)
    index.close()
    with pytest.raises(GoldevalError, match=r"pgvector index in schema 'goldeval_eval_\w+' is closed"):
        index.search(np.eye(2, dtype=np.float32), top_k=1)


def test_hnsw_returns_more_than_ef_search_rows(production_dsn: str) -> None:
    # pgvector's HNSW scan stops at hnsw.ef_search (<= 1000) rows; a deep run (top_k=1200) must
    # still get 1200 when the planner uses the index.
    rng = np.random.default_rng(5)
    vectors = unit_rows(rng, 1500, 8)
    with PgVectorIndex(production_dsn, hnsw=True) as index:
        index.add([f"p{i}" for i in range(1500)], vectors)
        index._conn.execute("SET enable_seqscan = off")  # force the index path on this small table
        got, scores = index.search(vectors[:1], top_k=1200)
    assert len(got[0]) == 1200 and len(set(got[0])) == 1200
    assert np.all(np.diff(scores[0]) <= 0)


def test_a_read_only_database_is_a_clear_error(pg_server: str) -> None:
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS replica")
        admin.execute("CREATE DATABASE replica")
        admin.execute("ALTER DATABASE replica SET default_transaction_read_only = on")
    dsn = pg_server.replace("/postgres?", "/replica?")
    with pytest.raises(InputError, match=r"the database is read-only .*\n  hint: point the DSN at the primary"):
        PgVectorIndex(dsn)


def test_pgvector_in_an_oddly_named_schema_is_used_where_it_is(pg_server: str) -> None:
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS odd")
        admin.execute("CREATE DATABASE odd")
    dsn = pg_server.replace("/postgres?", "/odd?")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "Shared Ext"')
        conn.execute('CREATE EXTENSION vector SCHEMA "Shared Ext"')
    before = snapshot(dsn)
    with PgVectorIndex(dsn) as index:
        index.add(["x", "y"], np.eye(2, dtype=np.float32))
        assert index.search(np.eye(2, dtype=np.float32)[1:], top_k=1)[0] == [["y"]]
    assert snapshot(dsn) == before


def test_dense_config_on_pgvector_records_its_schema_and_options_but_never_the_password(
    production_dsn: str, tmp_path
) -> None:
    from psycopg.conninfo import make_conninfo

    from goldeval.corpus.model import Passage
    from goldeval.retrievers.dense import DenseRetriever
    from goldeval.retrievers.encoders.function import FunctionEncoder
    from goldeval.store.workspace import Workspace

    dsn = make_conninfo(production_dsn, password="s3cret")  # the test server trusts its socket
    passages = [Passage(f"p{i}", f"p{i}", text) for i, text in enumerate(["tea", "coffee", "mug"])]
    retriever = DenseRetriever(
        passages, FunctionEncoder(_bag_of_words, name="bow64"), workspace=Workspace.at(tmp_path / ".goldeval"),
        backend="pgvector", options={"dsn": dsn, "hnsw": "true", "hnsw_m": "8", "ef_search": "40", "metric": "cosine"},
    )
    try:
        index = retriever.index
        assert isinstance(index, PgVectorIndex)
        assert (index.hnsw, index.hnsw_m, index.ef_search, index.metric) == (True, 8, 40, "cosine")
        config = retriever.config
        assert config["index"]["schema"] == index.schema and index.schema in eval_schemas(production_dsn)
        assert config["options"]["hnsw_m"] == 8 and config["options"]["create_extension"] is True
        assert "s3cret" not in json.dumps(config) and "password" not in json.dumps(config)
        assert config["options"]["dsn"] == config["index"]["dsn"]
    finally:
        retriever.close()
    assert eval_schemas(production_dsn) == []
