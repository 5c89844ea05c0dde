"""One vocabulary of options (issue 22): every parser of every command walked, one meaning per flag name and
one spelling per meaning; the defaults printed by the parser, never hand-written; the old spellings of the
last release still work, each with one warning naming the new one (`goldeval.cli.options`)."""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from goldeval.cli import build_parser, main
from goldeval.cli.options import OPTIONS, Renamed, Unused

OLD = {  # (command, old spelling) -> the new spelling: the migration in CHANGELOG.md
    ("eval", "--backend"): "--index", ("serve", "--backend"): "--index",
    ("synth", "--backend"): "--llm", ("demo", "--synth-backend"): "--llm", ("pool", "--prelabel"): "--llm",
    ("serve", "--judge"): "--by", ("pool", "--judge"): "--by", ("review", "--reviewer"): "--by",
    ("pool", "--k"): "--depth", ("sweep", "--chunking"): "--chunk",
    ("history trend", "--version"): "--golden-version",
}
"""Every old spelling, where it was: hidden, and only a `Renamed` pointing at its new spelling."""

MEANINGS = {  # a meaning people ask for -> its one spelling (an option of cli.options)
    "who acted": "--by", "the language model": "--llm", "the vector index": "--index",
    "no run history": "--no-history", "JSON written to a file": "--json", "open the page": "--open",
    "chunking": "--chunk", "how deep a ranking goes": "--depth", "the cut-offs": "--k",
}
RETIRED = {"--judge", "--reviewer", "--synth-backend", "--prelabel", "--chunking", "--backend"}
"""Old spellings no command takes as its own any more (`--k` and `--version` keep their other meaning)."""


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.Action]]:
    """Every (command, option) of `parser` and the parsers below it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from walk(child, (*path, name))
        elif action.option_strings and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield " ".join(path), action


ACTIONS = list(walk(build_parser()))
LIVE = [(command, action) for command, action in ACTIONS if not isinstance(action, (Renamed, Unused))]
"""Every flag that means something: not an old spelling (`Renamed`) nor a retired flag (`Unused`), both hidden."""


def signature(action: argparse.Action) -> tuple[object, ...]:
    """What a flag means to argparse: where it goes, what it reads, which values it takes."""
    kind = getattr(action.type, "__name__", action.type)
    return action.dest, kind, tuple(action.choices or ())


def test_the_walk_sees_every_command() -> None:
    commands = {command for command, _ in ACTIONS}
    assert {"eval", "serve", "pool", "review", "sweep", "synth", "demo", "golden add", "history trend",
            "pg cleanup", "models", "compare", "report"} <= commands
    assert len(LIVE) > 150


def test_one_flag_name_has_one_meaning() -> None:
    by_flag: dict[str, list[tuple[str, argparse.Action]]] = defaultdict(list)
    for command, action in LIVE:
        for flag in action.option_strings:
            by_flag[flag].append((command, action))
    problems = []
    for flag, uses in by_flag.items():
        homes = {getattr(action, "home", None) for _, action in uses}
        if homes != {None}:  # declared from cli.options: the same option everywhere, its meaning first in the help
            option = OPTIONS[next(iter(homes - {None}))]
            problems += [f"{flag} in {c}: not declared from cli.options" for c, a in uses if getattr(a, "home", None) is None]
            problems += [f"{flag} in {c}: {signature(a)} is not {signature(uses[0][1])}"
                         for c, a in uses if signature(a) != signature(uses[0][1])]
            problems += [f"{flag} in {c}: help does not start with the one meaning" for c, a in uses
                         if not (a.help or "").startswith(option.help)]
        elif len({command for command, _ in uses}) > 1:  # declared by hand in several commands: must be one thing
            shapes = {(signature(a), a.help, a.nargs, type(a).__name__) for _, a in uses}
            if len(shapes) > 1:
                problems.append(f"{flag}: {len(shapes)} meanings in {sorted({c for c, _ in uses})}")
    assert problems == []


def test_the_shared_flags_are_declared_from_the_one_home() -> None:
    """A flag two commands share comes from cli.options, unless one function declares it for both."""
    homes = {option.flag for option in OPTIONS.values()}
    hand = {(c, f) for c, a in LIVE for f in a.option_strings if f in homes and getattr(a, "home", None) is None}
    assert hand == set()
    dests = [option.dest for option in OPTIONS.values()]
    assert len(dests) == len(set(dests))  # two spellings for one meaning in the home itself


def test_one_meaning_has_one_spelling() -> None:
    homes = {option.dest: option for option in OPTIONS.values()}
    for meaning, spelling in MEANINGS.items():
        assert any(spelling in a.option_strings and getattr(a, "home", None) for _, a in LIVE), meaning
    problems = [f"{c}: {a.option_strings} spells {homes[a.dest].flag}" for c, a in LIVE
                if a.dest in homes and a.option_strings[0] != homes[a.dest].flag]
    problems += [f"{c}: {f} is retired" for c, a in LIVE for f in a.option_strings if f in RETIRED]
    for command, action in LIVE:  # within a command, one dest is one visible flag
        twins = [a for c, a in LIVE if c == command and a.dest == action.dest and a is not action]
        problems += [f"{command}: {action.option_strings} and {t.option_strings}" for t in twins]
    assert problems == []


def test_every_old_spelling_is_hidden_and_points_at_the_new_one() -> None:
    renamed = {(c, a.option_strings[0]): a for c, a in ACTIONS if isinstance(a, Renamed)}
    assert set(renamed) == set(OLD)
    for (command, old), action in renamed.items():
        assert action.help == argparse.SUPPRESS
        assert action.target.option_strings[0] == OLD[command, old]
        live = {f for c, a in LIVE if c == command for f in a.option_strings}
        assert old not in live and OLD[command, old] in live


def test_no_help_writes_its_own_default() -> None:
    written = [(c, a.option_strings[0]) for c, a in LIVE if re.search(r"\(default|default:", a.help or "")]
    assert written == []


@pytest.mark.parametrize(("argv", "expected"), [
    (["eval"], ["--k K,K,...", "(default: 1,5,10)", "(default: $GOLDEVAL_WORKSPACE, else .goldeval)",
                "(default: 100)", "(default: 5M)", "(default: 60)", "(default: exact, or a spec's own ?backend=)"]),
    (["pool"], ["--open, --no-open", "(default: open when stdout is a terminal)", "(default: 8767)", "(default: 10)"]),
    (["synth"], ["(default: 1500:200)", "(default: $GOLDEVAL_SYNTH_BACKEND)", "(default: 30)"]),
    (["sweep"], ["(default: the sweep file's, else 1,5,10)"]),
])
def test_help_prints_the_declared_defaults(argv: list[str], expected: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert [e for e in expected if e not in text] == []
    assert "--backend" not in text and "--judge" not in text and "--prelabel" not in text


@pytest.mark.parametrize(("argv", "dest", "value"), [
    (["eval", "--backend", "ann"], "index", "ann"),
    (["serve", "--backend", "exact"], "index", "exact"),
    (["synth", "--backend", "openai:gpt-4o-mini"], "llm", "openai:gpt-4o-mini"),
    (["demo", "--synth-backend", "anthropic:m"], "llm", "anthropic:m"),
    (["pool", "r.json", "--golden", "g.jsonl", "--prelabel", "openai:m"], "llm", "openai:m"),
    (["pool", "r.json", "--golden", "g.jsonl", "--judge", "ana"], "by", "ana"),
    (["pool", "r.json", "--golden", "g.jsonl", "--k", "5"], "depth", 5),
    (["serve", "--judge", "ana"], "by", "ana"),
    (["review", "c.jsonl", "--golden", "g.jsonl", "--reviewer", "bo"], "by", "bo"),
    (["sweep", "--chunking", "none,600:100"], "chunk", "none,600:100"),
    (["history", "trend", "--version", "3"], "golden_version", 3),
])
def test_an_old_spelling_warns_once_and_still_works(argv: list[str], dest: str, value: object,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == value
    old = next(a for a in argv if a in {o for _, o in OLD})
    new = OLD[" ".join(argv[:2]) if argv[0] == "history" else argv[0], old]
    assert capsys.readouterr().err.splitlines() == [
        f"goldeval: warning: {old} is renamed {new}; the old spelling goes in the next release (CHANGELOG.md)"]
    assert getattr(build_parser().parse_args([*argv[:-2], f"--{dest.replace('_', '-')}", argv[-1]]
                                             if argv[-2] == old else argv), dest) == value
    assert capsys.readouterr().err == ""


def test_pages_take_open_and_no_open_alike() -> None:
    base = {"serve": ["serve"], "review": ["review", "c.jsonl", "--golden", "g"], "pool": ["pool", "r", "--golden", "g"]}
    for argv in base.values():
        parser = build_parser()
        assert parser.parse_args([*argv, "--open"]).open is True
        assert parser.parse_args([*argv, "--no-open"]).open is False
        assert parser.parse_args(argv).open is False  # stdout is no terminal under pytest: one rule for every page


def test_models_json_writes_a_file_and_the_bare_flag_still_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "models.json"
    assert main(["models", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert rows and {"name", "installed", "install"} <= set(rows[0])
    capsys.readouterr()
    assert main(["models", "--json"]) == 0
    done = capsys.readouterr()
    assert json.loads(done.out) == rows
    assert "--json without OUT is renamed --json OUT" in done.err



@pytest.mark.parametrize("flag", ["--chunk", "--chunking"])
def test_the_sweep_chunk_dial_is_spelled_as_eval_spells_chunking(flag: str) -> None:
    from goldeval.cli.sweep_cmd import _inputs

    _, grid = _inputs(build_parser().parse_args(["sweep", flag, "none,120:30", "--retriever", "bm25"]))
    assert grid.values()["chunking"] == ["none", "120:30"]
