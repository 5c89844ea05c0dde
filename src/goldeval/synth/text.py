"""Words as the leakage measures and the review page's highlighting see them: the BM25 retriever's rules.

Tokens are runs of two or more word characters, lower-cased (bm25s' default pattern, as
`goldeval.retrievers.bm25` indexes them); a token's *stem* is its Snowball English stem (PyStemmer, as BM25
stems). Content words are tokens that are neither Lucene's English stopwords (which BM25 drops) nor
question function words (`data/function_words.txt`: how, what, do, my, ...), so "How do I undo a commit?"
has the content words `undo` and `commit`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from importlib import resources

TOKEN = re.compile(r"(?u)\b\w\w+\b")
"""bm25s' default token pattern."""


@cache
def stop_words() -> frozenset[str]:
    """Lucene's English stopwords (bm25s' list) plus the question function words shipped as data."""
    from bm25s.stopwords import STOPWORDS_EN

    text = resources.files("goldeval.synth").joinpath("data", "function_words.txt").read_text(encoding="utf-8")
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
    """Lower-cased tokens in order (for copied phrases)."""
    return TOKEN.findall(text.lower())


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, lower-cased token) of every token, for highlighting."""
    return [(m.start(), m.end(), m.group().lower()) for m in TOKEN.finditer(text)]


def content_stems(text: str) -> list[str]:
    """Stems of the content words, in order, repeats kept."""
    stops = stop_words()
    return [stem(t) for t in tokens(text) if t not in stops]


def highlight_spans(question: str, passage: str) -> list[tuple[int, int]]:
    """Character spans of the passage's words whose stem is one of the question's content stems: what the
    review page marks, so a reviewer sees at a glance how much of the question the passage supplied."""
    wanted = set(content_stems(question))
    stops = stop_words()
    return [(s, e) for s, e, tok in token_spans(passage) if tok not in stops and stem(tok) in wanted]
