"""Where a sweep's stages run: in this process, or as Ray tasks (`--workers N`, `--ray-address`).

The executor only runs the pure stage functions of `goldeval.sweep.stages` and hands their results
back in order; this process writes every stored run, so results do not depend on who computed them.
Workers write embeddings straight into the workspace's embedding cache (atomic, write-once entries),
which every worker and this process read: on a cluster, put the workspace on a filesystem every node
mounts at the same path, or each node embeds for itself (correct, only slower).

A local Ray (`--workers N`) starts with N CPUs, no dashboard, asked for 127.0.0.1 as its node address
(Ray 2.60 replaces a loopback node address with the machine's own, and its servers listen on every
interface with its token authentication on; docs/sweep.md), with usage statistics off, and its logs in `<workspace>/ray/` (copied there at the end when the workspace path is
too long for Ray's sockets, which then live in a short folder under the system temp dir).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from goldeval.errors import GoldevalError, InputError, require

T = TypeVar("T")
SOCKET_ROOM = 38
"""Ray puts unix sockets at `<temp>/session_<date>_<pid>/sockets/plasma_store`; a socket path longer
than 107 bytes cannot be bound, which leaves about this many characters for `<temp>`."""


class Executor(Protocol):
    """Runs stage functions; `share` makes a large argument (the passages) cheap to pass many times."""

    workers: int
    threads: int | None
    """Threads each task's models may use (None: all cores, the single-process default)."""

    def share(self, value: Any) -> Any: ...

    def map(self, fn: Callable[..., T], calls: Sequence[tuple[Any, ...]], *,
            done: Callable[[T], None] | None = None) -> list[T]:
        """`fn(*call)` for each call, results in call order; `done(result)` as each finishes (progress)."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Everything in this process, one call after another."""

    workers = 1
    threads: int | None = None
    description = "this process"

    def share(self, value: Any) -> Any:
        return value

    def map(self, fn: Callable[..., T], calls: Sequence[tuple[Any, ...]], *,
            done: Callable[[T], None] | None = None) -> list[T]:
        results = []
        for args in calls:
            results.append(fn(*args))
            if done is not None:
                done(results[-1])
        return results

    def close(self) -> None:
        return None


WORKER_RETRIES = 3
"""Reruns of a task whose worker died before it finished (not of one whose function raised)."""


class RayExecutor:
    """Stage functions as Ray tasks, one CPU each; a task's error is raised here as itself."""

    threads: int | None = 1

    def __init__(self, *, workers: int | None = None, address: str | None = None, workspace: Path) -> None:
        if workers is None and address is None:
            raise ValueError("give workers or address")
        if workers is not None and workers < 1:
            raise InputError(f"--workers must be at least 1, got {workers}", value=workers, hint="e.g. --workers 2")
        self._ray = require("ray", extra="ray", purpose="--workers and --ray-address")
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
        self._logs = Path(workspace).resolve() / "ray"
        self._temp: Path | None = None
        if self._ray.is_initialized():
            raise InputError("Ray is already initialised in this process", hint="run the sweep in its own process")
        if address is not None:
            self._ray.init(address=address, log_to_driver=False, configure_logging=False)
            self.description = f"the Ray cluster at {address}"
        else:
            self._ray.init(num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1",
                           _temp_dir=str(self._temp_dir()), log_to_driver=False, configure_logging=False)
            self.description = f"a local Ray with {workers} worker(s), logs in {self._logs}"
        self.workers = int(workers or self._ray.cluster_resources().get("CPU", 1))
        self._task: Any = None
        """`in_small_pages` as a Ray task: every stage runs through it."""

    def _temp_dir(self) -> Path:
        if len(str(self._logs)) <= SOCKET_ROOM:
            self._logs.mkdir(parents=True, exist_ok=True)
            return self._logs
        self._temp = Path(tempfile.mkdtemp(prefix="goldeval-ray-"))
        return self._temp

    def share(self, value: Any) -> Any:
        return self._ray.put(value)

    def map(self, fn: Callable[..., T], calls: Sequence[tuple[Any, ...]], *,
            done: Callable[[T], None] | None = None) -> list[T]:
        """Each call a task, `done(result)` called here as each finishes (in the order they finish); a task
        whose worker died (killed by Ray's memory monitor on a loaded machine, or by anyone) runs again, up to WORKER_RETRIES times: stage functions are pure and their caches are
        written atomically, so a rerun gives the same result. An error the function raised is not retried."""
        if self._task is None:
            self._task = self._ray.remote(num_cpus=1, max_retries=WORKER_RETRIES, retry_exceptions=False)(in_small_pages)
        refs = [self._task.remote(fn, *args) for args in calls]
        try:
            pending = list(refs)
            while done is not None and pending:
                ready, pending = self._ray.wait(pending, num_returns=1)
                done(self._ray.get(ready[0]))
            return list(self._ray.get(refs))
        except self._ray.exceptions.RayTaskError as exc:
            raise exc.as_instanceof_cause() from None
        except self._ray.exceptions.RayError as exc:  # the worker itself died, WORKER_RETRIES + 1 times
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise GoldevalError(f"a Ray worker running {getattr(fn, '__name__', 'a stage')} died "
                                f"{WORKER_RETRIES + 1} times ({type(exc).__name__}: {first[:200]}); on a machine "
                                "short of memory, run fewer --workers") from None

    def close(self) -> None:
        if not self._ray.is_initialized():
            return
        self._ray.shutdown()
        if self._temp is not None:
            logs = self._temp / "session_latest" / "logs"
            if logs.is_dir():
                shutil.copytree(logs, self._logs / "logs", dirs_exist_ok=True)
            shutil.rmtree(self._temp, ignore_errors=True)


def in_small_pages(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` with numpy's arrays in ordinary pages, as every goldeval command makes them
    (`goldeval.memory.small_pages_only`): how a Ray worker runs a stage, so a sweep's stages pay the same price
    for memory on a worker as in this process."""
    from goldeval.memory import small_pages_only

    with small_pages_only():
        return fn(*args)


def make_executor(*, workers: int | None, address: str | None, workspace: Path) -> LocalExecutor | RayExecutor:
    """In this process unless `workers` or `address` asks for Ray."""
    if workers is None and address is None:
        return LocalExecutor()
    executor = RayExecutor(workers=workers, address=address, workspace=workspace)
    print(f"goldeval sweep: running stages on {executor.description}", file=sys.stderr)
    return executor
