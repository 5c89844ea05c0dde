"""The question's words: the one rule for which words a text has, for every check that counts them.

Leakage (how much of a question its passage supplied), the review and pool pages' highlighting (the page
marks the spans computed here and computes nothing) and the diagnosis of misses ("the expected document
holds 2 of the question's 5 words") all read words through this module, with the BM25 retriever's rules:

- a *token* is a run of two or more word characters, lower-cased (bm25s' default pattern, as
  `goldeval.retrievers.bm25` indexes them);
- a token's *stem* is its Snowball English stem (PyStemmer, as BM25 stems);
- *content words* are tokens that are neither Lucene's English stopwords (which BM25 drops) nor question
  function words (`data/function_words.txt`: how, what, do, my, ...), so "How do I undo a commit?" has
  the content words `undo` and `commit`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from importlib import resources

TOKEN = re.compile(r"(?u)\b\w\w+\b")
"""bm25s' default token pattern."""

MEMO_TEXTS = 2048
"""Texts whose content stems are kept (bounded: a long-lived server reads many passages)."""


@cache
def stop_words() -> frozenset[str]:
    """Lucene's English stopwords (bm25s' list) plus the question function words shipped as data."""
    from bm25s.stopwords import STOPWORDS_EN

    text = resources.files("goldeval").joinpath("data", "function_words.txt").read_text(encoding="utf-8")
    extra = {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}
    return frozenset(STOPWORDS_EN) | frozenset(extra)


@cache
def _stemmer() -> Callable[[str], str]:
    import Stemmer

    stem: Callable[[str], str] = Stemmer.Stemmer("english").stemWord
    return stem


def stem(word: str) -> str:
    return _stemmer()(word)


def tokens(text: str) -> list[str]:
    """Lower-cased tokens in order (for copied phrases and word shingles)."""
    return TOKEN.findall(text.lower())


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, lower-cased token) of every token, for highlighting."""
    return [(m.start(), m.end(), m.group().lower()) for m in TOKEN.finditer(text)]


def content_stems(text: str) -> list[str]:
    """Stems of the content words, in order, repeats kept."""
    stops = stop_words()
    return [stem(t) for t in tokens(text) if t not in stops]


@lru_cache(maxsize=MEMO_TEXTS)
def content_terms(text: str) -> frozenset[str]:
    """The set of `content_stems`: what "the question's words" (and the words a document holds) means.
    Memoised: the same passages come up for many misses and retrievers."""
    return frozenset(content_stems(text))


@lru_cache(maxsize=MEMO_TEXTS)
def _content_spans(passage: str) -> tuple[tuple[int, int, str], ...]:
    """(start, end, stem) of the passage's content words. Memoised: the scorecard page marks the same
    snippets for many questions."""
    stops = stop_words()
    return tuple((s, e, stem(tok)) for s, e, tok in token_spans(passage) if tok not in stops)


def highlight_spans(question: str, passage: str) -> list[tuple[int, int]]:
    """Character spans of the passage's words whose stem is one of the question's content stems: what the
    review and pool pages mark, so a reviewer sees at a glance how much of the question the passage supplied."""
    wanted = content_terms(question)
    return [(s, e) for s, e, st in _content_spans(passage) if st in wanted]


def page_highlights(question: str, passage: str) -> list[tuple[int, int]]:
    """`highlight_spans` in UTF-16 code units, as JavaScript strings count them (a character outside the
    Basic Multilingual Plane, an emoji, is two): what the review and pool pages receive and mark as given."""
    spans = highlight_spans(question, passage)
    if passage.isascii():
        return spans
    units = _utf16_offsets(passage)
    return [(units[s], units[e]) for s, e in spans]


def page_content_spans(passage: str) -> list[tuple[int, int, str]]:
    """(start, end, stem) of the passage's content words in UTF-16 code units: with each question's
    `content_terms`, what the scorecard page marks (a span whose stem is one of the question's; the same
    marks as `page_highlights`, sent once per snippet instead of once per question and snippet)."""
    spans = _content_spans(passage)
    if passage.isascii():
        return list(spans)
    units = _utf16_offsets(passage)
    return [(units[s], units[e], st) for s, e, st in spans]


def _utf16_offsets(text: str) -> list[int]:
    """The UTF-16 offset of every character position (a character outside the BMP counts two)."""
    units = [0]
    for ch in text:
        units.append(units[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return units
