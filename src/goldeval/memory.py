"""Memory for large jobs: the cyclic garbage collector paused while building many small Python objects, and
large arrays in small pages.

CPython's cyclic GC runs a pass every time allocations outnumber deallocations by a threshold, and a
full pass walks every object alive. Reading a golden set of 100k questions or a run of ten million
results makes millions of objects that live on (none of them cycles), so the passes walk ever more of
them, again and again: at 100k questions they cost more than the reading itself (issue 23).

numpy asks the kernel for transparent huge pages for every array of 4 MB or more (MADV_HUGEPAGE); where
the kernel then compacts memory to make them (`defrag` on `madvise`, the Debian and Ubuntu default), or takes
them from free memory a VM's host has taken back (free page reporting hands back 2 MB blocks, exactly what a
huge page needs), first touching fresh arrays costs seconds of system time per GB: 2-8 s on the shared VM,
against 0.3 s in ordinary pages (`python -m bench eval`, `memory_price`). `small_pages_only` turns numpy's
request off while a command runs (every goldeval command, and `evaluate`); `empty` gives an array of
SMALL_PAGES_FROM bytes or more an anonymous memory map of its own, in ordinary 4 KiB pages whoever runs it.
"""

from __future__ import annotations

import gc
import mmap
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

SMALL_PAGES_FROM = 32 << 20
"""Bytes from which `empty` maps an array of its own (`small_pages`). A smaller one is numpy's array, whose
memory the allocator hands back to the next one in the same process without faulting it in again: with every
column of a TREC file mapped, `goldeval trec` on a 10k-question run took twice the system time when called
again in a process (0.035 -> 0.075 CPU s); huge-page compaction costs where arrays are hundreds of MB (a
100k-question run's columns, the curves' 80 MB of values at every k)."""


def empty(shape: int | tuple[int, ...], dtype: np.dtype | type = np.float64) -> np.ndarray:
    """`np.empty(shape, dtype)`, in small pages of its own from SMALL_PAGES_FROM bytes (`small_pages`)."""
    dims = (shape,) if isinstance(shape, int) else shape
    count = int(np.prod(dims))
    if count * np.dtype(dtype).itemsize < SMALL_PAGES_FROM:
        return np.empty(dims, dtype=dtype)
    return small_pages(count, np.dtype(dtype)).reshape(dims)


def small_pages(n: int, dtype: np.dtype) -> np.ndarray:
    """An uninitialised array of `n` items in an anonymous memory map of its own, which the kernel fills with
    ordinary 4 KiB pages as it is written: faulting in the 400 MB of columns of a 100k-question run cost
    `goldeval eval` 2-3 CPU s of system time on a VM in huge pages, against 0.4 s in small pages (issue 23).
    The map is private where the platform says so (POSIX): plain anonymous memory, where Python's default, a shared
    map, is the kernel's shared memory (its own page cache and accounting, for nothing)."""
    size = max(n * np.dtype(dtype).itemsize, 1)
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE) if hasattr(mmap, "MAP_PRIVATE") else mmap.mmap(-1, size)
    return np.frombuffer(memory, dtype=dtype, count=n)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small objects: its full passes over large runs cost
    more than the work itself. Restored on exit, so no global setting leaks."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def small_pages_only() -> Iterator[None]:
    """numpy's arrays made inside in ordinary 4 KiB pages: numpy's MADV_HUGEPAGE request off, and back as it
    was on exit (it is process-wide while it lasts). At 1M questions `goldeval eval` spent tens of system
    seconds making huge pages; at 100k its scoring 0.36 s of system CPU, 0.17 s without them. Where numpy has no
    such switch (it is not public API: `numpy._core.multiarray._set_madvise_hugepage`), nothing changes."""
    switch = _hugepage_switch()
    if switch is None:
        yield
        return
    before = switch(False)
    try:
        yield
    finally:
        switch(before)


def _hugepage_switch() -> Callable[[bool], bool] | None:
    """numpy's setter of its MADV_HUGEPAGE request (returns the setting it replaces), or None."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    switch = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    return switch if callable(switch) else None
