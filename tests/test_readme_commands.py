"""The README's and the docs' commands run on a fresh clone as printed (issue 17).

A user's clone has no `../shared/` beside it (the workspace's test data), so no page may point there; a
command that needs data goldeval does not ship (Cranfield, trec_eval's test files) says so in its comment
("which you bring", "files you bring") and has a runnable command beside it. Every other command of a
shell block that names the shipped `examples/` is run here, from a copy of `examples/` in a temporary
folder with nothing beside it, and so is the whole walk of docs/lifecycle.md, in order.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hang_guard import HANG_GUARD
from test_suggest import _write_log

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BRING_YOUR_OWN = ("which you bring", "files you bring")
"""What a command's comment says when it needs data the user brings; such a command is not run here."""
SERVES = ("goldeval serve", "goldeval review")
"""Commands that only serve a page until Ctrl+C: not run (the web tests drive those pages)."""


def shell_commands(page: Path) -> list[str]:
    """The commands of a page's sh, bash and console blocks (console: the `$ ` lines), continuations joined."""
    found = []
    for lang, body in re.findall(r"```(sh|bash|console)\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
        lines = body.replace("\\\n", " ").splitlines()
        for line in lines:
            line = line.strip()
            if lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if line and not line.startswith("#"):
                found.append(line)
    return found


def as_printed(pages: list[Path]) -> list[str]:
    """Commands on the shipped examples that must run from a fresh clone as printed (each once)."""
    commands = [c for page in pages for c in shell_commands(page)]
    runnable = [c for c in commands if "examples/" in c and not any(m in c for m in BRING_YOUR_OWN)]
    return list(dict.fromkeys(c for c in runnable if not c.startswith(("pip ", "python -m bench"))))


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """What a fresh clone holds that the commands read (examples/), in a folder with no shared/ beside it."""
    folder = tmp_path / "goldeval"
    shutil.copytree(ROOT / "examples", folder / "examples")
    assert not (folder.parent / "shared").exists()
    return folder


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One command through bash, with this environment's `goldeval` first on PATH, history on."""
    env = {k: v for k, v in os.environ.items() if k not in ("GOLDEVAL_NO_HISTORY", "GOLDEVAL_WORKSPACE")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if command.startswith("goldeval pool"):
        command += " --list"  # the pool as TSV, instead of the page that waits for a person
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD)


def test_no_page_points_into_the_workspace_beside_the_repository() -> None:
    for path in [*PAGES, *sorted((ROOT / "examples").glob("*.toml"))]:
        text = path.read_text(encoding="utf-8")
        assert "../shared" not in text and "shared/data" not in text, f"{path.name} names ../shared"


def test_commands_that_need_data_you_bring_say_so() -> None:
    commands = [c for page in PAGES for c in shell_commands(page)]
    for command in commands:
        if re.search(r"cranfield/|_cranfield|bench[. ]cranfield|'cranfield'|qrels\.test|results\.test", command):
            assert any(m in command for m in BRING_YOUR_OWN), f"needs data goldeval does not ship: {command}"


@pytest.mark.models
def test_the_commands_on_the_shipped_examples_run_as_printed(clone: Path) -> None:
    commands = as_printed(PAGES)
    # the README's quick look, trec and sweep, at least: a page losing them must not pass unnoticed
    assert any("--qrels example.qrels --run bm25.run" in c for c in commands)
    assert any(c.startswith("goldeval sweep examples/sweep_example.toml") for c in commands)
    for command in commands:
        done = run(command, clone)
        assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, command


@pytest.mark.models
def test_the_lifecycle_walk_runs_as_printed(clone: Path) -> None:
    walk = shell_commands(ROOT / "docs" / "lifecycle.md")
    assert walk[:2] == ["cp examples/data/golden_example.jsonl golden.jsonl", "cp examples/data/queries.jsonl queries.jsonl"]
    for command in (c for c in walk if not c.startswith(SERVES)):
        done = run(command, clone)
        assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, command
    assert (clone / "candidates.jsonl").is_file() and (clone / "comment.md").is_file()


def test_the_shipped_search_log_is_the_one_the_suggest_tests_use(tmp_path: Path) -> None:
    assert (ROOT / "examples" / "data" / "queries.jsonl").read_text(encoding="utf-8") == \
        _write_log(tmp_path / "queries.jsonl").read_text(encoding="utf-8")
