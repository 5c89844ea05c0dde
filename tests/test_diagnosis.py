"""A diagnosis for every miss: a small corpus for each cause, evaluated for real, then diagnosed.

A miss's cause rests on the retriever's own results and the corpus, so it must not change with the
other retrievers of the run (issue 13); hub documents and the questions every retriever missed are
statistics of the scorecard.
"""

from __future__ import annotations

from typing import Any

import goldeval
from golden_factory import make_golden
from goldeval.corpus.chunking import ChunkSpec
from goldeval.corpus.model import Corpus, Document
from goldeval.scorecard import QuestionResult, Scorecard
from goldeval.stats.diagnosis import CAUSES, find_hubs
from goldeval.words import content_terms

FILLER = {
    "cars.md": "Cars and trucks have engines and wheels.",
    "music.md": "Violins and cellos make music in an orchestra.",
    "garden.md": "Tomatoes grow in the garden in summer.",
}


def corpus(docs: dict[str, str]) -> Corpus:
    return Corpus({d: Document(d, text) for d, text in {**FILLER, **docs}.items()})


def scored(retrievers: Any, rows: list, docs: Corpus, *, k: int = 1, chunking: ChunkSpec | None = None,
           kinds: dict[str, str] | None = None, texts: bool = True) -> Scorecard:
    """Evaluate and compare; `texts=False` diagnoses from the scorecard's snippets alone, as
    `goldeval compare results.json` does."""
    card = goldeval.evaluate(retrievers, make_golden(rows), corpus=docs, k=(k,), chunking=chunking)
    return goldeval.compare(card, resamples=200, passages=docs.passages(chunking) if texts else None, kinds=kinds)


def question(card: Scorecard, retriever: str, qid: str) -> QuestionResult:
    return next(q for q in card.retriever(retriever).questions if q.id == qid)


def diagnosis(card: Scorecard, retriever: str, qid: str) -> dict:
    found = question(card, retriever, qid).diagnosis
    assert found is not None, f"{retriever} {qid} has no diagnosis"
    return found


def counts(card: Scorecard, retriever: str) -> dict[str, int]:
    assert card.statistics is not None
    return card.statistics.diagnosis_counts[retriever]


def fixed(answers: dict[str, list[tuple[str, float]]]):
    """A search function with fixed answers (a stand-in for a model whose output the test chooses)."""
    def search(question: str, k: int) -> list[tuple[str, float]]:
        return answers.get(question, [("garden.md", 0.1)])[:k]
    return search


def test_never_retrieved_and_retrieved_deep_from_a_saved_scorecard() -> None:
    """Without the passages' texts only the rank speaks (the snippets are cut short)."""
    docs = corpus({"fruit.md": "Apples, oranges and bananas are fruit."})
    card = scored("bm25", [
        ("never", "engines for trucks", {"fruit.md": 1}),       # BM25 only finds cars.md
        ("deep", "apples with engines and trucks", {"fruit.md": 1}),  # cars.md matches twice
        ("hit", "violins and cellos", {"music.md": 1}),
    ], docs, texts=False)
    never = diagnosis(card, "bm25", "never")
    assert never["cause"] == "never_retrieved" and "no expected answer in the top 100" in never["evidence"]
    deep = diagnosis(card, "bm25", "deep")
    assert question(card, "bm25", "deep").rank == 2
    assert deep["cause"] == "retrieved_deep" and deep["evidence"] == "first expected answer at rank 2 (k = 1)"
    assert "reranker" in deep["suggestion"] and deep["k"] == 1
    assert question(card, "bm25", "hit").diagnosis is None
    c = counts(card, "bm25")
    assert (c["never_retrieved"], c["retrieved_deep"], sum(c.values())) == (1, 1, 2)


def test_misses_are_diagnosed_at_the_headline_k_not_the_largest() -> None:
    """Issue 13: one cut-off everywhere; with k = 1, 5, 10 the misses are those at hit@5."""
    docs = corpus({f"d{i}.md": f"apples number {i} " + "apples " * i for i in range(8)})
    card = goldeval.compare(goldeval.evaluate("bm25", make_golden([("q", "apples", {"d0.md": 1})]), corpus=docs,
                                              k=(1, 5, 10)), resamples=200)
    q = question(card, "bm25", "q")
    assert card.headline_k == 5 and q.rank is not None and 5 < q.rank <= 10
    assert diagnosis(card, "bm25", "q")["k"] == 5


def test_near_duplicate_outranks_the_expected_document() -> None:
    text = "To install the package run pip install goldeval, then import goldeval in Python and evaluate a golden set."
    docs = corpus({"install-v1.md": text, "install-v2.md": text + " Updated for release two."})
    card = scored("bm25", [("dup", "install the package", {"install-v2.md": 1})], docs)
    q = question(card, "bm25", "dup")
    assert q.top[0].id == "install-v1.md" and q.rank == 2
    d = diagnosis(card, "bm25", "dup")
    assert d["cause"] == "near_duplicate"
    assert d["evidence"].startswith("top result install-v1.md (") and "the same text as expected install-v2.md" in d["evidence"]


LEXICAL_DOCS = {
    "timeouts.md": "Set the request timeout with the timeout argument of the client.",
    "retry.md": "A failed call is attempted again, waiting longer after each failure.",
}
LEXICAL_ROWS = [
    ("lexical", "request timeout argument", {"timeouts.md": 1}),
    ("semantic", "how do I keep trying when something breaks", {"retry.md": 1}),
]


def test_a_vocabulary_gap_is_lexical_vs_semantic_for_bm25_alone() -> None:
    card = scored("bm25", LEXICAL_ROWS, corpus(LEXICAL_DOCS))
    d = diagnosis(card, "bm25", "semantic")
    assert d["cause"] == "lexical_vs_semantic"
    assert d["evidence"].startswith("expected retry.md shares 0 of the question's 3 words")
    # the question's words are goldeval.words' (issue 18): the ones leakage counts and the pages highlight
    missing = d["evidence"].split("(", 1)[1].split(" missing")[0].split(", ")
    assert missing == sorted(content_terms("how do I keep trying when something breaks")) == ["break", "keep", "tri"]
    assert "hybrid" in d["suggestion"]


def test_exact_terms_missed_by_a_semantic_retriever_is_lexical_vs_semantic() -> None:
    dense = fixed({"request timeout argument": [("music.md", 0.4), ("garden.md", 0.3)],
                   "how do I keep trying when something breaks": [("retry.md", 0.7)]})
    card = scored({"toy": dense}, LEXICAL_ROWS, corpus(LEXICAL_DOCS), kinds={"toy": "semantic"})
    d = diagnosis(card, "toy", "lexical")
    assert d["cause"] == "lexical_vs_semantic"
    assert d["evidence"].startswith("expected timeouts.md holds 3 of the question's 3 words (argument, request, timeout)")
    assert d["evidence"].endswith("not in the 2 results returned: exact terms BM25 would match")  # 2 of 100 asked


def test_a_miss_keeps_its_cause_whichever_retrievers_run_beside_it() -> None:
    """Issue 13: bm25's miss used to read `never retrieved` alone and `lexical vs semantic` beside a dense model."""
    docs = corpus(LEXICAL_DOCS)
    dense = fixed({"how do I keep trying when something breaks": [("retry.md", 0.7)]})
    alone = scored("bm25", LEXICAL_ROWS, docs)
    together = scored({"bm25": "bm25", "toy": dense}, LEXICAL_ROWS, docs, kinds={"toy": "semantic"})
    for q in alone.retriever("bm25").questions:
        assert question(together, "bm25", q.id).diagnosis == q.diagnosis
    assert counts(alone, "bm25") == counts(together, "bm25")


def test_answer_spanning_chunks_is_diagnosed_from_the_passages() -> None:
    docs = corpus({
        "network.md": ("# Timeouts\n\nThe client waits thirty seconds by default.\n\n"
                       "# Retries\n\nFailed calls are attempted three times.\n\n"
                       "# Backoff\n\nBetween attempts the delay doubles.\n"),
        "glossary.md": "Glossary: timeouts, retries, backoff and settings are words used in this glossary.",
    })
    card = scored("bm25", [("span", "timeouts retries backoff settings", {"network.md": 1})], docs,
                  chunking=ChunkSpec(200, 0))
    q = question(card, "bm25", "span")
    assert q.top[0].doc == "glossary.md" and q.rank is not None and q.rank > 1
    d = diagnosis(card, "bm25", "span")
    assert d["cause"] == "spans_chunks"
    assert "network.md#0: timeout" in d["evidence"] and "network.md#2: backoff" in d["evidence"]
    assert d["evidence"].endswith("the best chunk holds 1 of 3")


MISLABEL_DOCS = {
    "json.md": "JSON: encode and decode, serialise objects to text and parse them back.",
    "csv.md": "CSV files: rows and columns, comma separated values.",
    "re.md": "Regular expressions match patterns in strings.",
    "paths.md": "Pathlib paths: files and folders on disk.",
}


def test_possibly_mislabeled_from_one_retriever_and_the_corpus() -> None:
    wrong = "encode decode serialise objects parse"
    rows = [("csv", "csv rows", {"csv.md": 1}), ("re", "regular expressions", {"re.md": 1}),
            ("paths", "pathlib paths", {"paths.md": 1}), ("wrong", wrong, {"csv.md": 1})]  # should be json.md
    dense = fixed({"csv rows": [("csv.md", 0.8)], "regular expressions": [("re.md", 0.8)],
                   "pathlib paths": [("paths.md", 0.8)], wrong: [("json.md", 0.9)]})
    card = scored({"toy": dense}, rows, corpus(MISLABEL_DOCS))
    d = diagnosis(card, "toy", "wrong")
    assert d["cause"] == "possibly_mislabeled"
    assert d["evidence"].startswith("the top result json.md (0.9, at least this retriever's median score for a right "
                                    "first answer, 0.8) holds 5 of the question's 5 words, any expected document at most 0")
    assert counts(card, "toy")["possibly_mislabeled"] == 1


