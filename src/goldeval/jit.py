"""numba kernels compiled once per machine: goldeval's one place that compiles and caches them.

numba is optional (extra `fast`): every kernel has a numpy twin giving the same results, and
`compiled` returns None without numba. `GOLDEVAL_NUMBA=0` in the environment switches numba off (the
tests compare the two paths that way; it is also the way out should a numba release misbehave),
`GOLDEVAL_NUMBA=1` uses it for every job, however small.

Loading numba costs about half a second to a second once per process (its import, and its start-up on
the first call: type registries, LLVM), more than a small job takes in numpy. A job that says its size
(`nbytes`, e.g. the bytes of the TREC files it reads) therefore gets numba only once it pays: numba is
already loaded in the process, or this job and those this process ran in numpy before it (`record`)
reach `LOAD_BYTES`. That is the ski-rental rule (rent until the rent paid would have bought): one
`goldeval trec` on small files never loads numba, a large one loads it at once, and a session that
evaluates many medium files loads it once their total repays it, never paying more than twice the best
choice made knowing the future.

Compiling a kernel takes seconds, so the machine code is cached on disk and a second process loads
it instead, from the user cache (`goldeval.usercache`: `$GOLDEVAL_CACHE/numba`, else
`$XDG_CACHE_HOME/goldeval/numba`, by default `~/.cache/goldeval/numba`): once per machine, not once per
project folder (issue 19). numba's own `cache=True` would write next to the installed package, often
read-only, or wherever the global `NUMBA_CACHE_DIR` says; here the folder is set per kernel. If the
folder cannot be written the kernel is compiled in memory, each process compiling it again.

Inside `numba/`, each kernel's code has a folder of its own per install (`kernel_folder`): its module's
name and a fingerprint of what makes compiled code incompatible (`compatibility`: numba's version,
goldeval's, Python's ABI tag, the CPU numba compiles for, the kernel's source file). numba keeps one index
per kernel name and throws away an index written by another numba or from other source, so two installs
sharing one folder (two virtual environments, two goldeval versions, a home folder shared by two machines)
recompiled over each other's code on every alternate run; now each keeps its own, and two installs of the
same code on the same machine share one. numba's check of the source against the index is the file's
content (`source_stamp`), whatever numba's version (older ones compared its modification time).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goldeval.fingerprint import file_fingerprint, fingerprint
from goldeval.usercache import user_cache

ENV_SWITCH = "GOLDEVAL_NUMBA"
"""`GOLDEVAL_NUMBA=0`: never use numba, even when installed; `1`: use it whatever the job's size."""
LOAD_BYTES = 96 << 20
"""Job size (bytes of input) from which numba is loaded when it is not loaded yet. Measured with
`goldeval trec` in fresh processes: loading costs 0.5-1 s, the compiled TREC reader and join save about
8 ms per MB over numpy, so they break even near 100 MB (a run of about 2M lines); below, numpy is faster
(trec_eval's own test files: 0.4 s in numpy, 1.3 s with numba's loading)."""

_LOCK = threading.Lock()
_KERNELS: dict[tuple[Callable[..., Any], str], Any] = {}
_FOLDERS: dict[Callable[..., Any], str] = {}
"""Each kernel's folder name (`kernel_folder`): its compatibility fingerprint, worked out once per process."""
_SPENT = [0]
"""Bytes of input this process has processed in numpy while numba could have been loaded (`record`)."""


def available() -> bool:
    """Whether numba kernels can be used (installed, and not switched off): without importing numba."""
    return os.environ.get(ENV_SWITCH, "") != "0" and importlib.util.find_spec("numba") is not None


def wanted(nbytes: int) -> bool:
    """Whether a job over `nbytes` of input should use numba: when available, and forced, or already
    loaded in this process, or this job and the numpy work recorded before it reach `LOAD_BYTES`.
    The later steps of a job ask with nbytes 0 (use numba if loaded): its bytes are counted once."""
    if not available():
        return False
    return os.environ.get(ENV_SWITCH) == "1" or "numba" in sys.modules or _SPENT[0] + nbytes >= LOAD_BYTES


def record(nbytes: int) -> None:
    """Count a job of `nbytes` done in numpy because numba was not worth loading yet (see `wanted`)."""
    if available():
        with _LOCK:
            _SPENT[0] += nbytes


def prepare(nbytes: int) -> None:
    """Load numba now if a job of `nbytes` wants it: the smaller steps of that job then use it too
    (e.g. the qrels read before a large run)."""
    if wanted(nbytes):
        import numba  # noqa: F401


def cache_folder() -> Path:
    """Where compiled code is kept: `numba/` in the user cache (read at call time); each kernel's in its
    own folder in it, `kernel_folder`."""
    return user_cache() / "numba"


