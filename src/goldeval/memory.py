"""Memory for large jobs: the cyclic garbage collector paused while building many small Python objects, and
large arrays in small pages.

CPython's cyclic GC runs a pass every time allocations outnumber deallocations by a threshold, and a
full pass walks every object alive. Reading a golden set of 100k questions or a run of ten million
results makes millions of objects that live on (none of them cycles), so the passes walk ever more of
them, again and again: at 100k questions they cost more than the reading itself (issue 23).

numpy asks the kernel for transparent huge pages for every array of 4 MB or more (MADV_HUGEPAGE); where
the kernel then compacts memory to make them (`defrag` on `madvise`, the Debian and Ubuntu default), first
touching a few hundred MB of fresh arrays costs seconds of system time on a VM. `empty` gives an array of
SMALL_PAGES_FROM bytes or more an anonymous memory map of its own instead, filled with ordinary 4 KiB pages.
"""

from __future__ import annotations

import gc
import mmap
from collections.abc import Iterator
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
