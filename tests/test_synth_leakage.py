"""Leakage figures, checked against values worked out by hand on tiny inputs."""

from __future__ import annotations

import json

import pytest

from goldeval.corpus.chunking import ChunkSpec
from goldeval.corpus.model import Corpus, Document, Passage
from goldeval.golden.model import GoldenSet, Judgment, Provenance, Qrels, Question
from goldeval.synth.leakage import (
    LeakageReport,
    Target,
    leakage_for_golden,
    leakage_report,
    longest_copy,
    measure,
    repeated_heading,
)
from goldeval.synth.summary import leakage_lines
from goldeval.words import content_stems, highlight_spans

STASH = Passage("git/stash.md#1", "git/stash.md", "Stash saves your uncommitted changes aside in a stack, "
                "so the working tree is clean.", "Git > Stashing changes", 10, 90)


def test_content_words_drop_stopwords_and_question_words_and_are_stemmed() -> None:
    assert content_stems("How do I undo the last commits?") == ["undo", "last", "commit"]


def test_longest_copy_counts_words_and_needs_a_content_word() -> None:
    assert longest_copy("how do I save my uncommitted changes aside", STASH.text) == (3, "uncommitted changes aside")
    assert longest_copy("what is in the box", "it is in the garden") == (0, "")  # only stopwords shared
    assert longest_copy("", STASH.text) == (0, "")


def test_a_repeated_heading_is_one_whose_content_words_all_appear() -> None:
    assert repeated_heading("when should I stash my changes", ["Git", "Stashing changes"]) == "Stashing changes"
    assert repeated_heading("how do I use git stash", ["Git", "Stashing changes"]) == "Git"
    assert repeated_heading("stashing changes before a pull", ["Stashing changes"]) == "Stashing changes"
    assert repeated_heading("put work aside", ["Git", "Stashing changes"]) == ""


def test_one_question_against_its_passage() -> None:
    q = measure(Target("s1", "How do I put uncommitted changes aside in git?", "synthetic", (STASH.id,)), [STASH], 1)
    # content words: put, uncommitted, changes, aside, git -> 4 of 5 in the passage (git via the title)
    assert (q.content_words, q.from_passage, q.content_share) == (5, 4, 0.8)
    assert q.longest_copy == 3 and q.copied_phrase == "uncommitted changes aside"
    assert q.repeats_heading == "Git" and q.source_rank == 1
    hand = measure(Target("h1", "shelve my half-finished edits for later", "hand", (STASH.id,)), [STASH], None)
    assert hand.content_share == 0.0 and hand.longest_copy == 0 and hand.repeats_heading == ""


def _corpus() -> Corpus:
    texts = {
        "stash.md": ("Stashing", "Stash saves your uncommitted changes aside in a stack so the tree is clean."),
        "branch.md": ("Branches", "Switch branches with git switch and create one with git branch."),
        "json.md": ("json", "json.dumps turns objects into JSON text; json.loads parses it back."),
    }
    return Corpus({d: Document(d, t, title) for d, (title, t) in texts.items()})


def test_the_report_by_kind_and_the_gap() -> None:
    corpus = _corpus()
    targets = [
        Target("s1", "save uncommitted changes aside in a stack", "synthetic", ("stash.md",)),
        Target("s2", "turn objects into JSON text", "synthetic", ("json.md",)),
        Target("h1", "shelve my half-done work", "hand", ("stash.md",)),
        Target("h2", "make a new line of development", "hand", ("branch.md",)),
    ]
    report = leakage_report(targets, corpus.passages(), depth=10)
    syn, hand = report.sets["synthetic"], report.sets["hand"]
    assert (syn.questions, syn.content_share, syn.hit_at_1, syn.mrr) == (2, 1.0, 1.0, 1.0)
    assert syn.longest_copy == pytest.approx((5 + 4) / 2) and syn.copies == 1.0
    # hand: no shared word, so BM25 finds neither (None rank, reciprocal rank 0)
    assert (hand.questions, hand.content_share, hand.hit_at_5, hand.mrr, hand.longest_copy) == (2, 0.0, 0.0, 0.0, 0.0)
    gap = report.gap()
    assert gap["content_share"] == 1.0 and gap["hit_at_5"] == 1.0 and gap["copies"] == 1.0
    data = json.loads(json.dumps(report.to_dict()))
    assert data["gap"] == gap and LeakageReport.from_dict(data) == report
    lines = leakage_lines(report)
    assert lines[0].split() == ["leakage", "synthetic", "hand", "gap"]
    top5 = next(line for line in lines if line.startswith("BM25 ranks the passage in the top 5"))
    assert top5.split()[-4:] == ["100%", "0%", "+100", "pt"]


def test_leakage_of_a_golden_set_uses_source_passages_and_expected_documents() -> None:
    corpus = Corpus({"a.md": Document("a.md", "# Install\n\nRun pip install goldeval to install it.\n\n"
                                      "# Upgrade\n\nRun pip install -U goldeval to upgrade it to the newest version.")})
    passages = corpus.passages(ChunkSpec(100, 0))
    assert [p.id for p in passages] == ["a.md#0", "a.md#1"]
    synthetic = Provenance("synthetic", {"source_passage": "a.md#1"})
    golden = GoldenSet(
        [Question("s", "upgrade goldeval to the newest version", provenance=synthetic),
         Question("h", "get the latest release"), Question("x", "bake bread", "off_topic"),
         Question("gone", "a question about a deleted page")],
        Qrels([Judgment("s", "a.md", 1), Judgment("h", "a.md", 1), Judgment("gone", "deleted.md", 1)]),
    )
    report = leakage_for_golden(golden, passages)
    by_id = {q.question_id: q for q in report.questions}
    assert by_id["s"].passages == ("a.md#1",) and by_id["s"].source_rank == 1
    assert by_id["h"].passages == ("a.md#0", "a.md#1")  # a document at chunk level: any of its chunks
    assert "x" not in by_id and report.unmeasured == ("gone",)
    assert set(report.sets) == {"synthetic", "hand"}


def test_highlights_mark_the_passage_words_the_question_shares() -> None:
    text = "Stash saves your uncommitted changes."
    spans = highlight_spans("how do I stash my changes", text)
    assert [text[s:e] for s, e in spans] == ["Stash", "changes"]
