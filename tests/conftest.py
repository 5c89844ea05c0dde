"""Fixtures shared across test folders, defined once here so that session fixtures run once a session.

A fixture imported into several test modules is a separate fixture in each (pytest keys fixtures by
where they are defined), so the PostgreSQL server and the model's vectors would be made once per module.
"""

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
