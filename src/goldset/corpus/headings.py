"""Find section headings in Markdown and reStructuredText, for titles and heading-aware chunking.

Markdown: ATX headings (`# Title` .. `###### Title`), ignoring lines inside ``` or ~~~ fences.
reST: a title line under- (and optionally over-) lined by one repeated punctuation character at
least as long as the title, after a blank line (docutils' rule). reST has no fixed levels: the
order in which underline styles first appear sets them, as docutils does.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from goldset.types import DocId

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(\S.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.M)
_PUNCT = r"[!-/:-@\[-`{-~]"
_REST = re.compile(
    rf"^(?:(?P<over>(?P<oc>{_PUNCT})(?P=oc)+)[ \t]*\n)?"
    rf"(?P<title>\S[^\n]*?)[ \t]*\n"
    rf"(?P<under>(?P<uc>{_PUNCT})(?P=uc)+)[ \t]*$",
    re.M,
)
_ONLY_PUNCT = re.compile(rf"^{_PUNCT}+$")

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
        return "none"
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
    if style == "markdown":
        match = _ATX.search(text)  # cheap path: fences rarely come before the first heading
        if match and not _fenced_before(text, match.start()):
            return match.group(2).strip()
    headings = find_headings(text, style)
    return headings[0].title if headings else ""


def _fenced_before(text: str, pos: int) -> bool:
    return len(_FENCE.findall(text, 0, pos)) % 2 == 1


def _markdown(text: str) -> list[Heading]:
    if "#" not in text:
        return []
    fences = [m.start() for m in _FENCE.finditer(text)]
    out: list[Heading] = []
    for match in _ATX.finditer(text):
        if bisect_left(fences, match.start()) % 2 == 0:  # an even number of fences before: outside
            out.append(Heading(match.start(), match.end(), len(match.group(1)), match.group(2).strip()))
    return out


def _rest(text: str) -> list[Heading]:
    levels: dict[tuple[str, bool], int] = {}
    out: list[Heading] = []
    for match in _REST.finditer(text):
        title, under, over = match.group("title"), match.group("under"), match.group("over")
        if len(under) < len(title) or _ONLY_PUNCT.match(title):
            continue
        if over is not None and (match.group("oc") != match.group("uc") or len(over) < len(title)):
            continue
        start = match.start()
        if not _after_blank_line(text, start):
            continue
        key = (match.group("uc"), over is not None)
        level = levels.setdefault(key, len(levels) + 1)
        out.append(Heading(start, match.end(), level, title.strip()))
    return out


def _after_blank_line(text: str, start: int) -> bool:
    if start == 0:
        return True
    prev_start = text.rfind("\n", 0, start - 1) + 1
    return not text[prev_start : start - 1].strip()
