"""`goldeval --help` imports no command and nothing heavy (issue 22; its time is measured in bench/bench_cli.py,
never asserted here): only the command being run is imported, and each command's one-line help has one home."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from goldeval.cli import COMMANDS, build_parser

HEAVY = ["numpy", "rich", "bm25s", "goldeval.scorecard", "goldeval.evaluation", "goldeval.retrievers",
         "goldeval.corpus", "goldeval.golden", "goldeval.run"]


def modules_after(argv: list[str]) -> tuple[list[str], str]:
    """The modules a fresh interpreter holds after `goldeval ARGV`, and what it printed."""
    code = ("import contextlib, io, json, sys\nfrom goldeval.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    try:\n        main(sys.argv[1:])\n"
            "    except SystemExit:\n        pass\nprint(json.dumps([sorted(sys.modules), out.getvalue()]))")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True, timeout=120)
    modules, printed = json.loads(done.stdout)
    return modules, printed


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_help_imports_no_command_and_nothing_heavy() -> None:
    modules, printed = modules_after(["--help"])
    assert heavy(modules) == []
    assert [m for m in modules if m.startswith("goldeval.cli.")] == []
    words = " ".join(printed.split())  # argparse wraps the lines
    assert [name for name, line in COMMANDS.items() if f"{name} {line}" not in words] == []


def test_a_command_imports_its_own_module_only() -> None:
    modules, printed = modules_after(["trec", "--help"])
    assert [m for m in modules if m.endswith("_cmd")] == ["goldeval.cli.trec_cmd"]
    assert "usage: goldeval trec" in printed and "numpy" not in modules


def test_no_arguments_prints_the_help_and_exits_2() -> None:
    done = subprocess.run([sys.executable, "-m", "goldeval"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"pool {COMMANDS['pool']}" in " ".join(done.stderr.split())


def test_every_command_takes_its_help_from_commands() -> None:
    """The full parser (every module registered) shows the same lines `--help` lists without importing them."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {a.dest: a.help for a in sub._choices_actions} == COMMANDS
    assert list(sub.choices) == list(COMMANDS)
