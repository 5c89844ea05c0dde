"""Fixtures shared across test folders, defined once here so that session fixtures run once a session.

A fixture imported into several test modules is a separate fixture in each (pytest keys fixtures by
where they are defined), so the PostgreSQL server and the model's vectors would be made once per module.
"""

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

# `pytest --core` and the markers of what a test needs beyond the core install (tests/needs.py)
from api_standin import minilm  # noqa: F401
from needs import (  # noqa: F401
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_ignore_collect,
    pytest_terminal_summary,
)
from pg_fixtures import bare_dsn, minilm_cranfield, pg_server, production_dsn  # noqa: F401

CHECKOUT = Path(__file__).resolve().parents[1]
WORKSPACE_BEFORE = (CHECKOUT / ".goldeval").exists()
"""Whether the checkout had a workspace when the session began (`make demo` run in it makes one)."""


@pytest.fixture(autouse=True)
def workspace_of_its_own(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test's commands run without --workspace use a fresh folder of the test's (`$GOLDEVAL_WORKSPACE`,
    which subprocesses inherit), not `.goldeval` in the folder pytest runs from: that was the checkout, whose
    history and stored runs then grew with every run of the suite and carried over from test to test. A test
    of the default itself removes the variable. Fails a test that still wrote a workspace into the checkout
    (where the checkout had none: `make demo` run in it makes one)."""
    monkeypatch.setenv("GOLDEVAL_WORKSPACE", str(tmp_path_factory.mktemp("workspace")))
    yield
    made = CHECKOUT / ".goldeval"
    if not WORKSPACE_BEFORE and made.exists():
        shutil.rmtree(made)
        pytest.fail(f"the test wrote a workspace into the checkout ({made}): pass --workspace, or run it in tmp_path")
