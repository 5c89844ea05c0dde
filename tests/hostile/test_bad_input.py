"""Class 3: bad input that gave a traceback. Deeply nested JSON, lone surrogates, files that are not
files (a FIFO would block, /dev/zero would fill the memory), a user module that cannot be imported,
a search function that calls sys.exit(): each is one error naming where it is (exit 2), or, for what a
search function does on one question, that question's error (exit 3), never goldeval's own exit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hostile_cases import EVAL, Outcome, assert_clean, assert_refused, run_process, write_jsonl

DEEP = "[" * 100_000 + "]" * 100_000
GOOD = {"id": "q1", "question": "stash my uncommitted changes", "expected": ["git/stash.md"]}

# (case, the golden file's text, what the error says)
GOLDEN: list[tuple[str, str, str]] = [
    ("nested 100,000 deep", DEEP + "\n", "nested too deeply"),
    ("nested inside a question", json.dumps(GOOD)[:-1] + ', "notes": ' + DEEP + "}\n", "nested too deeply"),
    ("a deep JSON list", "[" + json.dumps(GOOD) + ", " + DEEP + "]\n", "nested too deeply"),
    ("lone surrogate in a question", '{"id": "q1", "question": "stash \\ud800 it", "expected": ["git/stash.md"]}\n',
     "golden.jsonl:1: question (\\ud800 at character 7): a lone surrogate"),
    ("lone surrogate in a tag", json.dumps(GOOD)[:-1] + ', "tags": ["ok", "\\udfff"]}\n', "tags[1] (\\udfff"),
    ("lone surrogate in an id", '{"id": "q\\udc80", "question": "x y", "expected": ["git/stash.md"]}\n',
     "id (\\udc80 at character 2)"),
    ("lone surrogate in an expected id", '{"id": "q1", "question": "x y", "expected": ["\\ud83d.md"]}\n',
     "expected[0] (\\ud83d"),
    ("binary", "\x00\x01\x02", "binary"),
]


@pytest.mark.parametrize(("case", "text", "says"), GOLDEN, ids=[row[0] for row in GOLDEN])
def test_a_hostile_golden_set_is_one_error_naming_it(inputs: Path, cli: Callable[..., Outcome], case: str,
                                                     text: str, says: str) -> None:
    (inputs / "golden.jsonl").write_text(text, encoding="utf-8", errors="surrogatepass")
    assert_refused(cli(*EVAL, "--json", "results.json"), "golden.jsonl", says)
    assert not (inputs / "results.json").exists()


# (case, the JSONL corpus's lines, what the error says)
CORPUS: list[tuple[str, str, str]] = [
    ("nested 100,000 deep", '{"id": "a", "text": "alpha"}\n' + DEEP + "\n", "corpus.jsonl:2: JSON nested too deeply"),
    ("lone surrogate in a text", '{"id": "a", "text": "alpha \\ud800 beta"}\n',
     "corpus.jsonl:1: text (\\ud800 at character 7): a lone surrogate"),
    ("lone surrogate in an id", '{"id": "a\\udc00", "text": "alpha"}\n', "corpus.jsonl:1: id (\\udc00"),
]


@pytest.mark.parametrize(("case", "text", "says"), CORPUS, ids=[row[0] for row in CORPUS])
def test_a_hostile_jsonl_corpus_is_one_error_naming_the_line(inputs: Path, cli: Callable[..., Outcome], case: str,
                                                             text: str, says: str) -> None:
    (inputs / "corpus.jsonl").write_text(text, encoding="utf-8")
    write_jsonl(inputs / "golden.jsonl", [{"id": "q1", "question": "alpha", "expected": ["a"]}])
    assert_refused(cli("eval", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", "--quiet"), says)


# (case, arguments, what the error says): inputs that are not regular files, run in a process of their
# own with a time limit, since the bug they guard against is a read that blocks or never ends
NOT_FILES: list[tuple[str, list[str], str]] = [
    ("--golden is a FIFO", ["eval", "--corpus", "docs", "--golden", "fifo"], "golden set is not a regular file"),
    ("--golden is /dev/zero", ["eval", "--corpus", "docs", "--golden", "/dev/zero"], "not a regular file"),
    ("--golden is /dev/stdin", ["eval", "--corpus", "docs", "--golden", "/dev/stdin"], "not a regular file"),
    ("--corpus is a FIFO .jsonl", ["eval", "--corpus", "fifo.jsonl", "--golden", "golden.jsonl"],
     "not a regular file"),
    ("--corpus is /dev/zero", ["eval", "--corpus", "/dev/zero", "--golden", "golden.jsonl"], "/dev/zero"),
    ("run: a FIFO", ["eval", "--golden", "golden.jsonl", "--retriever", "run:fifo"], "fifo"),
    ("run: /dev/zero", ["eval", "--golden", "golden.jsonl", "--retriever", "run:/dev/zero"], "/dev/zero"),
    ("compare a FIFO", ["compare", "fifo"], "results path is not a file"),
    ("report /dev/zero", ["report", "/dev/zero", "--html", "page.html"], "results path is not a file"),
]


@pytest.mark.parametrize(("case", "args", "says"), NOT_FILES, ids=[row[0] for row in NOT_FILES])
def test_an_input_that_is_not_a_regular_file_is_refused_without_reading_it(inputs: Path, case: str,
                                                                          args: list[str], says: str) -> None:
    os.mkfifo(inputs / "fifo")
    os.mkfifo(inputs / "fifo.jsonl")
    outcome = run_process([*args, "--quiet"] if args[0] == "eval" else args, cwd=inputs,
                          env={"PYTHONPATH": str(inputs)})
    assert_refused(outcome, says)


def test_a_fifo_inside_a_corpus_folder_is_skipped_with_a_warning(inputs: Path) -> None:
    os.mkfifo(inputs / "docs" / "pipe.md")
    # the folder loader stats before it opens (open() on a FIFO blocks until a writer comes): a run
    # that hung here would meet run_process's HANG_GUARD; 60 s was too short on a loaded machine (issue 17)
    outcome = run_process([*EVAL], cwd=inputs)
    assert_clean(outcome, 0, "skipped pipe.md: not a regular file")


# (case, the module's source, what the error says)
MODULES: list[tuple[str, str, str]] = [
    ("a syntax error", "def search(q, k:\n    return []\n", "has a syntax error at"),
    ("an exception at import", "raise RuntimeError('the index server is down')\n",
     "importing module 'usermod' for retriever 'usermod:search' failed: RuntimeError: the index server is down"),
    ("sys.exit() at import", "import sys\nsys.exit(5)\n", "failed: SystemExit: 5"),
    ("an import of a missing package", "import no_such_package_xyz\n", "No module named 'no_such_package_xyz'"),
    ("no such function", "def other(q, k):\n    return []\n", "usermod has no function 'search'"),
    ("not a function", "search = 42\n", "usermod has no function 'search'"),
]


@pytest.mark.parametrize(("case", "source", "says"), MODULES, ids=[row[0] for row in MODULES])
def test_a_user_module_that_cannot_be_imported_is_one_error(inputs: Path, cli: Callable[..., Outcome], case: str,
                                                            source: str, says: str) -> None:
    (inputs / "usermod.py").write_text(source, encoding="utf-8")
    assert_refused(cli(*EVAL, "--retriever", "usermod:search"), says)
    assert_refused(cli(*EVAL, "--retriever", "rerank:bm25>usermod:search"), "reranker")


def test_a_search_function_that_calls_sys_exit_fails_its_questions_not_goldeval(inputs: Path,
                                                                               cli: Callable[..., Outcome]) -> None:
    outcome = cli(*EVAL, "--retriever", "search:exits", "--retriever", "bm25", "--json", "results.json")
    assert_clean(outcome, 3, "called sys.exit(7)", "finished with retriever errors (exit 3)")
    data = json.loads((inputs / "results.json").read_text(encoding="utf-8"))
    exits, bm25 = data["retrievers"]
    assert all(q["error"] == "the search function called sys.exit(7)" for q in exits["questions"])
    assert not any(q["error"] for q in bm25["questions"])  # the other retriever ran, unharmed


def test_a_lone_surrogate_from_a_search_function_never_breaks_the_final_write(inputs: Path,
                                                                            cli: Callable[..., Outcome]) -> None:
    outcome = cli(*EVAL, "--retriever", "search:surrogate_id", "--json", "results.json", "--markdown", "comment.md")
    assert_clean(outcome, 0, "\\ud800-not-text.md")  # warned as an id outside the corpus, escaped
    data = json.loads((inputs / "results.json").read_text(encoding="utf-8"))
    assert data["retrievers"][0]["questions"][0]["top"][1]["id"] == "\ud800-not-text.md"  # kept exactly
    (inputs / "comment.md").read_text(encoding="utf-8")  # valid UTF-8


def build_broken(rest: str, ctx: object) -> object:
    """A retriever factory with a bug in it (as a plugin's could have)."""
    raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")


@pytest.fixture
def broken_factory() -> Iterator[None]:
    from goldeval.retrievers.base import _FACTORIES, register

    register("broken", f"{__name__}:build_broken")
    yield
    _FACTORIES.pop("broken", None)


def test_an_unexpected_exception_is_one_line_and_exit_4_unless_debugging(
        inputs: Path, cli: Callable[..., Outcome], broken_factory: None, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome = cli(*EVAL, "--retriever", "broken")
    assert outcome.code == 4 and "Traceback" not in outcome.err
    assert outcome.err.splitlines() == [
        "goldeval: internal error: TypeError: unsupported operand type(s) for +: 'int' and 'str'",
        "  hint: this is a bug in goldeval; run again with GOLDEVAL_DEBUG=1 to see the traceback, and report it",
    ]
    monkeypatch.setenv("GOLDEVAL_DEBUG", "1")
    with pytest.raises(TypeError, match="unsupported operand"):
        cli(*EVAL, "--retriever", "broken")
