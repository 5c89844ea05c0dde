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
from pathlib import Path

ENV_CACHE = "GOLDEVAL_CACHE"
"""The environment variable that moves the user cache (as `GOLDEVAL_WORKSPACE` moves the workspace)."""


def user_cache() -> Path:
    """`$GOLDEVAL_CACHE`, else `$XDG_CACHE_HOME/goldeval`, else `~/.cache/goldeval` (read at call time)."""
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "goldeval"
