"""One notion of the question's words (issue 18, item 7): leakage, the diagnosis of misses and the review
and pool pages' highlighting all read words through `goldeval.words`, with the BM25 retriever's rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import bm25s
import Stemmer

from goldeval.golden.io import load_golden
from goldeval.judging.edits import GoldenFile
from goldeval.judging.pool import build_pool
from goldeval.scorecard.model import Hit, QuestionResult, RetrieverResult, Scorecard
from goldeval.web.pool import PoolStore
from goldeval.words import content_stems, content_terms, page_highlights

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "examples" / "data" / "golden_example.jsonl"


def test_content_words_are_the_words_bm25s_indexes_less_question_words() -> None:
    text = "Recovering stashed changes after a failed rebase: which commands?"
    # bm25s itself, as goldeval's BM25 retriever configures it (English stopwords, Snowball stemmer)
    ids, vocab = bm25s.tokenize([text], stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False)
    by_id = {i: w for w, i in vocab.items()}
    bm25_words = [by_id[i] for i in ids[0]]
    assert bm25_words == ["recov", "stash", "chang", "after", "fail", "rebas", "which", "command"]
    # the question words (after, which: data/function_words.txt) are not what a question is about
    assert content_stems(text) == ["recov", "stash", "chang", "fail", "rebas", "command"]


def test_page_highlights_count_utf16_units_as_the_page_slices_them() -> None:
    text = "🚀 Stashing 🧪 changes: git stash saves them"
    spans = page_highlights("how do I stash my changes?", text)
    units = text.encode("utf-16-le")
    marked = [units[2 * s:2 * e].decode("utf-16-le") for s, e in spans]
    assert marked == ["Stashing", "changes", "stash"]


def test_the_pool_page_receives_the_words_every_other_user_reads(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    shutil.copy(GOLDEN, path)
    golden = load_golden(path)
    q = golden["h01"]
    text = "💾 To set work aside, git stash saves your uncommitted changes; git stash pop restores them."
    card = Scorecard([RetrieverResult("bm25", [QuestionResult(q.id, q.question, golden.relevant(q.id), False, None,
                                                              {}, [Hit("git/notes.md", 1.0, "git/notes.md")], {})],
                                      {})], [], [1, 5], 5, [],
                     snippets={"git/notes.md": {"doc": "git/notes.md", "title": "notes", "text": text}})
    pool = build_pool([card], ["r"], golden, k=5)
    (item,) = PoolStore(pool, GoldenFile(path, judge="ana")).payload()["items"]
    assert item["highlights"] == page_highlights(q.question, text) != []
    units = text.encode("utf-16-le")
    marked = {units[2 * s:2 * e].decode("utf-16-le").lower() for s, e in item["highlights"]}
    assert {content_stems(w)[0] for w in marked} <= content_terms(q.question)
