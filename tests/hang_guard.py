"""How long a test waits before it calls something hung: one number for every wait in the tests (issue 17).

A time limit in a test guards against a hang; it never decides a pass. On a busy 2-core machine (load
about 15) a `python -m goldeval` that takes 5 s when the machine is quiet took more than 60 s, so every
subprocess, server, socket, thread join and page wait uses `HANG_GUARD` (or `HANG_GUARD_MS` for
Playwright), never a number of its own. A test that must wait for a state (a process inside its search
function, a server holding a request) waits for a sign of that state with `wait_until`, never sleeps
and assumes it.

Import it as `from hang_guard import HANG_GUARD, wait_until` (tests/ is on sys.path under pytest).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

HANG_GUARD = 600.0
"""Seconds: past this a subprocess, a request or a wait is taken to hang (minutes: a loaded machine is slow)."""
HANG_GUARD_MS = HANG_GUARD * 1000
"""The same limit in milliseconds, as Playwright takes it."""


def wait_until(condition: Callable[[], object], what: str, *, proc: subprocess.Popen[str] | None = None,
               seconds: float = HANG_GUARD, poll: float = 0.02) -> None:
    """Return once `condition()` is true; fail naming `what` after `seconds`, or at once if `proc` ended
    first (with what it printed), so a process that died is not waited on for minutes."""
    deadline = time.monotonic() + seconds
    while not condition():
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the process ended (exit {proc.returncode}) before {what}\n"
                                 f"stdout:\n{out[-2000:]}\nstderr:\n{err[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {seconds:g} s for {what}")
        time.sleep(poll)
