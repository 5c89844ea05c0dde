"""Text for the width there is: sentences wrapped at words, names broken at their own separators,
wide tables split into groups of columns (issue 13: at 80 columns names and sentences were cut
mid-phrase, because long lines were left to the terminal to fold wherever the edge fell).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

_NAME_BREAK = re.compile(r"(?<=[:+>?&/,(])")
"""A retriever name may break after these (`hybrid:|bm25+|dense:|minilm`), never inside a word."""
SEPARATOR = 3
"""Columns of a rich Table without edges are separated by one space, a rule and one space."""


def wrap(text: str, width: int, *, indent: int = 0, hang: int = 2) -> str:
    """`text` wrapped at spaces to `width`, first line indented by `indent`, the others by `indent + hang`.
    Words longer than a line (ids, URLs) stay whole: a line runs over rather than cutting one."""
    lines = []
    for paragraph in text.split("\n"):
        lines.append(textwrap.fill(paragraph, width=max(width, 20), initial_indent=" " * indent,
                                   subsequent_indent=" " * (indent + hang), break_long_words=False,
                                   break_on_hyphens=False) or "")
    return "\n".join(lines)


def say(console: Console, text: str, style: str | None = None, *, indent: int = 0, hang: int = 2) -> None:
    """Print plain text (never read as markup) wrapped for the console's width."""
    console.print(escape(wrap(text, console.width, indent=indent, hang=hang)), style=style, highlight=False,
                  soft_wrap=True)


def name_pieces(name: str) -> list[str]:
    return [p for p in _NAME_BREAK.split(name) if p]


def name_width(name: str) -> int:
    """The narrowest a name can be set without cutting a piece: its longest piece."""
    return max((len(p) for p in name_pieces(name)), default=0)


def break_name(name: str, width: int) -> str:
    """`hybrid:bm25+dense:minilm` in lines of at most `width` (unless one piece is longer), broken only
    after `:`, `+`, `>`, `?`, `&`, `/`, `,` or `(`."""
    lines: list[str] = []
    for piece in name_pieces(name):
        if lines and len(lines[-1]) + len(piece) <= width:
            lines[-1] += piece
        else:
            lines.append(piece)
    return "\n".join(lines)


def table_width(widths: Sequence[int]) -> int:
    """The printed width of an edgeless rich Table whose columns have these content widths."""
    return sum(widths) + SEPARATOR * max(len(widths) - 1, 0)


def column_groups(first: int, widths: Sequence[int], total: int) -> list[list[int]]:
    """Indices of `widths` in consecutive groups that each fit in `total` beside a first column of
    width `first` (one group when everything fits; a column wider than the rest alone makes a group)."""
    groups: list[list[int]] = []
    for i, w in enumerate(widths):
        if groups and table_width([first, *(widths[j] for j in groups[-1]), w]) <= total:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups
