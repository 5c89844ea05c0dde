"""PostgreSQL + pgvector backend: isolation guard, cleanup, and whole evaluations on the real model.

Every test here runs against a real throwaway server (tests/pg_fixtures.py) over a real psycopg
connection, with the default model's 384-dimension vectors (minilm, of Cranfield titles and
questions); nothing is mocked. Search against numpy is tests/test_pgvector_search.py.
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
    from pg_fixtures import DIM, Embedded, eval_schemas, snapshot
except ImportError:  # pragma: no cover
    from tests.golden_factory import make_golden
    from tests.pg_fixtures import DIM, Embedded, eval_schemas, snapshot

pytestmark = [pytest.mark.postgres, pytest.mark.models]


def two(data: Embedded) -> np.ndarray:
    """Two real passage vectors (Cranfield documents 1 and 2, different titles)."""
    return data.vectors[:2]


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
        make_index("pgvector", DIM, options)
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
        make_index("pgvector", DIM, {"backend": "pgvector"})
    dsn = "postgresql://alice:s3cret@/db?host=/nonexistent-socket-dir"
    with pytest.raises(InputError, match=r"cannot connect to PostgreSQL at .*user=alice") as info:
        PgVectorIndex(dsn)
    assert "s3cret" not in str(info.value)


# --- cleanup: drop exactly what was created, never anything else ---------------------------------


def test_cleanup_on_exception_leaves_the_database_as_it_was(production_dsn: str, minilm_cranfield: Embedded) -> None:
    before = snapshot(production_dsn)
    with pytest.raises(RuntimeError, match="encoder crashed"), PgVectorIndex(production_dsn) as index:
        index.add(["a", "b"], two(minilm_cranfield))
        assert index.schema in eval_schemas(production_dsn)
        raise RuntimeError("encoder crashed")
    assert index.closed
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_extension_is_created_in_goldevals_schema_and_dropped(bare_dsn: str, minilm_cranfield: Embedded) -> None:
    before = snapshot(bare_dsn)
    assert [e[0] for e in before["extensions"]] == ["plpgsql"]
    index = PgVectorIndex(bare_dsn)
    with psycopg.connect(bare_dsn, autocommit=True) as conn:
        where = conn.execute(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'vector'"
        ).fetchone()
    assert where == (index.schema,)
    index.add(["x", "y"], two(minilm_cranfield))
    assert index.search(two(minilm_cranfield)[:1], top_k=1)[0] == [["x"]]
    index.close()
    index.close()  # idempotent
    assert snapshot(bare_dsn) == before


def test_without_permission_to_create_the_extension_it_says_how(bare_dsn: str) -> None:
    before = snapshot(bare_dsn)
    with pytest.raises(InputError, match=r"pgvector is installed on the server but not enabled"):
        PgVectorIndex(bare_dsn, create_extension=False)
    assert snapshot(bare_dsn) == before  # the schema it had created was dropped again


def test_a_foreign_object_in_goldevals_schema_is_never_cascaded(production_dsn: str, minilm_cranfield: Embedded) -> None:
    index = PgVectorIndex(production_dsn)
    index.add(["a"], two(minilm_cranfield)[:1])
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


def test_evaluation_leaves_production_byte_identical(production_dsn: str, minilm_cranfield: Embedded) -> None:
    before = snapshot(production_dsn)
    assert before["data"]["public.products"][0] == 4
    assert ("public", "products", "embedding", "USER-DEFINED", "vector") in before["columns"]
    data = minilm_cranfield  # the production table's model and dimension (384)
    for hnsw in (False, True):
        index = make_index("pgvector", DIM, {"backend": "pgvector", "dsn": production_dsn, "hnsw": str(hnsw)})
        assert isinstance(index, PgVectorIndex) and index.hnsw is hnsw
        with index:
            assert index.schema.startswith("goldeval_eval_")
            index.add(data.ids, data.vectors)
            got, scores = index.search(data.vectors[:20], top_k=5)
            assert [row[0] for row in got] == data.ids[:20]  # each title finds itself (the first 20 are unique)
            np.testing.assert_allclose(scores[:, 0], 1.0, atol=1e-6)
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


def test_full_evaluation_on_pgvector_matches_exact_and_leaves_production_identical(
    production_dsn: str, minilm_cranfield: Embedded
) -> None:
    from goldeval.evaluation import evaluate
    from goldeval.retrievers.dense import DenseRetriever

    data = minilm_cranfield  # dense:minilm on 1400 Cranfield titles, 40 Cranfield questions and their judgments
    before = snapshot(production_dsn)
    exact = DenseRetriever(data.corpus.passages(), data.encoder, workspace=data.workspace, name="dense:exact")
    on_pg = DenseRetriever(data.corpus.passages(), data.encoder, workspace=data.workspace, backend="pgvector",
                           options={"dsn": production_dsn}, name="dense:pg")
    try:
        assert isinstance(on_pg.index, PgVectorIndex) and on_pg.index.dim == DIM
        assert on_pg.index.schema in eval_schemas(production_dsn)
        card = evaluate({"exact": exact, "pgvector": on_pg}, data.golden, corpus=data.corpus, k=(1, 10, 100),
                        depth=100)
    finally:
        on_pg.close()
        exact.close()

    assert snapshot(production_dsn) == before
    assert eval_schemas(production_dsn) == []
    by_name = {r.name: r for r in card.retrievers}
    assert by_name["pgvector"].metrics == pytest.approx(by_name["exact"].metrics, abs=1e-9)
    assert by_name["pgvector"].metrics[parse_metric("ndcg@10")] > 0.1  # a real model on real questions
    for q_exact, q_pg in zip(by_name["exact"].questions, by_name["pgvector"].questions, strict=True):
        assert [h.id for h in q_pg.top] == [h.id for h in q_exact.top]
        assert q_pg.rank == q_exact.rank and q_pg.error is None


def test_spec_dense_minilm_on_pgvector_cleans_up_when_evaluate_returns(production_dsn: str,
                                                                        minilm_cranfield: Embedded) -> None:
    # The user's path: `--retriever dense:minilm?backend=pgvector --dsn ...`, a real model from
    # site-packages. evaluate() builds the retriever itself; its schema must be gone when it returns.
    from goldeval.corpus.model import Corpus, Document
    from goldeval.evaluation import evaluate

    corpus = Corpus({d: Document(d, text) for d, text in _DOCS.items()}, name="kitchen")
    golden = make_golden(_QUESTIONS)
    before = snapshot(production_dsn)
    card = evaluate(
        ["dense:minilm?backend=pgvector", "dense:minilm"], golden, corpus=corpus, k=(1, 3),
        workspace=minilm_cranfield.workspace.root, options={"dsn": production_dsn, "progress": False},
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


def test_cli_eval_with_backend_pgvector(production_dsn: str, minilm_cranfield: Embedded, tmp_path, capsys) -> None:
    from goldeval.cli import main

    corpus, golden = _write_kitchen(tmp_path)
    before = snapshot(production_dsn)
    common = ["eval", "--corpus", corpus, "--golden", golden, "--retriever", "dense:minilm", "--quiet",
              "--workspace", str(minilm_cranfield.workspace.root), "--index", "pgvector", "--dsn", production_dsn]
    assert main([*common, "--json", str(tmp_path / "card.json")]) == 0
    assert (tmp_path / "card.json").exists()
    capsys.readouterr()
    # The guard from the command line: exit 2 (bad input) with the reason and the fix.
    assert main([*common, "--option", "schema=public"]) == 2
    err = capsys.readouterr().err
    assert "refusing to write to schema 'public'" in err and "leave the schema option out" in err
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_cleanup_survives_a_terminated_session(production_dsn: str, minilm_cranfield: Embedded) -> None:
    # The server ends goldeval's session mid-evaluation (restart, admin, network): the search fails
    # loudly, and close() still drops the schema over a fresh connection.
    before = snapshot(production_dsn)
    index = PgVectorIndex(production_dsn)
    index.add(["a", "b"], two(minilm_cranfield))
    with psycopg.connect(production_dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'goldeval-eval'")
    with pytest.raises(psycopg.OperationalError):
        index.search(two(minilm_cranfield), top_k=1)
    index.close()
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_list_eval_schemas_shows_goldevals_own_with_its_comment(production_dsn: str) -> None:
    with PgVectorIndex(production_dsn, prefix="goldeval_eval_listing_") as index:
        listed = dict(list_eval_schemas(production_dsn))
        assert list(listed) == [index.schema]
        assert listed[index.schema].startswith("created by goldeval (pid ")
    assert list_eval_schemas(production_dsn) == []


def test_a_closed_index_says_so(production_dsn: str, minilm_cranfield: Embedded) -> None:
    from goldeval.errors import GoldevalError

    index = PgVectorIndex(production_dsn)
    index.close()
    with pytest.raises(GoldevalError, match=r"pgvector index in schema 'goldeval_eval_\w+' is closed"):
        index.search(two(minilm_cranfield), top_k=1)


def test_a_read_only_database_is_a_clear_error(pg_server: str) -> None:
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS replica")
        admin.execute("CREATE DATABASE replica")
        admin.execute("ALTER DATABASE replica SET default_transaction_read_only = on")
    dsn = pg_server.replace("/postgres?", "/replica?")
    with pytest.raises(InputError, match=r"the database is read-only .*\n  hint: point the DSN at the primary"):
        PgVectorIndex(dsn)


def test_pgvector_in_an_oddly_named_schema_is_used_where_it_is(pg_server: str, minilm_cranfield: Embedded) -> None:
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS odd")
        admin.execute("CREATE DATABASE odd")
    dsn = pg_server.replace("/postgres?", "/odd?")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "Shared Ext"')
        conn.execute('CREATE EXTENSION vector SCHEMA "Shared Ext"')
    before = snapshot(dsn)
    with PgVectorIndex(dsn) as index:
        index.add(["x", "y"], two(minilm_cranfield))
        assert index.search(two(minilm_cranfield)[1:], top_k=1)[0] == [["y"]]
    assert snapshot(dsn) == before


def test_dense_config_on_pgvector_records_its_schema_and_options_but_never_the_password(
    production_dsn: str, minilm_cranfield: Embedded
) -> None:
    from psycopg.conninfo import make_conninfo

    from goldeval.corpus.model import Passage
    from goldeval.retrievers.dense import DenseRetriever

    dsn = make_conninfo(production_dsn, password="s3cret")  # the test server trusts its socket
    passages = [Passage(f"p{i}", f"p{i}", text) for i, text in enumerate(["tea", "coffee", "mug"])]
    retriever = DenseRetriever(
        passages, minilm_cranfield.encoder, workspace=minilm_cranfield.workspace,
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
