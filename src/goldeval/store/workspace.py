"""goldeval's own workspace: a folder (`.goldeval/` by default) that holds every cache and index.

Nothing goldeval writes lives anywhere else, and every file in it is keyed so that two corpora or
two models never overwrite each other. Writes are atomic (goldeval.store.atomic), so a
crash or two concurrent runs leave either the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WORKSPACE = Path(".goldeval")
ENV_WORKSPACE = "GOLDEVAL_WORKSPACE"


@dataclass(frozen=True)
class Workspace:
    """A workspace folder and the conventional places inside it."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @classmethod
    def at(cls, root: str | Path | None = None) -> Workspace:
        """The workspace at `root`, else `$GOLDEVAL_WORKSPACE`, else `./.goldeval`."""
        if root is None:
            root = os.environ.get(ENV_WORKSPACE) or DEFAULT_WORKSPACE
        return cls(Path(root))

    def folder(self, *parts: str) -> Path:
        """A sub-folder of the workspace, created on first use."""
        path = self.root.joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def embeddings(self) -> Path:
        return self.folder("embeddings")

    @property
    def models(self) -> Path:
        return self.folder("models")

    @property
    def indexes(self) -> Path:
        return self.folder("indexes")


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock (fcntl.flock) on `path`, held for the `with` block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
