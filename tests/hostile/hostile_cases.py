"""The hostile-input catalogue (issue 9): shared inputs, and how a case runs and what it asserts.

Every case runs the real command line: in this process through `goldeval.cli.main` (fast, with
capsys), or as a subprocess where the case needs a process of its own (a file-size limit, a signal,
another user, a FIFO that would block). Every case asserts the exit code, that stderr holds at most
one `goldeval: error:` line and never a traceback or an internal error, and, where it applies, that
what an earlier run left (results, caches, database tables) is intact.

Add a case by adding a row to a module's table: the catalogue grows with every new hostile input.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from goldeval.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: pg_fixtures, hang_guard, shared with the other suites

from hang_guard import HANG_GUARD  # noqa: E402 - found through the line above

DOCS = {
    "git/stash.md": "# Stash\n\nPut uncommitted changes aside with git stash and restore them later.\n",
    "git/branch.md": "# Branch\n\nCreate, list and delete branches with git branch.\n",
    "git/rebase.md": "# Rebase\n\nReplay commits on top of another base with git rebase.\n",
    "cooking/pasta.md": "# Pasta\n\nBoil the pasta in salted water for ten minutes.\n",
    "cooking/bread.md": "# Bread\n\nKnead the dough, let it rise, then bake the bread.\n",
}
QUESTIONS = [
    {"id": "q1", "question": "stash my uncommitted changes", "expected": ["git/stash.md"], "tags": ["git"]},
    {"id": "q2", "question": "delete a branch", "expected": ["git/branch.md"], "tags": ["git"]},
    {"id": "q3", "question": "replay commits on another base", "expected": ["git/rebase.md"], "tags": ["git"]},
    {"id": "q4", "question": "how long to boil pasta", "expected": ["cooking/pasta.md"], "tags": ["food"]},
    {"id": "q5", "question": "let the dough rise", "expected": ["cooking/bread.md"], "tags": ["food"]},
    {"id": "q6", "question": "what is the capital of peru", "expected": []},
]
HANGS_ENTERED = "hangs.entered"
"""The file `search:hangs` writes in the current folder once it is entered (the run is inside its search)."""
SEARCH_MODULE = f'''\
"""Search functions for the catalogue: each misbehaves in one way."""
import sys, time

DOCS = ["git/stash.md", "git/branch.md", "git/rebase.md", "cooking/pasta.md", "cooking/bread.md"]
ENTERED = {HANGS_ENTERED!r}

def good(question, k):
    words = set(question.split())
    return sorted(DOCS, key=lambda d: (-len(words & set(d.replace("/", " ").replace(".md", "").split())), d))[:k]

def exits(question, k):
    sys.exit(7)

def infinite(question, k):
    return [("git/stash.md", float("inf"))]

def nan(question, k):
    return [("git/stash.md", float("nan")), ("git/branch.md", 1.0)]

def repeats(question, k):
    return ["git/stash.md", "git/branch.md", "git/stash.md"]

def unknown(question, k):
    return ["no/such/doc.md", "git/stash.md#99"]

def hangs(question, k):
    open(ENTERED, "w").close()  # the sign a test waits for before it signals: goldeval is inside the search
    time.sleep(600)

def swallows(question, k):
    try:
        time.sleep(600)
    except Exception:
        time.sleep(600)

def huge_error(question, k):
    raise ValueError("x" * 1_000_000)

def ansi_error(question, k):
    raise RuntimeError("boom \\x1b[2J\\x1b[31mscreen cleared")

def surrogate_id(question, k):
    return ["git/stash.md", "\\ud800-not-text.md"]

def score(query, texts):
    return [float("nan")] * len(texts)
'''


@dataclass
class Outcome:
    """What a command did: its exit code and its two streams."""

    code: int
    out: str
    err: str

    def error_lines(self) -> list[str]:
        """`goldeval: error: ...`, or argparse's `goldeval eval: error: ...` for a bad flag."""
        return [line for line in self.err.splitlines() if re.match(r"goldeval( [a-z]+)*: error: ", line)]


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with docs/, golden.jsonl and search.py; the current directory; history off
    unless a case turns it on; the workspace in the folder."""
    for doc_id, text in DOCS.items():
        path = tmp_path / "docs" / doc_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    write_jsonl(tmp_path / "golden.jsonl", QUESTIONS)
    (tmp_path / "search.py").write_text(SEARCH_MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("GOLDEVAL_NO_HISTORY", "1")
    monkeypatch.delenv("GOLDEVAL_WORKSPACE", raising=False)
    monkeypatch.delenv("GOLDEVAL_DEBUG", raising=False)
    for name in [m for m in sys.modules if m == "search"]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path


def write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


EVAL = ["eval", "--corpus", "docs", "--golden", "golden.jsonl", "--quiet", "--no-stats"]
"""The plain evaluation every case varies."""


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """Run `goldeval ARGS` in this process; returns the Outcome."""

    def run(*args: str) -> Outcome:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse refuses a bad flag this way
            code = exc.code if isinstance(exc.code, int) else 2
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


def run_process(args: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = HANG_GUARD,
                preexec: Callable[[], None] | None = None, user: int | None = None) -> Outcome:
    """Run `python -m goldeval ARGS` as a process of its own (HANG_GUARD: a limit against a hang only)."""
    full_env = {**os.environ, "GOLDEVAL_NO_HISTORY": "1", **(env or {})}
    full_env.pop("GOLDEVAL_DEBUG", None)
    done = subprocess.run([sys.executable, "-m", "goldeval", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=preexec, user=user)
    return Outcome(done.returncode, done.stdout, done.stderr)


def assert_clean(outcome: Outcome, code: int, *needles: str) -> None:
    """The exit code, at most one error line holding every needle, and no traceback or internal error."""
    shown = f"exit {outcome.code}\nstdout:\n{outcome.out[-2000:]}\nstderr:\n{outcome.err[-3000:]}"
    assert outcome.code == code, shown
    assert "Traceback" not in outcome.err and "Traceback" not in outcome.out, shown
    assert "internal error" not in outcome.err, shown
    assert len(outcome.error_lines()) <= 1, shown
    for needle in needles:
        assert needle in outcome.err, f"{needle!r} not in stderr\n{shown}"


def assert_refused(outcome: Outcome, *needles: str, code: int = 2) -> None:
    """Refused as bad input: exactly one `goldeval: error:` line, with the needles, exit 2."""
    assert_clean(outcome, code, *needles)
    assert len(outcome.error_lines()) == 1, outcome.err


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (relative path -> bytes), to prove that nothing changed."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(folder: Path) -> list[str]:
    """Temp files a writer left behind."""
    return sorted(p.name for p in folder.rglob("*.tmp"))


@pytest.fixture(scope="session")
def good_results(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a results file of two retrievers with statistics, written once by the real CLI."""
    folder = tmp_path_factory.mktemp("good-results")
    for doc_id, text in DOCS.items():
        (folder / "docs" / doc_id).parent.mkdir(parents=True, exist_ok=True)
        (folder / "docs" / doc_id).write_text(text, encoding="utf-8")
    write_jsonl(folder / "golden.jsonl", QUESTIONS)
    out = folder / "results.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOLDEVAL_NO_HISTORY", "1")
        code = main(["eval", "--corpus", str(folder / "docs"), "--golden", str(folder / "golden.jsonl"), "--quiet",
                     "--retriever", "bm25", "--retriever", "bm25?stem=none", "--resamples", "200",
                     "--workspace", str(folder / ".goldeval"), "--json", str(out)])
    assert code == 0
    return out.read_bytes()


@pytest.fixture
def results(inputs: Path, good_results: bytes) -> Path:
    """A good results file in the working folder."""
    out = inputs / "results.json"
    out.write_bytes(good_results)
    return out


@contextmanager
def tmpfs(folder: Path, options: str) -> Iterator[Path]:
    """A small tmpfs mounted on `folder` for the `with` block (a full or read-only disk, issue 20). CI runs as
    root (`.ci/run`), so these cases run there; a machine where the mount cannot be made fails them with the
    reason, never skips them in silence."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.fail("this case needs a tmpfs mount: run the suite as root, as .ci/run does in CI")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs on {folder} ({done.stderr.decode().strip()}): this case needs one")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill_up(folder: Path) -> None:
    """Fill the file system of `folder` to the last byte."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass  # full
    finally:
        os.close(fd)
