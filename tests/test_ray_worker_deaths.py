"""A Ray worker that dies mid-sweep (killed by Ray's memory monitor on a loaded machine, or by anyone) is
rerun, and one that keeps dying is one clear error, never an internal error (issue 20; issue 17 saw Ray's
memory monitor kill two workers of a sweep on a loaded 2-core machine)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from goldeval.errors import GoldevalError
from goldeval.sweep import RayExecutor

pytestmark = pytest.mark.ray  # real Ray workers, killed on purpose


def dies_once(marker: str, value: int) -> int:
    """Kills its own worker process the first time it runs for `value`; squares `value` after that."""
    path = Path(marker) / f"{value}.died"
    if not path.exists():
        path.write_text("x")
        os._exit(1)
    return value * value


def always_dies(value: int) -> int:
    os._exit(1)


def refuses(value: int) -> int:
    raise ValueError(f"no square for {value}")


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory):
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    ray = RayExecutor(workers=2, workspace=tmp_path_factory.mktemp("ws"))
    yield ray
    ray.close()


def test_a_worker_that_dies_is_rerun_and_the_results_are_whole(executor: RayExecutor, tmp_path: Path) -> None:
    assert executor.map(dies_once, [(str(tmp_path), v) for v in range(4)]) == [0, 1, 4, 9]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.died", "1.died", "2.died", "3.died"]  # each died once


def test_a_worker_that_keeps_dying_is_one_clear_error(executor: RayExecutor) -> None:
    with pytest.raises(GoldevalError, match=r"a Ray worker running always_dies died 4 times .*fewer --workers"):
        executor.map(always_dies, [(1,)])


def test_an_error_the_function_raises_is_itself_and_not_retried(executor: RayExecutor) -> None:
    with pytest.raises(ValueError, match="no square for 3"):
        executor.map(refuses, [(3,)])


def test_done_hears_of_every_result_even_of_a_rerun_task(executor: RayExecutor, tmp_path: Path) -> None:
    # the sweep's embedding stage reports its progress through `done` (issue 19)
    heard: list[int] = []
    assert executor.map(dies_once, [(str(tmp_path), v) for v in range(5)], done=heard.append) == [0, 1, 4, 9, 16]
    assert sorted(heard) == [0, 1, 4, 9, 16]
    with pytest.raises(ValueError, match="no square for 3"):  # an error still comes out as itself
        executor.map(refuses, [(3,)], done=heard.append)
