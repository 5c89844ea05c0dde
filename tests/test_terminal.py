"""The terminal scorecard at the width there is, intervals only where a set is big enough, misses grouped
by cause with the advice once, one headline cut-off in every view (issue 13, items 3, 4, 7 and 8)."""

from __future__ import annotations

import io
import re

from rich.console import Console

import goldeval
from golden_factory import make_golden
from goldeval.corpus.model import Corpus, Document
from goldeval.report.markdown import scorecard_markdown
from goldeval.report.terminal import render, table_metrics
from goldeval.scorecard import Scorecard
from goldeval.stats.diagnosis import CAUSES

DOCS = {f"d{i}.md": f"document number {i} about topic {i}" for i in range(14)}
LONG_NAMES = ["bm25", "dense:minilm", "hybrid:bm25+dense:minilm", "rerank:bm25>dense:minilm?top=20"]


def corpus() -> Corpus:
    return Corpus({d: Document(d, t) for d, t in DOCS.items()})


def ranked(offset: int):
    """A search function that puts question i's document at rank 1 + (i + offset) % 4, and ranks every
    document of the corpus (a shorter list would be one cut short: goldeval.scorecard.depth)."""
    def search(question: str, k: int) -> list[tuple[str, float]]:
        i = int(question.split()[-1])
        order = [f"d{(i + j + 1) % 14}.md" for j in range(13)]
        order.insert((i + offset) % 4, f"d{i}.md")
        return [(d, 1.0 - n / 10) for n, d in enumerate(order)][:k]
    return search


def card(n: int, names: list[str], **kwargs) -> Scorecard:
    golden = make_golden([(f"q{i}", f"where is topic {i}", {f"d{i}.md": 1}) for i in range(n)])
    retrievers = {name: ranked(offset) for offset, name in enumerate(names)}
    return goldeval.compare(goldeval.evaluate(retrievers, golden, corpus=corpus(), **kwargs), resamples=500)


def shown(scorecard: Scorecard, width: int, **options) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    render(scorecard, console=console, **options)
    return console.export_text()


def flat(text: str) -> str:
    return " ".join(text.split())


def test_at_80_columns_nothing_is_cut_and_nothing_runs_over() -> None:
    scorecard = card(12, LONG_NAMES)
    text = shown(scorecard, 80, details=True)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    for r in scorecard.retrievers:  # every value and interval whole
        for metric in table_metrics(scorecard):
            low, high = r.intervals[metric]
            assert (f"({low:.2f}–{high:.2f})" if high > low else "(no spread)") in text, (r.name, metric)
    assert "(no spread): every question scored the same, so resampling them gives no interval." in flat(text)
    assert "(1.00–1.00)" not in text
    header = flat(text)
    assert "rerank:bm25> dense:minilm?top=20" in header or "rerank:bm25>dense:minilm?top=20" in header
    for r in scorecard.retrievers[1:]:  # every verdict reads as one sentence once the wrapping is undone
        assert flat(scorecard.statistics.comparison.get(scorecard.headline[0], r.name, "bm25").verdict) in header


def test_names_break_only_at_their_separators() -> None:
    text = shown(card(12, LONG_NAMES), 80)
    header = [line for line in text.split("━")[0].splitlines() if "┃" in line]
    cells = [[c.strip() for c in line.split("┃")] for line in header]
    columns = ["".join(row[j] for row in cells) for j in range(len(cells[0]))]
    assert columns == ["metric", *LONG_NAMES]
    for row in cells:
        for piece in row[1:]:
            assert not piece or piece[-1] in ":+>?&" or any(n.endswith(piece) for n in LONG_NAMES), piece


def test_a_wide_console_gets_one_table_with_intervals_beside_the_values() -> None:
    scorecard = card(12, LONG_NAMES)
    text = shown(scorecard, 200)
    assert text.count("metric ") == 1
    bm25 = scorecard.retriever("bm25")
    mrr = goldeval.parse_metric("mrr")
    low, high = bm25.intervals[mrr]
    assert re.search(rf"{bm25.metrics[mrr]:.3f} \({low:.2f}–{high:.2f}\)", text)


def test_too_many_retrievers_for_the_width_are_split_into_tables() -> None:
    names = [*LONG_NAMES, "dense:e5-small", "dense:mpnet-base", "hybrid:bm25+dense:mpnet-base"]
    scorecard = card(12, names)
    text = shown(scorecard, 80)
    assert text.count("metric ") >= 2
    assert max(len(line) for line in text.splitlines()) <= 80
    for r in scorecard.retrievers:
        assert f"{r.metrics[goldeval.parse_metric('map')]:.3f}" in text


def test_a_set_too_small_for_an_interval_says_so() -> None:
    scorecard = card(9, ["bm25", "dense:minilm"])
    assert all(not r.intervals for r in scorecard.retrievers)
    text = flat(shown(scorecard, 80))
    assert "1.00–1.00" not in text and "(low–high)" not in text
    assert "No intervals: 9 headline question(s) are too few for one (goldeval gives intervals from 10)" in text
    markdown = scorecard_markdown(scorecard)
    assert "too few for one" in markdown and "–" not in markdown.split("**Comparison**")[0]


