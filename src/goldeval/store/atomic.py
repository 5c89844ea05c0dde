"""The one way goldeval writes a file: atomically, so a crash never leaves half of one.

A temp file beside the target, fsync, `os.replace`, then fsync of the folder (POSIX makes the rename
durable only then). The temp file is created with mode 0666 minus the umask, like any file the user
writes, rather than mkstemp's owner-only 0600; an existing target keeps its mode.

Failures (issue 9, class 1). Any OSError while writing (a read-only folder, a full disk, the
file-size limit of `ulimit -f`, a target that is a folder) becomes one `WriteError` naming the path
and the cause, the temp file is always removed, and the previous file is left as it was. A target
that exists but is not a regular file (`/dev/null`, a FIFO) is refused: replacing it would put a
file where a device was. `check_writable` runs the same checks before an evaluation starts, so
minutes of work are not lost to an output that could never be written. A temp file left by a
process killed mid-write (`kill -9`) is removed by `clean_stale_temps` when its folder is next used.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Iterable
from pathlib import Path

from goldeval.errors import WriteError

STALE_AFTER_SECONDS = 24 * 3600
"""A temp file whose writer cannot be checked (another machine) is stale after a day."""
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.[0-9a-f]{8}\.tmp$")

_CAUSES: dict[int, tuple[str, str]] = {
    errno.EACCES: ("permission denied", "choose a folder you may write to"),
    errno.EPERM: ("permission denied", "choose a folder you may write to"),
    errno.EROFS: ("the file system is read-only", "choose a folder on a writable disk"),
    errno.ENOSPC: ("no space left on the device", "free some disk space, or write to another disk"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some space in your quota"),
    errno.EFBIG: ("the file-size limit was reached (ulimit -f)", "raise the limit (ulimit -f unlimited)"),
    errno.EISDIR: ("it is a folder", "give a file name, e.g. FOLDER/results.json"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "check the path"),
    errno.ENOENT: ("the folder does not exist", "create the folder first, or choose another path"),
    errno.ENAMETOOLONG: ("the name is too long", "choose a shorter path"),
}


def write_atomic(path: str | Path, data: str | bytes | Iterable[bytes], *, create_folder: bool = True) -> None:
    """Replace `path` with `data` (text is written as UTF-8) in one step; WriteError if it cannot be."""
    path = Path(path)
    refuse_special(path)
    try:
        if create_folder:
            path.parent.mkdir(parents=True, exist_ok=True)
        _replace(path, data)
    except OSError as exc:
        raise write_error(path, exc) from None
    fsync_dir(path.parent)


def _replace(path: Path, data: str | bytes | Iterable[bytes]) -> None:
    tmp = write_temp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise


def write_temp(path: Path, data: str | bytes | Iterable[bytes]) -> Path:
    """Write `data` to a new temp file beside `path` (fsynced, with the mode `path` has) and return it;
    the temp file is removed when that fails for any reason (an error, Ctrl+C, SIGTERM). Raises OSError."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in _chunks(data):
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:  # an error, Ctrl+C or SIGTERM: never leave the temp file behind
        remove_quietly(tmp)
        raise
    return tmp


def temp_name(path: Path) -> Path:
    """`.NAME.PID.HEX.tmp` beside `path`: the name `clean_stale_temps` recognises."""
    return path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def write_error(path: Path, exc: OSError) -> WriteError:
    """One line naming the path and the cause of a failed write."""
    cause, hint = _CAUSES.get(exc.errno or 0, (exc.strerror or str(exc), "check the path and the disk"))
    return WriteError(f"cannot write: {cause}", path=path, hint=hint)


def check_writable(path: str | Path, *, what: str = "output") -> None:
    """Fail now, not after the evaluation, if `path` could not be written by `write_atomic`.

    Refuses a folder or a special file at `path`, and probes the folder it would be written in (or,
    when that does not exist yet, the nearest existing folder above it) by creating and removing a
    temp file, which is the only check that also holds for root, read-only mounts and ACLs.
    """
    path = Path(path)
    if path.is_dir():
        raise WriteError(f"cannot write the {what}: it is a folder", path=path,
                         hint="give a file name, e.g. FOLDER/results.json")
    refuse_special(path)
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise WriteError(f"cannot write the {what}: {folder} is a file, not a folder", path=path,
                         hint="check the path")
    probe(folder, shown=path)


def probe(folder: Path, *, shown: Path | None = None) -> None:
    """Create and remove a temp file in `folder`; WriteError naming `shown` (or the folder) if that fails."""
    tmp = folder / f".goldeval-probe.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise write_error(shown or folder, exc) from None
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def clean_stale_temps(folder: Path) -> list[Path]:
    """Remove the temp files of writers that died mid-write (their pid is gone, or a day passed)."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if not match or not entry.is_file(follow_symlinks=False):
            continue
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER_SECONDS
            if old or not _alive(int(match.group(1))):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue  # another process removed or replaced it meanwhile
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def refuse_special(path: Path) -> None:
    """WriteError when `path` exists and is neither a regular file nor a folder (a device, FIFO, socket)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise WriteError("cannot write: it is not a regular file (a device, FIFO or socket)", path=path,
                         hint="give the path of an ordinary file")


def _chunks(data: str | bytes | Iterable[bytes]) -> Iterable[bytes]:
    if isinstance(data, str):
        return (utf8(data),)
    if isinstance(data, bytes):
        return (data,)
    return data


def utf8(text: str) -> bytes:
    """`text` as the UTF-8 goldeval writes: a lone surrogate (invalid Unicode that slipped through) is written
    as its `\\udXXX` escape: in JSON that is the same string again, in text it is visible, and never a crash
    at the end. Streamed writers encode their pieces with it too (`scorecard.writer`)."""
    return text.encode("utf-8", "backslashreplace")


def fsync_dir(folder: Path) -> None:
    """Make renames in `folder` durable (POSIX: only an fsync of the folder does)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
