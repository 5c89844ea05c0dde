"""A newcomer's first hour with only the README (issue 13, items 1, 2 and 5)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from goldeval.cli.models_cmd import model_rows, render_models

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def commands(text: str) -> list[str]:
    """Every line of the README's shell blocks, in order."""
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_readme_puts_goldeval_on_the_path_before_its_first_goldeval_command() -> None:
    lines = commands(README)
    first_demo = next(i for i, line in enumerate(lines) if line.startswith("make demo"))
    activate = next(i for i, line in enumerate(lines) if line.startswith("source .venv/bin/activate"))
    first_goldeval = next(i for i, line in enumerate(lines) if line.startswith("goldeval "))
    assert first_demo < activate < first_goldeval
    assert ".venv/bin/goldeval" in README


def test_models_prints_the_install_command_with_its_extra() -> None:
    """rich read `[st]` in `pip install 'goldeval[st]'` as markup and printed `pip install 'goldeval'`."""
    rows = [dict(row, installed=False, missing=row["packages"]) for row in model_rows()]
    console = Console(width=400, record=True, file=io.StringIO(), color_system=None)
    render_models(rows, console)
    text = console.export_text()
    assert "pip install 'goldeval[st]'" in text and "pip install 'goldeval[dense]'" in text
    for row in rows:
        assert row["install"] in text


def test_the_cranfield_table_and_the_command_above_it_use_one_depth() -> None:
    section = README[README.index("On Cranfield"):README.index("| retriever | nDCG@10 | MAP | recall@100 |")]
    depth = re.search(r"--depth (\d+)", section)
    assert depth is not None, "the Cranfield command must say its depth"
    bench = (ROOT / "bench" / "cranfield.py").read_text(encoding="utf-8")
    table_depth = re.search(r"^DEPTH = (\d+)", bench, flags=re.M)
    assert table_depth is not None and depth.group(1) == table_depth.group(1)
    assert "Depth matters for MAP" in section
    assert "--option long=truncate" in section and "(`long=truncate`)" in section  # as the table was measured


def test_the_headline_option_is_documented() -> None:
    assert "--headline hit@3" in README
