"""Split documents into passages: by section headings first, then by size with overlap.

1. Sections: a Markdown (`#`) or reST (underlined) heading starts a section that runs to the next
   heading; a heading with no text of its own joins the section after it.
2. Size cap: a section longer than `max_chars` is cut at the last paragraph break in the second
   half of the window, else the last sentence end, else the last whitespace, else exactly at
   `max_chars`. The next piece starts `overlap` characters before the cut, moved forward to the
   start of a word, so a sentence cut in two is still whole in one of the pieces.

Every passage keeps offsets into its document, `doc.text[p.start:p.end] == p.text`, with
leading and trailing whitespace trimmed. Chunk ids are `f"{doc_id}#{i}"`, 0-based in document
order. A chunk's title is the document title followed by its section headings, joined by ` > `.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from goldeval.corpus.headings import Heading, find_headings, style_for
from goldeval.corpus.model import Corpus, Document, Passage
from goldeval.errors import InputError

_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s")
_OFF = ("none", "off", "no", "doc", "document")


@dataclass(frozen=True)
class ChunkSpec:
    """How to chunk: at most `max_chars` characters a chunk, `overlap` shared between neighbours."""

    max_chars: int = 1500
    overlap: int = 200
    by_headings: bool = True

    def __post_init__(self) -> None:
        if self.max_chars < 1:
            raise InputError(f"chunk size must be at least 1 character, got {self.max_chars}",
                             value=self.max_chars, hint="for example 1500, or 1500:200 with overlap")
        if not 0 <= self.overlap < self.max_chars:
            raise InputError(f"chunk overlap must be from 0 to less than the chunk size ({self.max_chars}), "
                             f"got {self.overlap}", value=self.overlap, hint=f"for example {self.max_chars}:"
                             f"{min(200, self.max_chars // 4)}")

    def __str__(self) -> str:
        return f"{self.max_chars}:{self.overlap}" + ("" if self.by_headings else ":flat")


def parse_chunk_spec(text: str) -> ChunkSpec | None:
    """Parse the CLI's chunking option: `none`, `SIZE`, `SIZE:OVERLAP`, optionally `:flat`.

    `SIZE` alone overlaps by min(200, SIZE // 4). `:flat` ignores headings. `none` means whole
    documents (returns None).
    """
    raw = text.strip().lower()
    if raw in _OFF or not raw:
        return None
    parts = raw.split(":")
    by_headings = parts[-1] != "flat"
    numbers = parts if by_headings else parts[:-1]
    if not 1 <= len(numbers) <= 2 or not all(n.strip().isdigit() for n in numbers):
        raise InputError(f"cannot read chunking spec {text!r}", value=text,
                         hint="use SIZE, SIZE:OVERLAP or none, e.g. 1500 or 1500:200 (add :flat to ignore headings)")
    size = int(numbers[0])
    overlap = int(numbers[1]) if len(numbers) == 2 else min(ChunkSpec.overlap, size // 4)
    return ChunkSpec(size, overlap, by_headings)


def chunk_corpus(corpus: Corpus, spec: ChunkSpec) -> list[Passage]:
    """Every document's chunks, in corpus order."""
    passages: list[Passage] = []
    for doc in corpus:
        passages.extend(chunk_document(doc, spec))
    return passages


def chunk_document(doc: Document, spec: ChunkSpec) -> list[Passage]:
    """One document's chunks; a blank document has none."""
    text = doc.text
    spans: list[tuple[int, int, str]] = []
    for start, end, path in _sections(doc, spec.by_headings):
        title = " > ".join(_title_parts(doc.title, path))
        spans.extend((s, e, title) for s, e in _split(text, start, end, spec))
    return [Passage(f"{doc.id}#{i}", doc.id, text[s:e], title, s, e) for i, (s, e, title) in enumerate(spans)]


def _title_parts(doc_title: str, path: tuple[str, ...]) -> list[str]:
    parts = [doc_title] if doc_title else []
    for heading in path:
        if not parts or heading != parts[-1]:
            parts.append(heading)
    return parts


def _sections(doc: Document, by_headings: bool) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, heading path) of each section; heading-only sections join the next one."""
    text = doc.text
    headings = find_headings(text, style_for(doc.id)) if by_headings else []
    if not headings:
        return [(0, len(text), ())]
    sections: list[tuple[int, int, tuple[str, ...]]] = []
    if text[: headings[0].start].strip():
        sections.append((0, headings[0].start, ()))
    stack: list[Heading] = []
    pending: int | None = None
    for i, heading in enumerate(headings):
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        end = headings[i + 1].start if i + 1 < len(headings) else len(text)
        start = heading.start if pending is None else pending
        if not text[heading.end : end].strip() and i + 1 < len(headings):
            pending = start  # a heading with no body of its own: it opens the next section
            continue
        pending = None
        sections.append((start, end, tuple(h.title for h in stack)))
    return sections


def _split(text: str, start: int, end: int, spec: ChunkSpec) -> list[tuple[int, int]]:
    """Cut text[start:end] into whitespace-trimmed pieces of at most max_chars, with overlap."""
    pieces: list[tuple[int, int]] = []
    end = _rstrip(text, start, end)
    pos = _lstrip(text, start, end)
    while pos < end:
        if end - pos <= spec.max_chars:
            pieces.append((pos, end))
            break
        cut = _boundary(text, pos, pos + spec.max_chars)
        pieces.append((pos, _rstrip(text, pos, cut)))
        pos = _lstrip(text, _next_start(text, pos, cut, spec.overlap), end)
    return pieces


def _boundary(text: str, pos: int, limit: int) -> int:
    """The end of a piece starting at `pos`: a paragraph, sentence or word boundary in the window's
    second half, else `limit` itself."""
    low = pos + (limit - pos) // 2
    para = text.rfind("\n\n", low, limit)
    if para > low:
        return para
    sentence = -1
    for match in _SENTENCE_END.finditer(text, low, limit):
        sentence = match.end() - 1
    if sentence > low:
        return sentence
    space = max(text.rfind(" ", low, limit), text.rfind("\n", low, limit), text.rfind("\t", low, limit))
    return space if space > low else limit


def _next_start(text: str, pos: int, cut: int, overlap: int) -> int:
    """Where the next piece starts: `overlap` before the cut, moved forward to a word start."""
    if overlap == 0:
        return cut
    target = max(cut - overlap, pos + 1)
    if text[target - 1].isspace():
        return target
    for i in range(target, cut):
        if text[i].isspace():
            return i + 1
    return target  # one word longer than the overlap: start inside it rather than lose the overlap


def _lstrip(text: str, start: int, end: int) -> int:
    while start < end and text[start].isspace():
        start += 1
    return start


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end
