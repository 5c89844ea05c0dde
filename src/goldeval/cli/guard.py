"""The command line's last line of defence: every way a command can end becomes an exit code and at
most an error line and a hint, never a raw traceback (issue 9).

- a GoldevalError (bad input, an unwritable output): its message, exit 2 (or its own code);
- Ctrl+C, SIGTERM and SIGHUP: the same path, an exception raised in the main thread, so every
  `finally` and `with` block runs (a pgvector eval schema is dropped, a temp file removed); exit
  128 + the signal number (130, 143, 129);
- stdout closed by its reader (`goldeval trec ... | head`): quiet, exit 0;
- anything else is a bug in goldeval: one line, a hint to report it, exit 4; `GOLDEVAL_DEBUG=1`
  lets the traceback through instead.
Messages are cleaned (`goldeval.textsafe`): an id or a path in them cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

from goldeval.errors import EXIT_INTERNAL, EXIT_OK, GoldevalError
from goldeval.textsafe import clean, cut

DEBUG_ENV = "GOLDEVAL_DEBUG"
CAUGHT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the main thread is, like Ctrl+C's KeyboardInterrupt, so the
    cleanup that Ctrl+C gets (issue 9, class 6) runs for them too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def run_guarded(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a subcommand and turn whatever ends it into an exit code and at most two stderr lines."""
    try:
        with signals_as_interrupts():
            return func(args)
    except GoldevalError as exc:
        _say(f"goldeval: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
        name = signal.Signals(signum).name
        _say("goldeval: interrupted" if signum == signal.SIGINT else f"goldeval: stopped by {name}")
        return 128 + int(signum)
    except BrokenPipeError:
        _silence_stdout()  # the reader of our output went away; nothing more to say
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the last line of defence, by design
        if os.environ.get(DEBUG_ENV) == "1":
            raise
        _say(f"goldeval: internal error: {type(exc).__name__}: {cut(str(exc), 300)}\n"
             f"  hint: this is a bug in goldeval; run again with {DEBUG_ENV}=1 to see the traceback, and report it")
        return EXIT_INTERNAL


@contextlib.contextmanager
def signals_as_interrupts() -> Iterator[None]:
    """SIGTERM and SIGHUP raise `Terminated` for the `with` block (main thread only; restored after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in CAUGHT_SIGNALS}

    def handler(signum: int, frame: FrameType | None) -> None:
        for each in CAUGHT_SIGNALS:  # a second signal during cleanup must not cut the cleanup short
            signal.signal(each, signal.SIG_IGN)
        raise Terminated(signum)

    for signum in CAUGHT_SIGNALS:
        signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)


def _say(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr itself may be gone (SIGHUP: the terminal closed)
        print("\n".join(clean(line) for line in text.split("\n")), file=sys.stderr)


def _silence_stdout() -> None:
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