def test_a_judged_not_relevant_top_result_is_not_a_label_error() -> None:
    wrong = "encode decode serialise objects parse"
    rows = [("csv", "csv rows", {"csv.md": 1}), ("wrong", wrong, {"csv.md": 1, "json.md": 0})]
    dense = fixed({"csv rows": [("csv.md", 0.8)], wrong: [("json.md", 0.9)]})
    card = scored({"toy": dense}, rows, corpus(MISLABEL_DOCS))
    # not a label error; the stand-in returns one result of the 100 asked, so its list was cut short (issue 18)
    assert diagnosis(card, "toy", "wrong")["cause"] == "cut_short"


def test_a_hub_document_is_found_and_named_as_the_cause() -> None:
    topics = ["apples", "violins", "engines", "tomatoes", "rivers", "castles"]
    long_page = " ".join(f"word{i}" for i in range(60))  # each page names its topic once, among much else
    docs = corpus({
        **{f"{t}.md": f"All about {t}. {long_page}" for t in topics},
        "index.md": " ".join(topics * 3),  # short, and it names every topic thrice: a hub for BM25
    })
    rows = [(t, f"{t} {t}", {f"{t}.md": 1}) for t in topics]
    card = scored("bm25", rows, docs)
    assert card.statistics is not None
    [hub] = card.statistics.hubs["bm25"]
    assert (hub["doc"], hub["wrong"], hub["first_for"], hub["searched"]) == ("index.md", 6, 6, 6)
    assert hub["questions"] == topics
    d = diagnosis(card, "bm25", "apples")
    assert d["cause"] == "hub_document"
    assert d["evidence"] == "index.md comes first for 6 of 6 questions it does not answer"
    assert counts(card, "bm25")["hub_document"] == 6


def test_a_document_right_for_the_questions_it_leads_is_no_hub() -> None:
    docs = corpus({"faq.md": "apples violins engines tomatoes", "other.md": "rivers"})
    rows = [(f"q{i}", word, {"faq.md": 1}) for i, word in enumerate(["apples", "violins", "engines", "tomatoes"])]
    card = scored("bm25", rows, docs)
    assert find_hubs(card.retriever("bm25")) == []


def test_questions_every_retriever_missed_are_listed() -> None:
    docs = corpus({"fruit.md": "Apples, oranges and bananas are fruit."})
    rows = [("both", "engines for trucks", {"fruit.md": 1}), ("one", "violins and cellos", {"music.md": 1})]
    only_garden = fixed({})
    card = scored({"bm25": "bm25", "garden": only_garden}, rows, docs)
    assert card.statistics is not None and card.statistics.missed_by_all == ["both"]
    alone = scored("bm25", rows, docs)
    assert alone.statistics is not None and alone.statistics.missed_by_all == []


def test_a_retriever_error_is_its_own_cause() -> None:
    def flaky(question: str, k: int) -> list[str]:
        if "boom" in question:
            raise RuntimeError("index offline")
        return ["music.md"]

    card = scored(flaky, [("ok", "violins", {"music.md": 1}), ("bad", "boom", {"cars.md": 1})], corpus({}))
    d = diagnosis(card, "flaky", "bad")
    assert d["cause"] == "retriever_error" and "index offline" in d["evidence"]


def test_statistics_round_trip_through_json(tmp_path) -> None:
    topics = ["apples", "violins", "engines"]
    docs = corpus({**{f"{t}.md": f"All about {t}." for t in topics},
                   "index.md": " ".join(f"{t} {t} {t}" for t in topics)})
    card = scored("bm25", [(t, t, {f"{t}.md": 1}) for t in topics], docs)
    card.save(tmp_path / "r.json")
    back = Scorecard.load(tmp_path / "r.json")
    assert back.statistics is not None and card.statistics is not None
    assert back.statistics.hubs == card.statistics.hubs and back.statistics.hubs["bm25"][0]["doc"] == "index.md"
    assert back.statistics.min_questions == 10
    assert set(CAUSES) >= set(back.statistics.diagnosis_counts["bm25"])


def test_the_example_runs_and_explains_each_miss(capsys, monkeypatch, tmp_path) -> None:
    import runpy
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "stats_diagnosis.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "bm25 install: near-duplicate outranked: top result install-old.md" in out
    assert "bm25 retry: lexical vs semantic: expected retry.md shares 0 of the question's 3 words" in out
    assert "dense:toy timeout: hub document outranked: music.md comes first for 3 of 5 questions" in out
