"""Chunking: offsets, heading-aware sections for Markdown and reST, the size cap and the overlap."""

from __future__ import annotations

import random

import pytest

from goldeval.corpus import ChunkSpec, Corpus, Document, parse_chunk_spec
from goldeval.corpus.chunking import chunk_corpus, chunk_document
from goldeval.errors import InputError

MARKDOWN = """Intro before any heading.

# Guide

## Install

Run pip install goldeval.

## Usage

Call evaluate.

```python
# a comment, not a heading
evaluate()
```

### Options

Pass k.
"""

REST = """.. _json:

:mod:`json` --- JSON encoder
============================

Intro to json.

Basic Usage
-----------

Call dumps.

Encoders
^^^^^^^^

Subclass JSONEncoder.

Decoders
--------

Call loads.
"""


def _check_offsets(doc: Document, spec: ChunkSpec) -> list:
    chunks = chunk_document(doc, spec)
    for i, chunk in enumerate(chunks):
        assert chunk.id == f"{doc.id}#{i}"
        assert chunk.doc_id == doc.id
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip() and chunk.text
    return chunks


def test_markdown_sections_follow_headings_and_ignore_fenced_code() -> None:
    doc = Document("guide.md", MARKDOWN, "Guide")
    chunks = _check_offsets(doc, ChunkSpec())
    assert [c.text.split("\n")[0] for c in chunks] == ["Intro before any heading.", "# Guide", "## Usage", "### Options"]
    # `# Guide` has no body of its own, so it opens the Install section
    assert chunks[1].text == "# Guide\n\n## Install\n\nRun pip install goldeval."
    assert "# a comment, not a heading" in chunks[2].text
    assert [c.title for c in chunks] == ["Guide", "Guide > Install", "Guide > Usage", "Guide > Usage > Options"]


def test_rest_sections_follow_underlined_headings_with_levels_by_first_use() -> None:
    doc = Document("library/json.rst.txt", REST, "json --- JSON encoder")
    chunks = _check_offsets(doc, ChunkSpec())
    assert [c.title for c in chunks] == [
        "json --- JSON encoder",  # the label before the title is its own small preamble
        "json --- JSON encoder",  # the heading `:mod:`json` --- ...` cleaned of its role equals the doc title
        "json --- JSON encoder > Basic Usage",
        "json --- JSON encoder > Basic Usage > Encoders",
        "json --- JSON encoder > Decoders",
    ]
    assert chunks[0].text == ".. _json:"
    assert chunks[3].text == "Encoders\n^^^^^^^^\n\nSubclass JSONEncoder."


def test_markdown_setext_headings_front_matter_and_links() -> None:
    text = (
        "---\ntitle: x\n# a YAML comment\n---\n\n"
        "[![badge](https://ci/badge.svg)](https://ci)\n\n"
        "The [Tool](https://example.org) manual\n=====================\n\nAbout it.\n\n"
        "Setup\n-----\n\nInstall.\n\n- item\n---\n"
    )
    doc = Document("README.md", text, "The Tool manual")
    chunks = _check_offsets(doc, ChunkSpec())
    assert [c.title for c in chunks] == ["The Tool manual", "The Tool manual", "The Tool manual > Setup"]
    assert chunks[0].text.startswith("---\ntitle: x")
    assert chunks[1].text.startswith("The [Tool](https://example.org) manual\n====")
    assert chunks[2].text == "Setup\n-----\n\nInstall.\n\n- item\n---"


def test_by_headings_false_cuts_by_size_only() -> None:
    doc = Document("guide.md", MARKDOWN, "Guide")
    chunks = _check_offsets(doc, ChunkSpec(10_000, 0, by_headings=False))
    assert len(chunks) == 1 and chunks[0].text == MARKDOWN.strip()
    assert chunks[0].title == "Guide"


def test_short_underline_and_indented_titles_are_not_rest_headings() -> None:
    text = "Intro.\n\nLong title here\n----\n\n  Indented\n  ========\n\nBody.\n"
    chunks = _check_offsets(Document("x.rst", text), ChunkSpec())
    assert len(chunks) == 1


