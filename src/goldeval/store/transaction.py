"""One transaction over several files: one lock, a re-read under it, every file written or none, and no
signal in the middle (issue 20, lifecycle files).

A golden set, its changelog, its versions and a candidates file under review change together: a verdict
is a judgment in the set *and* its changelog line; an accept is a candidate's status *and* a question in
the set *and* a changelog line. `transaction(lock, ...)` is how every such change is written:

    with transaction(lock_path(golden)) as tx:
        text = tx.read(golden)                 # the file as it is now, under the lock
        tx.write(golden, edited(text))         # staged, not written yet
        tx.write(changelog, more, last=True)   # the changelog is renamed last

1. The locks (`goldeval.store.workspace.file_lock`) are taken in one order (sorted paths), so two writers
   never deadlock, and everything is read again under them: a second page, process or command that
   wrote meanwhile is never overwritten with an older copy.
2. When the block ends without an error, every staged file is written to its temp file (fsynced) first;
   if any cannot be (a full disk, a folder or a FIFO where the file should be, a read-only folder), every
   temp file is removed and nothing is renamed: one `WriteError` naming the file, all files as they were.
   Then the temp files are renamed in the order staged, the `last=True` ones (the changelog) at the end;
   a rename that still fails puts back the files already renamed.
3. Ctrl+C, SIGTERM and SIGHUP arriving while the lock is held are deferred until the transaction has
   ended, then delivered (in the main thread; a server's request threads cannot get signals, and
   `stop_writes` lets the server wait for them before the process ends). No `.tmp` file is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from goldeval.errors import InputError, WriteError
from goldeval.store.atomic import (
    fsync_dir,
    refuse_special,
    remove_quietly,
    write_atomic,
    write_error,
    write_temp,
)
from goldeval.store.workspace import file_lock

DEFERRED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
"""The signals a transaction holds back until it has ended."""

_active = 0
_stopping = False
_state = threading.Condition()


@dataclass
class _Staged:
    path: Path
    data: bytes
    last: bool
    tmp: Path | None = None


class Transaction:
    """The files of one transaction: read them with `read`, stage new contents with `write`."""

    def __init__(self) -> None:
        self._staged: list[_Staged] = []

    def read(self, path: str | Path) -> str | None:
        """The text of `path` now (under the lock), or the text staged for it; None when it does not exist."""
        path = Path(path)
        for staged in reversed(self._staged):
            if staged.path == path:
                return staged.data.decode("utf-8")
        if not path.exists():
            return None
        refuse_special(path)
        if path.is_dir():
            raise WriteError("cannot write: it is a folder", path=path, hint="remove or rename the folder")
        data = path.read_bytes()
        try:
            return data.decode("utf-8")  # as written: no newline translation (CRLF stays CRLF)
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(f"not UTF-8 text (byte {data[exc.start]:#04x})", path=path, line=line,
                             hint="save the file as UTF-8, or restore it from version control") from None

    def write(self, path: str | Path, data: str | bytes, *, last: bool = False) -> None:
        """Stage `data` for `path` (text is UTF-8); `last` files are renamed after all the others."""
        path = Path(path)
        body = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
        self._staged = [s for s in self._staged if s.path != path]
        self._staged.append(_Staged(path, body, last))

    def commit(self) -> None:
        """Write every staged file, or none (see the module docstring)."""
        order = [s for s in self._staged if not s.last] + [s for s in self._staged if s.last]
        try:
            for staged in order:
                _check_target(staged.path)
                try:
                    staged.tmp = write_temp(staged.path, staged.data)
                except OSError as exc:
                    raise write_error(staged.path, exc) from None
            before = {s.path: s.path.read_bytes() if s.path.is_file() else None for s in order}
            _rename(order, before)
        finally:
            for staged in order:
                if staged.tmp is not None:
                    remove_quietly(staged.tmp)
        for folder in dict.fromkeys(s.path.parent for s in order):
            fsync_dir(folder)


def _check_target(path: Path) -> None:
    refuse_special(path)
    if path.is_dir():
        raise WriteError("cannot write: it is a folder", path=path, hint="remove or rename the folder")
    if not path.parent.is_dir():
        raise WriteError("cannot write: the folder does not exist", path=path.parent,
                         hint="create the folder first, or choose another path")


def _rename(order: list[_Staged], before: dict[Path, bytes | None]) -> None:
    done: list[_Staged] = []
    for staged in order:
        assert staged.tmp is not None
        try:
            os.replace(staged.tmp, staged.path)
        except OSError as exc:
            for back in reversed(done):  # put back what this transaction already replaced
                previous = before[back.path]
                with contextlib.suppress(WriteError, OSError):
                    if previous is None:
                        os.unlink(back.path)
                    else:
                        write_atomic(back.path, previous, create_folder=False)
            raise write_error(staged.path, exc) from None
        staged.tmp = None
        done.append(staged)


@contextlib.contextmanager
def transaction(*locks: Path) -> Iterator[Transaction]:
    """Hold `locks` (sorted), defer signals, yield a Transaction, and commit it if the block raised nothing."""
    global _active
    with _state:
        if _stopping:
            raise WriteError("goldeval is stopping: the change was not written", path=locks[0] if locks else None,
                             hint="start it again and redo the change")
        _active += 1
    try:
        with contextlib.ExitStack() as stack:
            for lock in sorted(set(map(Path, locks))):
                stack.enter_context(file_lock(lock))
            with deferred_signals():
                tx = Transaction()
                yield tx
                tx.commit()
    finally:
        with _state:
            _active -= 1
            _state.notify_all()


def stop_writes() -> None:
    """Wait for the transactions in flight (a page's request threads) to end and refuse new ones: what a
    server calls when Ctrl+C stops it, before the process ends and its daemon threads with it."""
    global _stopping
    with _state:
        _stopping = True
        _state.notify_all()
        _state.wait_for(lambda: _active == 0)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold Ctrl+C, SIGTERM and SIGHUP back for the `with` block, then deliver them (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    previous: dict[int, Any] = {}
    for signum in DEFERRED:
        old = signal.getsignal(signum)
        if old is None or old == signal.SIG_IGN:
            continue  # a handler not set from Python cannot be put back; an ignored signal stays ignored
        previous[signum] = signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)
