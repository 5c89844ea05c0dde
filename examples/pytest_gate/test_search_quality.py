"""Retrieval quality as one test of your own suite: it fails when search got worse beyond noise.

    pytest examples/pytest_gate                                # compare with search_baseline.json
    GOLDEVAL_UPDATE_BASELINE=1 pytest examples/pytest_gate     # accept today's numbers as the baseline

`search` stands for your own search function (here a word-overlap search over the example corpus);
the golden set and corpus are goldeval's examples. The gate is `goldeval compare --fail-if-worse` as a
function (both call `goldeval.compare_results`, so they agree on the same files): a change that loses
questions beyond noise fails, a lucky or unlucky question or two does not. The two runs are compared on
the questions they share unchanged; a question added to or removed from the golden set since the
baseline is left out and named in a warning.
The golden set decides how small a drop can be told from noise: with these 9 questions only a search
that loses most of them fails; with a few hundred, a few points do.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import goldeval
from goldeval.corpus import load_corpus
from goldeval.testing import assert_no_regression

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
BASELINE = Path(os.environ.get("SEARCH_BASELINE", HERE / "search_baseline.json"))
CORPUS = load_corpus(DATA / "corpus")
WORDS = {p.doc_id: set(re.findall(r"\w+", p.text.lower())) for p in CORPUS.passages()}


def search(question: str, k: int) -> list[tuple[str, float]]:
    """Your search: documents ranked by how many of the question's words they contain."""
    asked = set(re.findall(r"\w+", question.lower()))
    scored = sorted(((len(asked & words) / (1 + len(words)) ** 0.5, doc) for doc, words in WORDS.items()), reverse=True)
    return [(doc, score) for score, doc in scored[:k] if score > 0]


def test_search_did_not_get_worse() -> None:
    card = goldeval.evaluate({"search": search}, DATA / "golden_example.jsonl", corpus=CORPUS, k=(1, 3, 5))
    assert_no_regression(card, BASELINE, metric="hit@3")
