"""Progress of work that takes more than a moment, on stderr: one rule for every long loop.

On a terminal it is a rich bar (transient: it disappears when done). When stderr is not a terminal
(CI logs, `2> log.txt`, a pipe) a bar would print nothing useful, so a line is written every
`LOG_EVERY` seconds instead, with the count, the rate and an estimate of the time left (issue 13: a
535-second Cranfield run used to be silent in CI):

    goldeval: embedding passages (minilm): 1,024/11,000 passages (9%), 61/s, about 2 min 44 s left

Work that finishes in under `LOG_EVERY` seconds prints nothing; work that ran longer ends with one
line saying how long it took. Encoders, searches and the CLI all use `progress_bar`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

LOG_EVERY = 15.0
"""Seconds between two progress lines when stderr is not a terminal; `GOLDEVAL_PROGRESS_EVERY` overrides it."""


def duration(seconds: float) -> str:
    """`42 s`, `2 min 44 s`, `1 h 05 min`: how long, as a person says it."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class ProgressLog:
    """Periodic progress lines for a stream that is not a terminal; `clock` is injectable for tests."""

    def __init__(self, label: str, total: int, *, unit: str, stream: TextIO, every: float = LOG_EVERY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.unit, self.stream, self.every, self.clock = label, total, unit, stream, every, clock
        self.done = 0
        self.start = self.last = clock()

    def advance(self, n: int) -> None:
        self.done += n
        now = self.clock()
        if now - self.last >= self.every and self.done < self.total:
            self.last = now
            self._write(self.line(now))

    def line(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        left = f", about {duration((self.total - self.done) / rate)} left" if rate > 0 else ""
        return (f"goldeval: {self.label}: {self.done:,}/{self.total:,} {self.unit}{share}, "
                f"{rate:,.{0 if rate >= 10 else 1}f}/s{left}")

    def finish(self) -> None:
        elapsed = self.clock() - self.start
        if elapsed >= self.every:
            rate = self.done / max(elapsed, 1e-9)
            self._write(f"goldeval: {self.label}: {self.done:,} {self.unit} in {duration(elapsed)} "
                        f"({rate:,.{0 if rate >= 10 else 1}f}/s)")

    def _write(self, text: str) -> None:
        print(text, file=self.stream, flush=True)


@contextmanager
def progress_bar(label: str, *, total: int, enabled: bool = True, unit: str = "questions",
                 stream: TextIO | None = None, min_total: int = 1) -> Iterator[Callable[[int], None]]:
    """Yield `advance(n)`. A rich bar on a terminal, periodic lines elsewhere, nothing when disabled.

    `min_total`: below this many items no bar is drawn on a terminal (it would only flicker); the
    lines for a log are written whatever the total, since they only appear for slow work.
    """
    stream = stream if stream is not None else sys.stderr
    if not enabled or total <= 0:
        yield lambda n: None
        return
    if not _is_terminal(stream):
        log = ProgressLog(label, total, unit=unit, stream=stream, every=log_every())
        yield log.advance
        log.finish()
        return
    if total < min_total:
        yield lambda n: None
        return
    yield from _rich_bar(label, total, unit, stream)


def log_every() -> float:
    """`LOG_EVERY`, or the seconds `GOLDEVAL_PROGRESS_EVERY` gives (0: a line at every step)."""
    raw = os.environ.get("GOLDEVAL_PROGRESS_EVERY", "")
    try:
        return max(float(raw), 0.0) if raw.strip() else LOG_EVERY
    except ValueError:
        return LOG_EVERY


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _rich_bar(label: str, total: int, unit: str, stream: TextIO) -> Iterator[Callable[[int], None]]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("[progress.data.speed]{task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(file=stream), transient=True) as bar:
        task = bar.add_task(label, total=total, rate="")

        def advance(n: int) -> None:
            bar.advance(task, n)
            speed = bar.tasks[0].speed
            if speed:
                bar.update(task, rate=f"{speed:,.0f} {unit}/s")

        yield advance


def progress_callback(label: str, *, unit: str, enabled: bool = True,
                      stream: TextIO | None = None) -> Callable[[int, int], None]:
    """For APIs that report `progress(done, total)`: the same bar or lines as `progress_bar`, started
    on the first call and finished when `done` reaches `total`."""
    state: dict[str, object] = {"done": 0}

    def report(done: int, total: int) -> None:
        if not enabled or state.get("finished"):
            return
        if "bar" not in state:
            bar = progress_bar(label, total=total, unit=unit, stream=stream)
            state["bar"], state["advance"] = bar, bar.__enter__()
        advance: Callable[[int], None] = state["advance"]  # type: ignore[assignment]
        advance(done - int(state["done"]))  # type: ignore[call-overload]
        state["done"] = done
        if done >= total:
            state["finished"] = True
            state["bar"].__exit__(None, None, None)  # type: ignore[attr-defined]

    return report
