"""Where a command's `--json` goes: `--json OUT` a file, `--json -` stdout, and nothing else on stdout then.

Machine output belongs on stdout, progress and diagnostics on stderr (shared/STYLE.md, "CLI as a thin
layer"). With `--json -` the JSON is the command's only stdout: while the command runs, what it would print
there (the terminal tables, the serving line, notes) goes to stderr instead (`json_on_stdout`, around every
command in `goldeval.cli.main`), so `goldeval eval ... --json - | jq .` reads pure JSON. Any other OUT is a
file, written atomically (`goldeval.store.atomic`) and said on stderr; a file named `-` is spelled `./-`.

Each command hands its OUT (a path or `-`) to `write_json` (a JSON text it made) or `save_json` (a writer
that takes a path, such as `Scorecard.save`: for `-` it writes into a temp folder whose file is copied to
stdout, so the writer stays the one home of how that JSON is made), and `check_json_out` before the work.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

STDOUT = "-"
"""`--json -`: the JSON on stdout."""
_REAL_STDOUT: list[TextIO] = []
"""The stdout the JSON goes to while `json_on_stdout` sends the command's other stdout to stderr."""


def to_stdout(out: object) -> bool:
    """Whether OUT (a `--json` value) is `-`, stdout."""
    return isinstance(out, str | Path) and str(out) == STDOUT


@contextmanager
def json_on_stdout(args: argparse.Namespace) -> Iterator[None]:
    """Run a command with `--json -` so that the JSON is all its stdout holds: `sys.stdout` is stderr for the
    command's run (rich consoles and print follow it), the real stdout kept for `write_json`/`save_json`."""
    if not to_stdout(getattr(args, "json", None)):
        yield
        return
    real = sys.stdout
    _REAL_STDOUT.append(real)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = real
        _REAL_STDOUT.remove(real)


def check_json_out(out: Path | None, what: str = "--json output") -> None:
    """Before the work: a file OUT must be writable (`check_writable`); `-` needs nothing."""
    if out is not None and not to_stdout(out):
        from goldeval.store.atomic import check_writable

        check_writable(out, what=what)


def write_json(out: Path, text: str) -> None:
    """`text` (JSON) to the file OUT, atomically, said on stderr; or to stdout for `-`."""
    if to_stdout(out):
        stream = _stdout()
        stream.write(text if text.endswith("\n") else text + "\n")
        stream.flush()
        return
    from goldeval.store.atomic import write_atomic

    write_atomic(out, text)
    print(f"goldeval: wrote {out}", file=sys.stderr)


def save_json(out: Path, save: Callable[[Path], None]) -> None:
    """`save(path)` (a writer of a JSON file) into OUT, said on stderr; for `-`, into a temp folder whose file
    is copied to stdout (streamed: a results file can be hundreds of MB) and then removed."""
    if not to_stdout(out):
        save(out)
        print(f"goldeval: wrote {out}", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory(prefix="goldeval-json-") as folder:
        path = Path(folder) / "out.json"
        save(path)
        stream = _stdout()
        stream.flush()
        with path.open("rb") as handle:
            buffer = getattr(stream, "buffer", None)
            if buffer is not None:
                shutil.copyfileobj(handle, buffer, 1 << 20)
                buffer.flush()
            else:  # a text stream without bytes beneath it (a StringIO)
                stream.write(handle.read().decode("utf-8"))
                stream.flush()


def _stdout() -> TextIO:
    return _REAL_STDOUT[-1] if _REAL_STDOUT else sys.stdout
