"""The one way goldeval writes a file: atomically, so a crash never leaves half of one.

A temp file beside the target, fsync, `os.replace`, then fsync of the folder (POSIX makes the rename
durable only then). The temp file is created with mode 0666 minus the umask, like any file the user
writes, rather than mkstemp's owner-only 0600; an existing target keeps its mode.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes | Iterable[bytes], *, create_folder: bool = True) -> None:
    """Replace `path` with `data` (text is written as UTF-8) in one step."""
    path = Path(path)
    if create_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in _chunks(data):
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _chunks(data: str | bytes | Iterable[bytes]) -> Iterable[bytes]:
    if isinstance(data, str):
        return (data.encode("utf-8"),)
    if isinstance(data, bytes):
        return (data,)
    return data


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
