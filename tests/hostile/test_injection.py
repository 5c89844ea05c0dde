"""Class 7: injection into what people read. Questions, ids, tags, corpus file names and retriever error
messages are data: on the terminal their control characters (ANSI escapes, bidi overrides) appear as
visible escapes and never act; in `--markdown` their HTML and Markdown syntax is escaped and ids sit
in code spans that a backtick cannot close.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_cases import EVAL, Outcome, assert_clean, write_jsonl

from goldeval.textsafe import md_code

CLEAR = "\x1b[2J\x1b[31m"
RTL = "\u202e"
HOSTILE_QUESTIONS = [
    {"id": "q1", "question": f"stash my changes {CLEAR}now", "expected": ["git/stash.md"], "tags": ["</details><h1>x"]},
    {"id": "q`2", "question": "delete a <b>branch</b> | * [link](http://x)", "expected": ["git/branch.md"],
     "tags": ["a|b"]},
    {"id": f"q3{RTL}", "question": "replay commits on another base", "expected": ["git/rebase.md"]},
    {"id": "q4", "question": "how long to boil pasta", "expected": ["cooking/pasta.md"]},
    {"id": "q5", "question": "let the dough rise", "expected": ["evil\x1b[2J.md"]},
    {"id": "q6", "question": f"capital of peru{RTL}", "expected": []},
]
RAW = ("\x1b", "\u202e", "\x07")
"""What must never reach a reader's terminal from the data."""


@pytest.fixture
def hostile(inputs: Path) -> Path:
    (inputs / "docs" / "evil\x1b[2J.md").write_text("# Dough\n\nLet the dough rise, then bake.\n", encoding="utf-8")
    (inputs / "docs" / f"empty{RTL}\x1b[5m.md").write_text("", encoding="utf-8")  # a warning names it
    write_jsonl(inputs / "golden.jsonl", HOSTILE_QUESTIONS)
    return inputs


# (case, retrievers, extra flags)
RUNS: list[tuple[str, list[str], list[str]]] = [
    ("scorecard, misses and details", ["bm25"], ["--misses", "--details"]),
    ("statistics and two retrievers", ["bm25", "bm25?stem=none"], ["--misses", "--details", "--resamples", "200"]),
    ("a retriever error with escapes", ["search:ansi_error"], ["--misses"]),
    ("unknown ids", ["search:unknown"], []),
]


@pytest.mark.parametrize(("case", "retrievers", "flags"), RUNS, ids=[row[0] for row in RUNS])
def test_the_terminal_never_receives_control_characters_from_the_data(hostile: Path, cli: Callable[..., Outcome],
                                                                      case: str, retrievers: list[str],
                                                                      flags: list[str]) -> None:
    args = [a for a in EVAL if a != "--no-stats"] if "--resamples" in flags else EVAL
    outcome = cli(*args, *(x for r in retrievers for x in ("--retriever", r)), *flags)
    assert_clean(outcome, 3 if "ansi_error" in retrievers[0] else 0)
    for raw in RAW:
        assert raw not in outcome.out and raw not in outcome.err, (raw, outcome.out, outcome.err)
    shown = outcome.out + outcome.err
    assert "\\x1b[" in shown  # visible, as an escape: the reader sees that something odd was there


def test_compare_of_hostile_results_prints_no_control_characters(hostile: Path, cli: Callable[..., Outcome]) -> None:
    assert_clean(cli(*EVAL[:-1], "--retriever", "bm25", "--retriever", "bm25?stem=none", "--resamples", "200",
                     "--json", "a.json"), 0)
    data = json.loads((hostile / "a.json").read_text(encoding="utf-8"))
    data["retrievers"][1]["name"] = f"bm25{CLEAR}"  # an edited name: still data
    (hostile / "b.json").write_text(json.dumps(data), encoding="utf-8")
    outcome = cli("compare", "a.json", "b.json", "--resamples", "200", "--details", "--markdown", "comment.md")
    assert_clean(outcome, 0)
    for raw in RAW:
        assert raw not in outcome.out + outcome.err


def test_markdown_escapes_html_and_keeps_ids_in_whole_code_spans(hostile: Path, cli: Callable[..., Outcome]) -> None:
    outcome = cli(*EVAL[:-1], "--retriever", "bm25", "--retriever", "bm25?stem=none", "--resamples", "200",
                  "--markdown", "comment.md", "--json", "a.json")
    assert_clean(outcome, 0)
    text = (hostile / "comment.md").read_text(encoding="utf-8")
    for raw in (*RAW, "</details><h1>", "<b>branch</b>"):
        assert raw not in text, raw
    assert text.count("<details>") == text.count("</details>")  # only goldeval's own folds, each closed
    assert "&lt;/details>&lt;h1>x" in text  # the tag, shown as text
    assert md_code("bm25?stem=none") in text
    # every code span opens and closes on its line: no backtick left dangling by an id
    for line in text.splitlines():
        spans = re.findall(r"(`+)", line)
        assert all(spans.count(fence) % 2 == 0 for fence in set(spans)), line


def test_md_code_holds_any_id_verbatim() -> None:
    for raw, shown in [("q`2", "``q`2``"), ("`x", "`` `x ``"), ("a``b", "```a``b```"), ("", "`  `"), ("a|b", "`a|b`")]:
        assert md_code(raw) == shown
    assert md_code("a|b", table=True) == "`a\\|b`"


def test_pool_list_keeps_one_tsv_row_per_passage_and_no_control_characters(hostile: Path,
                                                                            cli: Callable[..., Outcome]) -> None:
    rows = [dict(q) for q in HOSTILE_QUESTIONS]
    rows[4] = {**rows[4], "question": "let\tthe dough\nrise\x07 now"}  # a tab, a newline, BEL
    write_jsonl(hostile / "golden.jsonl", rows)
    assert_clean(cli(*EVAL[:-1], "--retriever", "bm25", "--no-stats", "--json", "a.json"), 0)
    outcome = cli("pool", "a.json", "--golden", "golden.jsonl", "--list", "--depth", "3")
    assert_clean(outcome, 0)
    for raw in RAW:
        assert raw not in outcome.out + outcome.err
    lines = outcome.out.splitlines()
    assert lines[0].split("\t") == ["question", "passage", "found_by", "miss", "question_text"]
    assert all(len(line.split("\t")) == 5 for line in lines), lines  # the tab inside the question stays inside
    assert any("let\\x09the dough\\x0arise\\x07 now" in line for line in lines), lines


def test_golden_add_prints_what_it_was_given_as_visible_escapes(hostile: Path, cli: Callable[..., Outcome]) -> None:
    outcome = cli("golden", "add", "--golden", "golden.jsonl", "--question", f"reset {CLEAR}my password",
                  "--off-topic", "--id", f"new{RTL}\x07", "--incident", f"INC-7{CLEAR}")
    assert_clean(outcome, 0)
    for raw in RAW:
        assert raw not in outcome.out + outcome.err
    assert "new\\u202e\\x07" in outcome.out and "INC-7\\x1b[2J" in outcome.out
