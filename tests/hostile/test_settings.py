"""Class 2: a documented setting that does nothing. `$GOLDEVAL_WORKSPACE` moves the workspace of every
command and of `evaluate()`; `--workspace` wins over it. And settings that would make every question
fail, or exhaust the machine, are refused before any work, naming the flag.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_cases import EVAL, Outcome, assert_clean, assert_refused

from goldeval.retrievers.base import _FACTORIES, BuildContext, register
from goldeval.run import Run

SEEN: list[Path] = []


class _Probe:
    """A retriever that records the workspace its factory was given."""

    name = "probe"

    def search(self, queries: dict[str, str], *, top_k: int) -> Run:
        return Run(self.name, {q: [("git/stash.md", 1.0)] for q in queries})


def build_probe(rest: str, ctx: BuildContext) -> _Probe:
    SEEN.append(ctx.workspace)
    return _Probe()


@pytest.fixture
def probe() -> list[Path]:
    SEEN.clear()
    register("probe", f"{__name__}:build_probe")
    yield SEEN
    _FACTORIES.pop("probe", None)


def test_the_environment_variable_moves_evaluates_workspace(inputs: Path, probe: list[Path],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeval import evaluate
    from goldeval.corpus import load_corpus
    from goldeval.golden.io import load_golden

    monkeypatch.setenv("GOLDEVAL_WORKSPACE", str(inputs / "elsewhere"))
    corpus = load_corpus(inputs / "docs")
    evaluate("probe", load_golden(inputs / "golden.jsonl"), corpus=corpus)
    evaluate("probe", load_golden(inputs / "golden.jsonl"), corpus=corpus, workspace=inputs / "given")
    assert probe == [inputs / "elsewhere", inputs / "given"]
    assert BuildContext([]).workspace == inputs / "elsewhere"


# (case, GOLDEVAL_WORKSPACE, extra flags, where the history must be written)
WHERE: list[tuple[str, str | None, list[str], str]] = [
    ("default", None, [], ".goldeval"),
    ("empty variable", "", [], ".goldeval"),
    ("variable", "from-env", [], "from-env"),
    ("flag wins over the variable", "from-env", ["--workspace", "from-flag"], "from-flag"),
]


@pytest.mark.parametrize(("case", "env", "extra", "where"), WHERE, ids=[row[0] for row in WHERE])
def test_every_command_finds_the_workspace_the_same_way(inputs: Path, cli: Callable[..., Outcome],
                                                         monkeypatch: pytest.MonkeyPatch, case: str,
                                                         env: str | None, extra: list[str], where: str) -> None:
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")
    if env is not None:
        monkeypatch.setenv("GOLDEVAL_WORKSPACE", env)
    assert_clean(cli(*EVAL, *extra), 0)
    assert_clean(cli(*EVAL, "--retriever", "bm25?stem=none", *extra), 0)
    assert (inputs / where / "history.sqlite").is_file()
    others = {".goldeval", "from-env", "from-flag"} - {where}
    assert not any((inputs / name).exists() for name in others)
    assert_clean(cli("history", "--json", "runs.json", *extra), 0)  # reads the same workspace
    assert [r["retrievers"] for r in json.loads((inputs / "runs.json").read_text())] == [["bm25?stem=none"], ["bm25"]]
    assert_clean(cli("compare", "@last~1", "@last", "--resamples", "200", *extra), 0)


def test_a_workspace_variable_naming_a_file_is_one_error(inputs: Path, cli: Callable[..., Outcome],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")
    monkeypatch.setenv("GOLDEVAL_WORKSPACE", "golden.jsonl")
    assert_refused(cli(*EVAL), "golden.jsonl: the workspace is a file", "GOLDEVAL_WORKSPACE")


# (case, flags, what the error says): refused before the corpus is read or a question searched
REFUSED: list[tuple[str, list[str], str]] = [
    ("--timeout nan", ["--timeout", "nan", "--retriever", "search:good"], "--timeout must be a positive, finite"),
    ("--timeout inf", ["--timeout", "inf", "--retriever", "search:good"], "--timeout must be a positive, finite"),
    ("--timeout inf for bm25", ["--timeout", "inf"], "--timeout must be a positive, finite"),
    ("--timeout 0", ["--timeout", "0", "--retriever", "search:good"], "--timeout must be a positive, finite"),
    ("--timeout -1", ["--timeout", "-1", "--retriever", "search:good"], "--timeout must be a positive, finite"),
    ("spec timeout nan", ["--retriever", "search:good?timeout=nan"], "must be a finite number"),
    ("--resamples 0", ["--resamples", "0"], "resamples must be between 100 and 1,000,000"),
    ("--resamples a billion", ["--resamples", "1000000000"], "resamples must be between 100 and 1,000,000"),
    ("--max-doc-size 0", ["--max-doc-size", "0"], "argument --max-doc-size: size must be at least 1 byte"),
    ("--max-doc-size words", ["--max-doc-size", "big"], "argument --max-doc-size: not a size"),
    ("--depth 0", ["--depth", "0"], "depth must be between 1 and 10,000, got 0"),
]


@pytest.mark.parametrize(("case", "flags", "says"), REFUSED, ids=[row[0] for row in REFUSED])
def test_a_setting_that_cannot_work_is_refused_up_front(inputs: Path, cli: Callable[..., Outcome], case: str,
                                                        flags: list[str], says: str) -> None:
    args = [a for a in EVAL if a != "--no-stats"] if "--resamples" in flags else EVAL
    assert_refused(cli(*args, *flags), says)


def test_compare_refuses_unbounded_resamples_before_reading(results: Path, cli: Callable[..., Outcome]) -> None:
    assert_refused(cli("compare", results, "--resamples", "10000000000"), "resamples must be between 100 and")