def test_misses_are_grouped_by_cause_with_the_advice_given_once() -> None:
    golden = make_golden([(f"q{i}", f"where is topic {i}", {f"d{i}.md": 1}) for i in range(12)])
    retrievers = {"hubbed": lambda question, k: [("d13.md", 0.5)], "nothing": lambda question, k: []}
    scorecard = goldeval.compare(goldeval.evaluate(retrievers, golden, corpus=corpus()), resamples=500)
    text = flat(shown(scorecard, 80, show_misses=True))
    for cause in ("never_retrieved", "hub_document"):
        assert text.count(CAUSES[cause][1]) == 1, cause
    assert "nothing: 12 miss(es): 12 never retrieved" in text and "hubbed: 12 miss(es): 12 hub document outranked" in text
    assert "never retrieved (12)" in text and text.count("miss q7 (rank >100): where is topic 7") == 1
    # hubbed returns 1 of the 100 results asked, every time: its misses are past what it returned
    assert text.count("miss q7 (not in the 1 returned): where is topic 7") == 1
    hub = "d13.md comes first for 12 of 12 questions it does not answer"
    assert text.count(hub) == 2  # once in the summary, once over the group; not once per miss
    assert "Missed by every retriever (12): q0, q1" in text
    assert "Missed by every retriever at k=5 (12)" in text
    markdown = scorecard_markdown(scorecard)
    assert markdown.count(CAUSES["never_retrieved"][1]) == 1 and "Missed by every retriever (12)" in markdown
    assert "**Hub document under `hubbed`:** `d13.md` comes first for 12 of 12 questions" in markdown


def test_one_headline_cut_off_in_every_view() -> None:
    """Issue 13: `--headline hit@3` moves the verdicts, the misses and the Markdown to k = 3 together."""
    scorecard = card(12, ["bm25", "dense:minilm"], k=(1, 3, 5, 10), headline="hit@3")
    assert scorecard.headline_k == 3 and str(scorecard.headline[0]) == "hit@3"
    text = flat(shown(scorecard, 100, show_misses=True))
    assert "on hit@3" in text and "Misses at k=3" in text and "Why the misses missed at k=3" in text
    assert "on hit@10" not in text
    misses = [q for q in scorecard.retriever("bm25").answerable if not q.hit_at(3)]
    assert f"bm25: {len(misses)} miss(es) at k=3 of 12 answerable" in text
    assert all(q.diagnosis and q.diagnosis["k"] == 3 for q in misses)
    assert "**Why the misses missed** at k=3" in scorecard_markdown(scorecard)


def test_a_hit_verdict_gives_both_directions_and_counts_what_it_left_out() -> None:
    scorecard = card(12, ["bm25", "dense:minilm"], k=(1, 5))
    comparison = scorecard.statistics.comparison
    verdict = comparison.get(goldeval.parse_metric("hit@1"), "dense:minilm", "bm25")
    hit5 = comparison.get(goldeval.parse_metric("hit@5"), "dense:minilm", "bm25")
    a_only = sum(1 for a, b in zip(scorecard.retriever("dense:minilm").answerable, scorecard.retriever("bm25").answerable,
                                   strict=True) if a.hit_at(5) and not b.hit_at(5))
    b_only = sum(1 for a, b in zip(scorecard.retriever("dense:minilm").answerable, scorecard.retriever("bm25").answerable,
                                   strict=True) if b.hit_at(5) and not a.hit_at(5))
    assert (hit5.wins, hit5.losses) == (a_only, b_only)
    assert verdict.metric.name == "hit"
    text = flat(shown(scorecard, 100))
    if hit5.wins != hit5.losses:
        assert re.search(r"leads \S+ on hit@5: finds \d+ that \S+ misses and misses \d+ that it finds", text)
    hidden = [r for r in comparison.results if r.metric in scorecard.headline[1:] and not r.significant]
    if hidden:
        on = ", ".join(dict.fromkeys(str(r.metric) for r in hidden))
        assert f"({len(hidden)} more verdict(s) on {on} within noise, not shown)" in text


def test_the_details_fit_80_columns_too() -> None:
    """The by-source and by-tag tables and the comparison details: no name cut, nothing past the edge."""
    # 36 questions: each tag has 12 hand-written ones (tags are read on the headline), enough for an interval
    docs = Corpus({f"d{i}.md": Document(f"d{i}.md", f"doc {i}") for i in range(36)})
    rows = [(f"q{i}", f"where is topic {i}", {f"d{i}.md": 1}, ["alpha" if i % 2 else "a-rather-long-tag"],
             "synthetic" if i % 3 == 0 else "hand") for i in range(36)]
    retrievers = {name: ranked(offset) for offset, name in enumerate(LONG_NAMES)}
    scorecard = goldeval.compare(goldeval.evaluate(retrievers, make_golden(rows), corpus=docs), resamples=300)
    text = shown(scorecard, 80, details=True)
    assert "By tag: mrr" in text and "Hand-written vs synthetic" in text
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    by_tag = scorecard.statistics.breakdown["retrievers"]["bm25"]["by_tag"]["a-rather-long-tag"]
    low, high = by_tag["intervals"]["mrr"]
    assert f"({low:.2f}–{high:.2f})" in text


def test_the_title_breaks_before_its_settings_not_inside_a_name() -> None:
    scorecard = card(12, ["bm25"])
    scorecard.golden["path"] = "demo_golden.jsonl (shipped with goldeval)"
    scorecard.retrievers[0].config["long_documents"] = {
        "summary": "189 of 199 passages are longer than minilm's 256-token window: each is ranked by its best "
                   "window (long=max)"}
    lines = shown(scorecard, 80).splitlines()
    assert lines[0] == "goldeval scorecard: demo_golden.jsonl (shipped with goldeval) on corpus"
    assert lines[1] == "(doc level, top 100 retrieved)"
    assert lines[2].startswith("bm25: 189 of 199 passages") and lines[3].strip().endswith("(long=max)")
    assert lines[3].startswith("  ")  # the sentence continues, indented; it is not a title of its own
