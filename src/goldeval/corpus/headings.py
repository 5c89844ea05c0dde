"""Find section headings in Markdown and reStructuredText, for titles and heading-aware chunking.

Markdown: ATX headings (`# Title` .. `###### Title`) and setext headings (a line underlined with
`===` or `---`, after a blank line), ignoring fenced code (``` or ~~~) and YAML front matter.
reST: a title line under- (and optionally over-) lined by one repeated punctuation character at
least as long as the title, after a blank line (docutils' rule). reST has no fixed levels: the
order in which underline styles first appear sets them, as docutils does.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from goldeval.types import DocId

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(\S.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.M)
_PUNCT = r"[!-/:-@\[-`{-~]"
# Underlines are found first and the title looked up on the line above: scanning every line as a
# possible title with one regex is several times slower on long documents.
_REST_UNDER = re.compile(rf"^({_PUNCT})\1+[ \t]*$", re.M)
_SETEXT_UNDER = re.compile(r"^ {0,3}(=+|-+)[ \t]*$", re.M)
_ONLY_PUNCT = re.compile(rf"^{_PUNCT}+$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_ROLE = re.compile(r"(?::[\w.+-]+)+:`([^`<]*?)\s*(?:<[^>]*>)?`")

STYLES = ("markdown", "rest", "auto", "none")


@dataclass(frozen=True)
class Heading:
    """A section heading from `start` (its first line: the overline, if any) to `end` (after its
    last line, the underline for reST)."""

    start: int
    end: int
    level: int
    title: str


def style_for(doc_id: DocId) -> str:
    """The heading syntax a document uses, guessed from its id's extension."""
    name = doc_id.lower()
    if name.endswith((".md", ".markdown")):
        return "markdown"
    if name.endswith((".rst", ".txt")):  # Sphinx ships its reST sources as `page.rst.txt`
        return "rest"
    if name.endswith((".html", ".htm")):
        return "markdown"  # the HTML loader writes headings as `## Heading` lines
    return "auto"


def find_headings(text: str, style: str = "auto") -> list[Heading]:
    """Headings in document order. `auto` tries Markdown first, then reST."""
    if style == "markdown":
        return _markdown(text)
    if style == "rest":
        return _rest(text)
    if style == "auto":
        return _markdown(text) or _rest(text)
    return []


def first_title(text: str, style: str = "auto") -> str:
    """The text of the first heading, or an empty string."""
    headings = find_headings(text, style)
    return headings[0].title if headings else ""


def _markdown(text: str) -> list[Heading]:
    if "#" not in text and "\n=" not in text and "\n-" not in text:
        return []
    body_start = _front_matter_end(text)
    fences = [m.start() for m in _FENCE.finditer(text)] if "```" in text or "~~~" in text else []
    found = [Heading(m.start(), m.end(), len(m.group(1)), clean_title(m.group(2))) for m in _ATX.finditer(text)]
    for under_start, under_end, under in _underlines(text, _SETEXT_UNDER):
        title_start, title = _line_before(text, under_start)
        if (title.strip() and len(title) - len(title.lstrip(" ")) <= 3 and _after_blank_line(text, title_start)
                and not _ONLY_PUNCT.match(title.strip()) and not title.lstrip().startswith(("- ", "* ", "> ", "|"))):
            level = 1 if under.lstrip()[0] == "=" else 2
            found.append(Heading(title_start, under_end, level, clean_title(title)))
    # an even number of fences before a heading: it is outside code
    keep = [h for h in found if h.start >= body_start and bisect_left(fences, h.start) % 2 == 0]
    return sorted(keep, key=lambda h: h.start)


def _front_matter_end(text: str) -> int:
    """Offset after a leading YAML front matter block (`---` ... `---`), else 0."""
    if not text.startswith("---\n"):
        return 0
    close = text.find("\n---", 3)
    return 0 if close < 0 else close + 4


def clean_title(title: str) -> str:
    """A heading as plain text: Markdown links and images keep their text, reST roles their content."""
    return _ROLE.sub(r"\1", _LINK.sub(r"\1", title)).strip()


def _rest(text: str) -> list[Heading]:
    levels: dict[tuple[str, bool], int] = {}
    out: list[Heading] = []
    for under_start, under_end, under in _underlines(text, _REST_UNDER):
        title_start, title = _line_before(text, under_start)
        title = title.rstrip()
        if not title or title[0].isspace() or len(under) < len(title) or _ONLY_PUNCT.match(title):
            continue
        start, overlined = title_start, False
        if title_start > 0:
            over_start, over = _line_before(text, title_start)
            over = over.rstrip()
            if over and over == under[0] * len(over) and len(over) >= len(title):
                start, overlined = over_start, True
        if not _after_blank_line(text, start):
            continue
        level = levels.setdefault((under[0], overlined), len(levels) + 1)
        out.append(Heading(start, under_end, level, clean_title(title)))
    return out


def _underlines(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int, str]]:
    """(start, end, text without trailing blanks) of each underline-shaped line not on line 1."""
    return [(m.start(), m.end(), m.group(0).rstrip()) for m in pattern.finditer(text) if m.start() > 0]


def _line_before(text: str, line_start: int) -> tuple[int, str]:
    """The start and text of the line before the line that starts at `line_start` (> 0)."""
    start = text.rfind("\n", 0, line_start - 1) + 1
    return start, text[start : line_start - 1]


def _after_blank_line(text: str, start: int) -> bool:
    if start == 0:
        return True
    prev_start = text.rfind("\n", 0, start - 1) + 1
    return not text[prev_start : start - 1].strip()
