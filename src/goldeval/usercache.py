"""Where the per-user cache is: what is made once per machine, whatever folder goldeval runs in.

Two homes, kept apart (issue 19: every new folder quantized the default model again, about 40 s, and
compiled the numba BM25 kernel again, 45-55 s wall on 2 busy cores, although the docs said "once per
machine"):

- the **user cache**, this module: what depends only on the installed software and the machine, never
  on a project: unpacked and quantized model copies (`models/`), numba's compiled kernels (`numba/`).
  `$GOLDEVAL_CACHE` when set and not empty, else `$XDG_CACHE_HOME/goldeval`, else `~/.cache/goldeval`
  (the XDG base directory rule);
- the **workspace** (`goldeval.store.workspace`, `.goldeval/` in the current folder): what belongs to a
  project: embeddings of its passages, runs, statistics, history.

Everything in the user cache is keyed by what it was made from (a model's file fingerprint, the
quantizer's version) and written by a temp file or folder renamed into place under a lock, so two
processes (two projects, two sweep workers) never see half of a file and never make it twice at once.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from goldeval.textsafe import clean

ENV_CACHE = "GOLDEVAL_CACHE"
"""The environment variable that moves the user cache (as `GOLDEVAL_WORKSPACE` moves the workspace)."""
MOVED = {"models": "model copies", "numba": "compiled kernels"}
"""Folders an older goldeval kept in each workspace, now the user cache's: no longer read. goldeval deletes
none of them (they are the user's files); `note_moved_folders` says they can go."""
_TOLD: set[Path] = set()
_TOLD_LOCK = threading.Lock()


def user_cache() -> Path:
    """`$GOLDEVAL_CACHE`, else `$XDG_CACHE_HOME/goldeval`, else `~/.cache/goldeval` (read at call time)."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "goldeval"


def moved_folders(workspace: Path) -> dict[Path, int]:
    """The folders of `MOVED` in `workspace` (real folders, not links) and the bytes of the files in each."""
    found: dict[Path, int] = {}
    for name in MOVED:
        folder = workspace / name
        if folder.is_dir() and not folder.is_symlink():
            found[folder] = sum(_bytes(os.path.join(top, file)) for top, _, files in os.walk(folder) for file in files)
    return found


def note_moved_folders(workspace: Path) -> None:
    """Say once per process and workspace, in one line on stderr, that its `models/` and `numba/` (an older
    goldeval's) are no longer read, what they held, how much room they take and that they can be deleted;
    delete nothing. Called when a workspace is checked before work (`goldeval.store.workspace`)."""
    with _TOLD_LOCK:
        if workspace.resolve() in _TOLD:
            return
        _TOLD.add(workspace.resolve())
    found = moved_folders(workspace)
    if not found:
        return
    what = " and ".join(f"{clean(str(folder))} ({MOVED[folder.name]}, {size / 1e6:,.1f} MB)" for folder, size in found.items())
    print(f"goldeval: note: {what}: an older goldeval's, no longer read (they are made once per machine in "
          f"{clean(str(user_cache()))} now); delete {'them' if len(found) > 1 else 'it'} to get the space back",
          file=sys.stderr)


def _bytes(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:  # removed while counted
        return 0
