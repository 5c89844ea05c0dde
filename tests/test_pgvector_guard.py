"""The eval-namespace guard of the PostgreSQL backend, without a server."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from goldeval.errors import InputError
from goldeval.store.pg_guard import check_eval_namespace, new_eval_schema


def test_new_schema_names_are_unique_timestamped_eval_namespaces() -> None:
    when = datetime(2026, 11, 30, 4, 5, 6, tzinfo=UTC)
    names = {new_eval_schema(now=when) for _ in range(50)}
    assert len(names) == 50
    for name in names:
        assert re.fullmatch(r"goldeval_eval_20261130040506_[0-9a-f]{8}", name)
    assert new_eval_schema("goldeval_eval_ci_", now=when).startswith("goldeval_eval_ci_20261130040506_")


@pytest.mark.parametrize(
    "name",
    ["public", "app", "pg_catalog", "information_schema", "goldeval_eval", "goldeval_evalx", "GOLDEVAL_EVAL_x",
     "goldeval_eval_a-b", 'goldeval_eval_"x"', "goldeval_eval_x.y", " goldeval_eval_x", ""],
)
def test_anything_but_an_eval_namespace_is_refused(name: str) -> None:
    with pytest.raises(InputError, match=r"refusing to write to schema .*only writes to eval namespaces") as info:
        check_eval_namespace(name)
    assert info.value.value == name
    assert "leave the schema option out" in (info.value.hint or "")


def test_names_postgres_would_truncate_are_refused() -> None:
    with pytest.raises(InputError, match=r"is 64 characters; PostgreSQL truncates names past 63"):
        check_eval_namespace("goldeval_eval_" + "x" * 50)  # the rename made the prefix one longer
    assert check_eval_namespace("goldeval_eval_" + "x" * 49) == "goldeval_eval_" + "x" * 49