def test_size_cap_prefers_paragraph_then_sentence_boundaries() -> None:
    para1 = "First paragraph sentence one. " * 5
    para2 = "Second paragraph has words. " * 5
    text = para1.strip() + "\n\n" + para2.strip()
    chunks = _check_offsets(Document("p.txt", text), ChunkSpec(200, 0))
    assert [c.text for c in chunks] == [para1.strip(), para2.strip()]
    sentences = " ".join(f"Sentence {i} ends here." for i in range(30))
    chunks = _check_offsets(Document("s.txt", sentences), ChunkSpec(100, 0))
    assert all(c.text.endswith(".") and len(c.text) <= 100 for c in chunks)
    assert " ".join(c.text for c in chunks) == sentences


def test_overlap_repeats_the_end_of_the_previous_chunk_from_a_word_start() -> None:
    words = " ".join(f"w{i:03d}" for i in range(400))  # no sentence or paragraph breaks
    doc = Document("o.txt", words)
    chunks = _check_offsets(doc, ChunkSpec(200, 50))
    assert len(chunks) > 5
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        shared = prev.end - nxt.start
        assert 0 < shared <= 50
        assert nxt.start > prev.start
        assert doc.text[nxt.start - 1] == " "  # starts on a word
        assert len(nxt.text) <= 200
    assert chunks[-1].end == len(words)
    # every word is in some chunk
    assert set(words.split()) == {w for c in chunks for w in c.text.split()}


def test_a_word_longer_than_the_chunk_is_cut_hard() -> None:
    doc = Document("long.txt", "x" * 250)
    chunks = _check_offsets(doc, ChunkSpec(100, 20))
    assert [(c.start, c.end) for c in chunks] == [(0, 100), (80, 180), (160, 250)]


def test_random_documents_keep_offsets_and_size() -> None:
    rng = random.Random(7)
    pieces = ["word", "Sentence.", "\n\n", "# Head\n", "\n", "Title\n=====\n\n", "  ", "é漢字", "x" * 30]
    for n in range(200):
        text = "".join(rng.choice(pieces) + " " for _ in range(rng.randint(0, 300)))
        spec = ChunkSpec(rng.randint(20, 400), 0)
        spec = ChunkSpec(spec.max_chars, rng.randint(0, spec.max_chars - 1), rng.random() < 0.5)
        for chunk in _check_offsets(Document(f"d{n}.md", text), spec):
            assert len(chunk.text) <= spec.max_chars


def test_chunk_corpus_through_corpus_passages() -> None:
    corpus = Corpus({
        "a.md": Document("a.md", MARKDOWN, "Guide"),
        "empty.txt": Document("empty.txt", "   "),
        "b.txt": Document("b.txt", "short"),
    })
    passages = corpus.passages(ChunkSpec())
    assert passages == chunk_corpus(corpus, ChunkSpec())
    assert [p.id for p in passages] == ["a.md#0", "a.md#1", "a.md#2", "a.md#3", "b.txt#0"]
    assert [p.id for p in corpus.passages()] == ["a.md", "empty.txt", "b.txt"]


@pytest.mark.parametrize(("text", "expected"), [
    ("1500", ChunkSpec(1500, 200)),
    ("400", ChunkSpec(400, 100)),
    (" 1500:0 ", ChunkSpec(1500, 0)),
    ("800:100:flat", ChunkSpec(800, 100, by_headings=False)),
    ("800:flat", ChunkSpec(800, 200, by_headings=False)),
    ("none", None),
    ("NONE", None),
])
def test_parse_chunk_spec(text: str, expected: ChunkSpec | None) -> None:
    assert parse_chunk_spec(text) == expected


def test_chunk_spec_round_trips_through_str() -> None:
    for spec in (ChunkSpec(), ChunkSpec(300, 0, by_headings=False)):
        assert parse_chunk_spec(str(spec)) == spec


@pytest.mark.parametrize(("text", "message"), [
    ("big", r"cannot read chunking spec 'big'"),
    ("1500:200:9", r"cannot read chunking spec '1500:200:9'"),
    ("-5", r"cannot read chunking spec '-5'"),
    ("0", r"chunk size must be at least 1 character, got 0"),
    ("100:100", r"chunk overlap must be from 0 to less than the chunk size \(100\), got 100"),
])
def test_bad_chunk_specs(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_chunk_spec(text)
