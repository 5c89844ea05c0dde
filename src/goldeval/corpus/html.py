"""HTML to plain text with the standard library's parser: no extra dependency.

Script, style and other non-content elements are dropped; block elements become line breaks;
entities are decoded. Headings `<h1>`..`<h6>` become Markdown ATX lines (`## Usage`), so HTML
pages are chunked by section like Markdown. The title is `<title>`, else the first heading.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIP = {"script", "style", "noscript", "template", "svg", "iframe", "object"}
_BLOCK = {
    "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
    "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "th",
    "thead", "tr", "ul", "title", "body", "html",
}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_SPACES = re.compile(r"[ \t\f\v\u00a0]+")
_BLANKS = re.compile(r"\n{3,}")
_EMPTY_HEADING = re.compile(r"^#{1,6}$")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.in_title = False
        self.title_parts: list[str] = []
        self.heading_parts: list[str] | None = None
        self.first_heading = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIP:
            self.skip_depth += 1
        if tag in _HEADINGS and not self.first_heading:
            self.heading_parts = []
        if tag in _BLOCK:
            self.parts.append("\n")
        if tag in _HEADINGS and not self.skip_depth:
            self.parts.append("#" * int(tag[1]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIP and self.skip_depth:
            self.skip_depth -= 1
        if tag in _HEADINGS and self.heading_parts is not None:
            self.first_heading = _clean_line("".join(self.heading_parts))
            self.heading_parts = None
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
        elif not self.skip_depth:
            self.parts.append(data)
            if self.heading_parts is not None:
                self.heading_parts.append(data)


def html_to_text(markup: str) -> tuple[str, str]:
    """Return (title, text) of an HTML page."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    lines = (_clean_line(line) for line in "".join(parser.parts).split("\n"))
    lines = ("" if _EMPTY_HEADING.match(line) else line for line in lines)
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    title = _clean_line("".join(parser.title_parts)) or parser.first_heading
    return title, text


def _clean_line(line: str) -> str:
    return _SPACES.sub(" ", line).strip()
