"""Class 1: write failures are one line naming the path and the cause, exit 2, previous file intact.

Outputs and the workspace are checked before any work (a folder where a file should go, a read-only
folder, a workspace that is a file); what only shows during the write itself (a file-size limit, a
full disk) still ends in one line, the previous file untouched and no temp file left beside it.
A read-only folder is a read-only mount when running as root (root ignores permission bits), else
a folder without write permission.
"""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hostile_cases import EVAL, Outcome, assert_clean, assert_refused, fill_up, leftovers, run_process, tmpfs

PREVIOUS = b'{"previous": "results, which must survive"}\n'


@pytest.fixture
def readonly(tmp_path: Path) -> Iterator[Path]:
    """A folder holding `results.json` (PREVIOUS) and `comment.md`, which cannot be written to."""
    folder = tmp_path / "readonly"
    folder.mkdir()
    if os.geteuid() != 0:
        _fill(folder)
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    with tmpfs(folder, "size=1m"):
        _fill(folder)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 256 KB file system that is full, holding `results.json` (PREVIOUS). A tmpfs mount: the
    case fails, never skips, where one cannot be made (CI runs as root)."""
    with tmpfs(tmp_path / "full", "size=256k") as folder:
        _fill(folder)
        fill_up(folder)
        yield folder


def _fill(folder: Path) -> None:
    (folder / "results.json").write_bytes(PREVIOUS)
    (folder / "comment.md").write_bytes(PREVIOUS)


# (case, extra arguments; `{ro}` is the read-only folder)
BEFORE_ANY_WORK: list[tuple[str, list[str], str]] = [
    ("--json is a folder", ["--json", "docs"], "docs: cannot write the --json output: it is a folder"),
    ("--markdown is a folder", ["--markdown", "docs"], "cannot write the --markdown output: it is a folder"),
    ("--json under a file", ["--json", "golden.jsonl/out.json"], "golden.jsonl is a file, not a folder"),
    ("--json is a FIFO", ["--json", "fifo"], "not a regular file"),
    ("--json in a read-only folder", ["--json", "{ro}/results.json"], "{ro}/results.json: cannot write"),
    ("--markdown in a read-only folder", ["--markdown", "{ro}/comment.md"], "{ro}/comment.md: cannot write"),
    ("workspace is a file", ["--workspace", "golden.jsonl"], "golden.jsonl: the workspace is a file"),
    ("workspace in a read-only folder", ["--workspace", "{ro}/ws"], "cannot create the workspace"),
    ("workspace read-only", ["--workspace", "{ro}"], "the workspace is not writable"),
]


@pytest.mark.parametrize(("case", "extra", "says"), BEFORE_ANY_WORK, ids=[row[0] for row in BEFORE_ANY_WORK])
def test_an_output_that_cannot_be_written_fails_before_the_evaluation(
        inputs: Path, readonly: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch,
        case: str, extra: list[str], says: str) -> None:
    os.mkfifo(inputs / "fifo")
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")  # the history is written too, so the workspace is checked
    outcome = cli(*EVAL, "--retriever", "search:exits", *(a.replace("{ro}", str(readonly)) for a in extra))
    assert_refused(outcome, says.replace("{ro}", str(readonly)))  # exit 2: `search:exits` never ran (it gives 3)
    assert (readonly / "results.json").read_bytes() == PREVIOUS
    assert (readonly / "comment.md").read_bytes() == PREVIOUS
    assert leftovers(inputs) == []


def _limit_file_size(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_a_file_size_limit_during_the_write_keeps_the_previous_file(inputs: Path, flag: str) -> None:
    out = inputs / "out"
    out.write_bytes(PREVIOUS)
    outcome = run_process([*EVAL[:-1], flag, out], cwd=inputs, preexec=_limit_file_size(256))
    assert_refused(outcome, f"{out}: cannot write: the file-size limit was reached (ulimit -f)")
    assert out.read_bytes() == PREVIOUS
    assert leftovers(inputs) == []


def test_compare_markdown_under_a_file_size_limit_keeps_the_previous_comment(results: Path) -> None:
    # the example: the previous comment file was replaced by a 1,024-byte fragment
    comment = results.parent / "comment.md"
    comment.write_bytes(PREVIOUS)
    outcome = run_process(["compare", results, "--resamples", "200", "--markdown", comment], cwd=results.parent,
                          preexec=_limit_file_size(1024))
    assert_refused(outcome, f"{comment}: cannot write: the file-size limit")
    assert comment.read_bytes() == PREVIOUS
    assert leftovers(results.parent) == []


def test_report_html_under_a_file_size_limit_keeps_the_previous_page(results: Path) -> None:
    page = results.parent / "page.html"
    page.write_bytes(PREVIOUS)
    outcome = run_process(["report", results, "--html", page], cwd=results.parent, preexec=_limit_file_size(4096))
    assert_refused(outcome, f"{page}: cannot write: the file-size limit")
    assert page.read_bytes() == PREVIOUS
    assert leftovers(results.parent) == []


def test_a_full_disk_during_the_write_keeps_the_previous_file(inputs: Path, full_disk: Path,
                                                              cli: Callable[..., Outcome]) -> None:
    outcome = cli(*EVAL, "--json", full_disk / "results.json")
    assert_refused(outcome, f"{full_disk / 'results.json'}: cannot write: no space left on the device")
    assert (full_disk / "results.json").read_bytes() == PREVIOUS
    assert leftovers(full_disk) == []


def test_a_history_that_cannot_be_written_is_one_warning_after_the_results(inputs: Path, cli: Callable[..., Outcome],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # the history is secondary: the evaluation's own outputs are written, the history's failure named
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")
    (inputs / ".goldeval").mkdir()
    (inputs / ".goldeval" / "history.sqlite").write_bytes(b"this is not a database, and stays as it is")
    outcome = cli(*EVAL, "--json", "results.json")
    assert_clean(outcome, 0, "history.sqlite", "not recorded in the history")
    assert (inputs / "results.json").exists()  # the user's own output was written first
    assert (inputs / ".goldeval" / "history.sqlite").read_bytes() == b"this is not a database, and stays as it is"


def test_write_atomic_turns_every_os_error_into_one_write_error(tmp_path: Path) -> None:
    from goldeval.errors import InputError
    from goldeval.store.atomic import write_atomic

    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match=r"folder: cannot write: it is a folder"):
        write_atomic(tmp_path / "folder", "text")
    with pytest.raises(OSError):  # a WriteError is still an OSError, for callers that degrade on one
        write_atomic(tmp_path / "folder", "text")
    assert leftovers(tmp_path) == []
