"""`goldeval.memory.small_pages_only`: numpy's huge-page request off while a command or an evaluation runs,
and back as it was afterwards, whatever it was and however the block ends."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pytest

import goldeval
from goldeval import cli
from goldeval.memory import _hugepage_switch, small_pages_only

MB = 1 << 20
MULTIARRAY = (getattr(np, "_core", None) or np.core).multiarray  # numpy 2 moved it; 1.26 is supported too


def hugepage_request() -> bool:
    return bool(MULTIARRAY._get_madvise_hugepage())


@pytest.fixture
def restored() -> object:
    before = hugepage_request()
    yield
    MULTIARRAY._set_madvise_hugepage(before)


@pytest.mark.parametrize("start", [True, False])
def test_off_inside_and_back_as_it_was(restored: object, start: bool) -> None:
    MULTIARRAY._set_madvise_hugepage(start)
    with small_pages_only():
        assert hugepage_request() is False
        with small_pages_only():  # nested: still off, and the outer block's setting survives the inner one
            assert hugepage_request() is False
        assert hugepage_request() is False
    assert hugepage_request() is start


def test_back_as_it_was_when_the_block_fails(restored: object) -> None:
    MULTIARRAY._set_madvise_hugepage(True)
    with pytest.raises(KeyError), small_pages_only():
        raise KeyError("boom")
    assert hugepage_request() is True


def _anon_huge_kb(values: np.ndarray) -> int:
    """AnonHugePages (kB) of the mappings holding `values`' data, from /proc/self/smaps (numpy's request
    splits an array's mapping where its 2 MB-aligned part starts)."""
    low, high = values.ctypes.data, values.ctypes.data + values.nbytes
    total, found = 0, False
    for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", Path("/proc/self/smaps").read_text()):
        start, end = (int(x, 16) for x in block.split(None, 1)[0].split("-"))
        if start < high and low < end:
            found = True
            total += int(re.search(r"AnonHugePages:\s+(\d+) kB", block).group(1))  # type: ignore[union-attr]
    assert found, "no mapping holds the array"
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux's /proc tells a mapping's huge pages")
def test_an_array_made_inside_has_no_huge_pages(restored: object) -> None:
    MULTIARRAY._set_madvise_hugepage(True)
    with small_pages_only():
        values = np.ones(256 * MB // 8)  # 256 MB, far above numpy's 4 MB threshold for asking
        assert _anon_huge_kb(values) == 0


def test_every_command_and_evaluate_run_without_huge_pages(restored: object, tmp_path: Path) -> None:
    MULTIARRAY._set_madvise_hugepage(True)
    seen: list[bool] = []
    args = argparse.Namespace(func=lambda _: seen.append(hugepage_request()) or 0, json=None)
    assert cli._command(args) == 0
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "q1", "question": "what", "expected": ["d1"]}\n', encoding="utf-8")

    def search(question: str, k: int) -> list[str]:
        seen.append(hugepage_request())
        return ["d1"]

    card = goldeval.evaluate(search, golden, k=1)
    assert card.retrievers[0].metrics  # it evaluated
    assert seen == [False, False] and hugepage_request() is True


def test_the_switch_is_numpys_own() -> None:
    assert _hugepage_switch() is MULTIARRAY._set_madvise_hugepage


def test_a_sweep_stage_on_a_ray_worker_runs_without_huge_pages(restored: object) -> None:
    # what the Ray executor runs on the worker for every stage (`RayExecutor.map`); tests/test_sweep_ray*.py run it
    from goldeval.sweep.distributed import in_small_pages

    MULTIARRAY._set_madvise_hugepage(True)
    assert in_small_pages(lambda a, b: (a + b, hugepage_request()), 2, 3) == (5, False)
    assert hugepage_request() is True
