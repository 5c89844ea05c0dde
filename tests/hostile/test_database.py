"""Class 6: leftovers in the user's database. An evaluation on pgvector stopped by SIGTERM, SIGHUP or
Ctrl+C drops its eval schema like one that ends normally; a process killed outright (`kill -9`)
leaves one, which the next run names and `goldeval pg cleanup` drops, and nothing else: not a schema
goldeval did not mark, not one a running evaluation holds, not one the user put a table into.
The user's tables are compared before and after, row identity included (tests/pg_fixtures.py); the
vectors are the real model's (minilm, 384 dimensions), as the production table's are.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg
import pytest
from hostile_cases import EVAL, HANGS_ENTERED, Outcome, assert_clean, assert_refused

from hang_guard import HANG_GUARD, wait_until
from pg_fixtures import Embedded, eval_schemas, snapshot

pytestmark = pytest.mark.postgres

KILLED = """
import os, sys
import numpy as np
from goldeval.retrievers.backends.pgvector import PgVectorIndex
index = PgVectorIndex(sys.argv[1])
index.add(["a", "b"], np.load(sys.argv[2]))
os.kill(os.getpid(), 9)
"""


def _leave_one(dsn: str, data: Embedded, tmp_path: Path) -> str:
    """What `kill -9` mid-evaluation leaves: a real eval schema, marked as goldeval's, unlocked."""
    before = set(eval_schemas(dsn))
    vectors = tmp_path / "two.npy"
    np.save(vectors, data.vectors[:2])
    done = subprocess.run([sys.executable, "-c", KILLED, dsn, str(vectors)], capture_output=True, timeout=HANG_GUARD)
    assert done.returncode == -signal.SIGKILL, done.stderr
    (left,) = set(eval_schemas(dsn)) - before
    return left


@pytest.mark.models
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_during_a_pgvector_evaluation_drops_its_schema(inputs: Path, production_dsn: str,
                                                                signum: signal.Signals) -> None:
    before = snapshot(production_dsn)
    args = [*EVAL, "--retriever", "dense:minilm", "--index", "pgvector", "--dsn", production_dsn,
            "--retriever", "search:hangs", "--timeout", str(HANG_GUARD)]
    proc = subprocess.Popen([sys.executable, "-m", "goldeval", *args], cwd=inputs, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "GOLDEVAL_NO_HISTORY": "1", "PYTHONPATH": str(inputs)})
    try:
        # not a sleep (issue 17): the run says it is inside the hanging function, after dense's searches
        wait_until((inputs / HANGS_ENTERED).exists, "the run is inside the hanging search function", proc=proc)
        assert eval_schemas(production_dsn), "the eval schema is gone before the signal: nothing left to test"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_clean(Outcome(proc.returncode, out, err), 128 + signum)
    assert ("goldeval: interrupted" if signum == signal.SIGINT else f"goldeval: stopped by {signum.name}") in err
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_kill_9_leaves_a_schema_that_the_next_run_names_and_cleanup_drops(production_dsn: str,
                                                                          minilm_cranfield: Embedded,
                                                                          cli: Callable[..., Outcome],
                                                                          capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    from goldeval.retrievers.backends.pgvector import PgVectorIndex

    before = snapshot(production_dsn)
    left = _leave_one(production_dsn, minilm_cranfield, tmp_path)
    with PgVectorIndex(production_dsn) as index:  # the next evaluation
        assert index.schema != left
    assert f"left in this database by earlier runs that were killed: {left}" in capsys.readouterr().err
    listed = cli("pg", "list", "--dsn", production_dsn)
    assert_clean(listed, 0)
    assert f"{left}  leftover (goldeval pg cleanup drops it)" in listed.out
    assert "password" not in listed.out
    dry = cli("pg", "cleanup", "--dsn", production_dsn, "--dry-run")
    assert_clean(dry, 0)
    assert f"would drop 1 leftover schema(s): {left}" in dry.out and eval_schemas(production_dsn) == [left]
    assert_clean(cli("pg", "cleanup", "--dsn", production_dsn), 0)
    assert eval_schemas(production_dsn) == []
    assert snapshot(production_dsn) == before


def test_cleanup_drops_only_goldevals_own_unused_schemas(production_dsn: str,
                                                         minilm_cranfield: Embedded,
                                                         cli: Callable[..., Outcome], tmp_path: Path) -> None:
    from goldeval.retrievers.backends.pgvector import PgVectorIndex

    mine = _leave_one(production_dsn, minilm_cranfield, tmp_path)
    with psycopg.connect(production_dsn, autocommit=True) as admin:
        admin.execute("CREATE SCHEMA goldeval_eval_by_hand")  # same prefix, never marked by goldeval
        admin.execute("CREATE TABLE goldeval_eval_by_hand.notes (x int)")
        admin.execute("INSERT INTO goldeval_eval_by_hand.notes VALUES (1)")
    with_user_table = _leave_one(production_dsn, minilm_cranfield, tmp_path)
    with psycopg.connect(production_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE TABLE "{with_user_table}".kept (x int)')  # someone put their own table in it
    before = snapshot(production_dsn)
    with PgVectorIndex(production_dsn) as running:  # held by a running evaluation (another session)
        outcome = cli("pg", "cleanup", "--dsn", production_dsn)
        assert_clean(outcome, 1)  # something could not be dropped: said, and exit 1
        assert f"dropped 1 leftover schema(s): {mine}" in outcome.out
        assert "kept goldeval_eval_by_hand: not marked as created by goldeval" in outcome.err
        assert f"kept {running.schema}: in use by a running evaluation" in outcome.err
        assert f"kept {with_user_table}: holds objects goldeval did not create" in outcome.err
        running.add(["x"], minilm_cranfield.vectors[2:3])
        found, _ = running.search(minilm_cranfield.vectors[2:3], top_k=1)
        assert found == [["x"]]  # the running evaluation is unharmed
    after = snapshot(production_dsn)
    assert [s for s in before["schemas"] if s[0] != mine] == after["schemas"]
    assert {k: v for k, v in before["data"].items() if not k.startswith(mine)} == after["data"]
    with psycopg.connect(production_dsn, autocommit=True) as admin:  # leave the database as we found it
        admin.execute("DROP SCHEMA goldeval_eval_by_hand CASCADE")
        admin.execute(f'DROP SCHEMA "{with_user_table}" CASCADE')


def test_cleanup_of_an_unreachable_database_is_one_error(cli: Callable[..., Outcome]) -> None:
    outcome = cli("pg", "cleanup", "--dsn", "postgresql://nobody:s3cret@/nowhere?host=/nonexistent-socket-dir")
    assert_refused(outcome, "cannot connect to PostgreSQL")
    assert "s3cret" not in outcome.err
