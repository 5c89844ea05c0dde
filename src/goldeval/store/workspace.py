"""goldeval's own workspace: a folder (`.goldeval/` by default) that holds a project's caches and indexes,
and `user_folder`: a folder of the per-user cache (`goldeval.usercache`) for what is made once per machine.

The workspace holds what belongs to a project (embeddings of its passages, runs, statistics, history);
models and their quantized copies, and numba's compiled kernels, are the user cache's. Every file is
keyed so that two corpora or two models never overwrite each other. Writes are atomic
(goldeval.store.atomic), so a crash or two concurrent runs leave either the old file or the new one,
never half of one.

Where it is: `--workspace DIR`, else `$GOLDEVAL_WORKSPACE`, else `./.goldeval` (`default_workspace`,
the one rule every command and `evaluate()` use). `Workspace.check` runs before an evaluation, so a
workspace that is a file or cannot be written is one clear error before any work is done; it also says,
once, that an older goldeval's `models/` and `numba/` in it are no longer read and can be deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from goldeval.errors import WriteError
from goldeval.store.atomic import clean_stale_temps, probe, write_error
from goldeval.usercache import ENV_CACHE, note_moved_folders, user_cache

DEFAULT_WORKSPACE = Path(".goldeval")
ENV_WORKSPACE = "GOLDEVAL_WORKSPACE"


def default_workspace() -> Path:
    """`$GOLDEVAL_WORKSPACE` when set and not empty, else `.goldeval` (read at call time)."""
    return Path(os.environ.get(ENV_WORKSPACE) or DEFAULT_WORKSPACE)


@dataclass(frozen=True)
class Workspace:
    """A workspace folder and the conventional places inside it."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @classmethod
    def at(cls, root: str | Path | None = None) -> Workspace:
        """The workspace at `root`, else `$GOLDEVAL_WORKSPACE`, else `./.goldeval`."""
        return cls(Path(root) if root is not None else default_workspace())

    def check(self) -> bool:
        """Create the workspace if needed and prove it writable; WriteError naming it otherwise. True when it
        did not exist (`remove_if_empty` undoes that for a command that then fails)."""
        hint = f"pass --workspace DIR (or set {ENV_WORKSPACE}) to a folder you may write to"
        if self.root.exists() and not self.root.is_dir():
            raise WriteError("the workspace is a file, not a folder", path=self.root, hint=hint)
        made = not self.root.exists()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteError(f"cannot create the workspace ({exc.strerror or exc})", path=self.root,
                             hint=hint) from None
        try:
            probe(self.root)
        except WriteError as exc:
            raise WriteError(f"the workspace is not writable: {exc.reason.removeprefix('cannot write: ')}",
                             path=self.root, hint=hint) from None
        for folder, _, _ in os.walk(self.root):  # temp files of writers killed mid-write, anywhere in it
            clean_stale_temps(Path(folder))
        note_moved_folders(self.root)  # an older goldeval's models/ and numba/: said once, never deleted
        return made

    def remove_if_empty(self) -> None:
        """Remove the workspace folder if nothing was written in it (a command that made it and then failed)."""
        with contextlib.suppress(OSError):  # not empty, or gone: nothing to undo
            self.root.rmdir()

    @contextlib.contextmanager
    def undone_on_failure(self, made: bool) -> Iterator[Workspace]:
        """The one rule of every command that writes a workspace: when the command made it (`check` returned
        True) and then fails, with a bad input or an interruption, the folder goes again if nothing was
        written in it; one the user had, or one holding anything, is kept."""
        try:
            yield self
        except BaseException:
            if made:
                self.remove_if_empty()
            raise

    def folder(self, *parts: str) -> Path:
        """A sub-folder of the workspace, created on first use; temp files of dead writers are removed."""
        return _made(self.root.joinpath(*parts), "a workspace folder",
                     f"pass --workspace DIR (or set {ENV_WORKSPACE}) to a folder you may write to")

    @property
    def embeddings(self) -> Path:
        return self.folder("embeddings")

    @property
    def indexes(self) -> Path:
        return self.folder("indexes")


def user_folder(*parts: str) -> Path:
    """A folder of the user cache (`goldeval.usercache.user_cache`), created on first use; temp files of dead
    writers are removed. Shared by every project on the machine: write into it atomically, under a lock."""
    return _made(user_cache().joinpath(*parts), "a folder of goldeval's user cache",
                 f"set {ENV_CACHE} to a folder you may write to")


def _made(path: Path, what: str, hint: str) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError(f"cannot create {what} ({exc.strerror or exc})", path=path, hint=hint) from None
    clean_stale_temps(path)
    return path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock (fcntl.flock) on `path`, held for the `with` block. A lock that cannot be
    made (a read-only disk, a full one, a folder in its place) is a WriteError naming it, before anything
    is written (issue 20: `golden freeze` on a read-only disk was an internal error)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+b")
    except OSError as exc:
        raise write_error(path, exc) from None
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