def kernel_folder(py_func: Callable[..., Any]) -> Path:
    """The folder of `cache_folder()` holding `py_func`'s compiled code: its module's name and the first 16
    hex digits of the fingerprint of `compatibility(py_func)` (worked out once per process)."""
    with _LOCK:
        if py_func not in _FOLDERS:
            module = py_func.__module__.rsplit(".", 1)[-1]
            _FOLDERS[py_func] = f"{module}-{fingerprint(compatibility(py_func), length=16)}"
        name = _FOLDERS[py_func]
    return cache_folder() / name


def compatibility(py_func: Callable[..., Any]) -> dict[str, str]:
    """What compiled code of `py_func` is only good for: numba's version, goldeval's (the kernel's helpers and
    constants from other modules change with it), Python's ABI tag, the CPU numba compiles for (target,
    name, features: what numba records with each compiled signature), and the content of the kernel's
    source file. Imports numba: called when compiling."""
    import numba

    return {"numba": numba.__version__, "goldeval": _version(), "python": sys.implementation.cache_tag,
            "cpu": _cpu(), "source": source_stamp(py_func.__code__.co_filename)}


@functools.cache
def source_stamp(path: str) -> str:
    """The fingerprint of a kernel's source file ("" for code with no file, which numba does not cache)."""
    return file_fingerprint(Path(path)) if Path(path).is_file() else ""


def _version() -> str:
    try:
        return importlib.metadata.version("goldeval")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _cpu() -> str:
    """The target, CPU name and features numba compiles for (`NUMBA_CPU_NAME` and `NUMBA_CPU_FEATURES`
    included), as numba's code generator says them; the host's as llvmlite sees it should numba move that."""
    try:
        from numba.core.registry import cpu_target

        return " ".join(cpu_target.target_context.codegen().magic_tuple())
    except Exception:  # noqa: BLE001 - pragma: no cover - numba's internals moved
        import platform

        from llvmlite import binding

        return f"{platform.machine()} {binding.get_host_cpu_name()} {binding.get_host_cpu_features().flatten()}"


def compiled(py_func: Callable[..., Any], *, nbytes: int | None = None) -> Any:
    """`py_func` compiled by numba (nopython, releasing the GIL), its machine code cached in
    `cache_folder()`; None without numba, or for a job of `nbytes` too small to load numba
    for (see `wanted`; without nbytes, numba is used whenever available). Compiled on its first call,
    once per process and cache folder (thread-safe), loaded from the folder when an earlier process
    compiled it."""
    if not (available() if nbytes is None else wanted(nbytes)):
        return None
    key = (py_func, str(cache_folder()))
    with _LOCK:
        kernel = _KERNELS.get(key)
    if kernel is None:
        folder = kernel_folder(py_func)
        with _LOCK:
            if key not in _KERNELS:
                _KERNELS[key] = _compile(py_func, folder)
            kernel = _KERNELS[key]
    return kernel


def _compile(py_func: Callable[..., Any], folder: Path) -> Any:
    import numba

    kernel = numba.njit(nogil=True, cache=False)(py_func)
    cache = _folder_cache(py_func, folder)
    if cache is not None:  # what Dispatcher.enable_caching sets, with a locator of ours
        kernel._cache = cache  # type: ignore[attr-defined]
    return kernel


def _folder_cache(py_func: Callable[..., Any], folder: Path) -> Any:
    """A numba FunctionCache writing to `folder` (not next to the source file, nor via a global setting)."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba moved its cache classes
        return None
    base = getattr(caching, "UserProvidedCacheLocator", None) or getattr(caching, "_UserProvidedCacheLocator", None)
    if base is None:  # pragma: no cover
        return None

    class FolderLocator(base):  # type: ignore[misc, valid-type]
        def __init__(self, func: Any, py_file: str) -> None:
            super().__init__(func, py_file)
            self._cache_path = str(folder)

        def get_source_stamp(self) -> str:  # the content, not the modification time (see the module's doc)
            return source_stamp(self._py_file)

        @classmethod
        def from_function(cls, func: Any, py_file: str) -> Any:
            locator = cls(func, py_file)
            try:
                locator.ensure_cache_path()
            except OSError:
                return None
            return locator

    class FolderImpl(caching.CompileResultCacheImpl):  # type: ignore[misc, name-defined]
        _locator_classes = [FolderLocator]

    class FolderCache(caching.FunctionCache):  # type: ignore[misc, name-defined]
        _impl_class = FolderImpl

    try:
        return FolderCache(py_func)
    except RuntimeError:  # no locator: the folder cannot be written; compile in memory only
        return None
