"""Help texts point at documentation a wheel user has (issue 22): `goldeval docs [PAGE]` reads the pages
installed with the package (`goldeval/manual`, the repository's docs/ carried as package data)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from goldeval.cli import build_parser, main
from goldeval.cli.docs_cmd import folder, pages

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_the_installed_pages_are_the_docs() -> None:
    assert sorted(pages()) == sorted(p.stem for p in DOCS.glob("*.md")) and len(pages()) >= 10
    assert all(path.read_bytes() == (DOCS / path.name).read_bytes() for path in pages().values())
    assert "manual/*.md" in (ROOT / "pyproject.toml").read_text()  # what puts them in the wheel


def test_docs_lists_the_pages_and_prints_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs"]) == 0
    listing = capsys.readouterr().out
    assert str(folder()) in listing and re.search(r"^  sweep +\S", listing, flags=re.M)
    assert main(["docs", "sweep"]) == 0
    assert capsys.readouterr().out == (DOCS / "sweep.md").read_text(encoding="utf-8")


def test_an_unknown_page_is_one_line_with_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "swep"]) == 2
    err = capsys.readouterr().err
    assert "no documentation page 'swep'" in err and "goldeval docs sweep" in err and "Traceback" not in err


def parser_texts(parser: argparse.ArgumentParser) -> list[str]:
    """Every description, epilog and help string of `parser` and its subparsers."""
    texts = [parser.description or "", parser.epilog or ""]
    for action in parser._actions:
        texts.append(action.help or "")
        if isinstance(action, argparse._SubParsersAction):
            texts += [a.help or "" for a in action._choices_actions]
            for sub in action.choices.values():
                texts += parser_texts(sub)
    return texts


def test_no_help_text_points_at_a_repository_file() -> None:
    texts = parser_texts(build_parser())
    assert [t for t in texts if re.search(r"docs/[\w-]+\.md", t)] == []
    assert any("goldeval docs" in t for t in texts)


def test_every_page_a_message_names_exists() -> None:
    named = {m for path in (ROOT / "src" / "goldeval").rglob("*.py")
             for m in re.findall(r"`goldeval docs ([a-z][\w-]*)`", path.read_text(encoding="utf-8"))}
    assert named and named - set(pages()) == set()
