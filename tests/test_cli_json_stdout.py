"""`--json -`: the JSON on stdout, and nothing else there (tables, notes and progress go to stderr), for every
command that has `--json` (`goldeval.cli.output`). Machine output on stdout, diagnostics on stderr
(shared/STYLE.md, "CLI as a thin layer")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import goldeval
from goldeval.cli import build_parser, main
from hang_guard import HANG_GUARD

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
CLI = Path(goldeval.__file__).resolve().parent / "cli"
EVAL = ["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
        "--k", "1,3", "--no-history"]


def without_clock(card: dict[str, object]) -> dict[str, object]:
    """A results dict less what differs between two runs of one evaluation: when (`created`) and how long
    a search took (`seconds`)."""
    text = re.sub(r'"(created|seconds)": [^,}\]]+', r'"\1": null', json.dumps(card, sort_keys=True))
    return dict(json.loads(text))


def test_json_dash_not_implemented_eval_writes_pure_json_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: `--json -` was not implemented (`-` was a file named `-`); the JSON belongs on stdout."""
    monkeypatch.chdir(tmp_path)
    assert main([*EVAL, "--workspace", str(tmp_path / "ws"), "--json", "-"]) == 0
    done = capsys.readouterr()
    card = json.loads(done.out)  # stdout is the JSON and nothing else
    assert [r["name"] for r in card["retrievers"]] == ["bm25"] and card["retrievers"][0]["metrics"]["hit@1"] > 0
    assert not (tmp_path / "-").exists()  # no file named `-`
    assert "hit@1" in done.err and "bm25" in done.err  # the scorecard table went to stderr
    assert "goldeval: wrote" not in done.err
    file = tmp_path / "results.json"
    assert main([*EVAL, "--workspace", str(tmp_path / "ws2"), "--json", str(file)]) == 0  # searched again too
    assert f"goldeval: wrote {file}" in capsys.readouterr().err
    assert without_clock(card) == without_clock(json.loads(file.read_text()))  # the same JSON as the file's


def test_eval_json_dash_in_a_real_process_keeps_stdout_pure(tmp_path: Path) -> None:
    """The process's own stdout (file descriptor 1), progress bars and rich's console included."""
    env = {**os.environ, "GOLDEVAL_NO_HISTORY": "1", "PYTHONPATH": str(Path(goldeval.__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-m", "goldeval", *EVAL, "--workspace", str(tmp_path / "ws"), "--json", "-"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr[-2000:]
    card = json.loads(done.stdout)
    assert card["retrievers"][0]["name"] == "bm25"
    assert "hit@1" in done.stderr


def test_compare_json_dash_is_the_file_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.json"
    assert main([*EVAL, "--retriever", "bm25", "--retriever", "bm25?k1=0.5", "--workspace", str(tmp_path / "ws"),
                 "--json", str(results), "--quiet"]) == 0
    capsys.readouterr()
    args = ["compare", str(results), "--resamples", "200", "--workspace", str(tmp_path / "ws")]
    assert main([*args, "--json", "-"]) == 0
    done = capsys.readouterr()
    on_stdout = json.loads(done.out)
    assert "bm25" in done.err and "goldeval: wrote" not in done.err  # the tables on stderr
    file = tmp_path / "cmp.json"
    assert main([*args, "--json", str(file)]) == 0
    capsys.readouterr()
    assert on_stdout == json.loads(file.read_text())


def test_models_json_dash_prints_the_list_and_the_table_goes_to_stderr(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "models.json"
    assert main(["models", "--json", str(file)]) == 0
    capsys.readouterr()
    assert main(["models", "--json", "-"]) == 0
    done = capsys.readouterr()
    assert json.loads(done.out) == json.loads(file.read_text())
    assert "minilm" in done.err and "warning" not in done.err  # the table, and no word of the bare form


def test_pool_refuses_list_and_json_dash_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pool", str(tmp_path / "r.json"), "--golden", str(tmp_path / "g.jsonl"), "--list", "--json", "-"]) == 2
    assert "--list and --json - both print on stdout" in capsys.readouterr().err


def test_json_dash_leaves_stdout_as_it_was_after_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    before = sys.stdout
    assert main(["models", "--json", "-"]) == 0
    assert sys.stdout is before
    assert main(["models"]) == 0
    assert "minilm" in capsys.readouterr().out  # without --json -, the table is on stdout again


def commands_with_json() -> list[str]:
    """Every command (and subcommand) whose parser takes --json."""
    found: list[str] = []

    def walk(parser: object, path: tuple[str, ...]) -> None:
        for action in parser._actions:  # type: ignore[attr-defined]
            if action.__class__.__name__ == "_SubParsersAction":
                for name, child in action.choices.items():
                    walk(child, (*path, name))
            elif "--json" in action.option_strings:
                found.append(" ".join(path))

    walk(build_parser(), ())
    return found


def test_every_command_with_json_writes_it_through_the_one_output_helper() -> None:
    """`--json -` holds for every command only if each hands its OUT to `goldeval.cli.output`: no command
    writes `args.json` itself."""
    commands = commands_with_json()
    assert {"eval", "compare", "models", "demo", "serve", "pool", "judge", "sweep", "history", "history trend"} <= set(commands)
    for command in {c.split()[0] for c in commands}:
        source = (CLI / f"{command}_cmd.py").read_text(encoding="utf-8")
        assert "write_atomic(args.json" not in source and ".save(args.json" not in source, command
        assert "check_writable(args.json" not in source, command
        assert re.search(r"(write_json|save_json)\(args\.json", source), command
