"""A diagnosis for every miss: a small corpus for each cause, evaluated for real, then diagnosed."""

from __future__ import annotations

from typing import Any

from golden_factory import make_golden
from goldeval import compare, evaluate
from goldeval.corpus.chunking import ChunkSpec
from goldeval.corpus.model import Corpus, Document
from goldeval.golden.model import GoldenSet
from goldeval.scorecard import QuestionResult, Scorecard

FILLER = {
    "cars.md": "Cars and trucks have engines and wheels.",
    "music.md": "Violins and cellos make music in an orchestra.",
    "garden.md": "Tomatoes grow in the garden in summer.",
}


def corpus(docs: dict[str, str]) -> Corpus:
    return Corpus({d: Document(d, text) for d, text in {**FILLER, **docs}.items()})


def evaluated(retrievers: Any, golden: GoldenSet, docs: Corpus, chunking: ChunkSpec | None = None) -> Scorecard:
    """Evaluate at k = 1, then run the statistics step with the passages as indexed (the diagnosis reads them)."""
    card = evaluate(retrievers, golden, corpus=docs, k=(1,), chunking=chunking)
    return compare(card, resamples=200, passages=docs.passages(chunking))


def question(card: Scorecard, retriever: str, qid: str) -> QuestionResult:
    return next(q for q in card.retriever(retriever).questions if q.id == qid)


def diagnosis(card: Scorecard, retriever: str, qid: str) -> dict:
    found = question(card, retriever, qid).diagnosis
    assert found is not None, f"{retriever} {qid} has no diagnosis"
    return found


def test_never_retrieved_and_retrieved_deep_with_bm25() -> None:
    docs = corpus({"fruit.md": "Apples, oranges and bananas are fruit."})
    golden = make_golden([
        ("never", "engines for trucks", {"fruit.md": 1}),      # BM25 only finds cars.md
        ("deep", "apples with engines and trucks", {"fruit.md": 1}),  # cars.md matches twice
        ("hit", "violins and cellos", {"music.md": 1}),
    ])
    card = evaluated("bm25", golden, docs)
    never = diagnosis(card, "bm25", "never")
    assert never["cause"] == "never_retrieved" and "no expected answer in the top 100" in never["evidence"]
    deep = diagnosis(card, "bm25", "deep")
    assert question(card, "bm25", "deep").rank == 2
    assert deep["cause"] == "retrieved_deep" and deep["evidence"] == "first expected answer at rank 2 (k = 1)"
    assert "reranker" in deep["suggestion"]
    assert question(card, "bm25", "hit").diagnosis is None
    counts = card.statistics.diagnosis_counts["bm25"]
    assert (counts["never_retrieved"], counts["retrieved_deep"], sum(counts.values())) == (1, 1, 2)


def test_near_duplicate_outranks_the_expected_document() -> None:
    text = "To install the package run pip install goldeval, then import goldeval in Python and evaluate a golden set."
    docs = corpus({"install-v1.md": text, "install-v2.md": text + " Updated for release two."})
    golden = make_golden([("dup", "install the package", {"install-v2.md": 1})])
    card = evaluated("bm25", golden, docs)
    q = question(card, "bm25", "dup")
    assert q.top[0].id == "install-v1.md" and q.rank == 2
    d = diagnosis(card, "bm25", "dup")
    assert d["cause"] == "near_duplicate"
    assert d["evidence"].startswith("top result install-v1.md (") and "the same text as expected install-v2.md" in d["evidence"]


def _semantic(answers: dict[str, list[tuple[str, float]]]):
    def search(question: str, k: int) -> list[tuple[str, float]]:
        return answers.get(question, [("garden.md", 0.1)])[:k]
    return search


def test_lexical_vs_semantic_in_both_directions() -> None:
    docs = corpus({
        "timeouts.md": "Set the request timeout with the timeout argument of the client.",
        "retry.md": "A failed call is attempted again, waiting longer after each failure.",
    })
    golden = make_golden([
        ("lexical", "request timeout argument", {"timeouts.md": 1}),
        ("semantic", "how do I keep trying when something breaks", {"retry.md": 1}),
    ])
    dense = _semantic({
        "request timeout argument": [("music.md", 0.4), ("garden.md", 0.3)],
        "how do I keep trying when something breaks": [("retry.md", 0.7)],
    })
    card = evaluated({"bm25": "bm25", "dense:toy": dense}, golden, docs)
    by_bm25 = diagnosis(card, "bm25", "semantic")
    assert by_bm25["cause"] == "lexical_vs_semantic"
    assert by_bm25["evidence"].startswith("found by dense:toy (semantic) at rank 1; bm25 (lexical) has it")
    by_dense = diagnosis(card, "dense:toy", "lexical")
    assert by_dense["cause"] == "lexical_vs_semantic"
    assert by_dense["evidence"].startswith("found by bm25 (lexical) at rank 1; dense:toy (semantic) has it not in its top")
    assert "hybrid" in by_dense["suggestion"]


def test_answer_spanning_chunks_is_diagnosed_from_the_passages() -> None:
    docs = corpus({
        "network.md": ("# Timeouts\n\nThe client waits thirty seconds by default.\n\n"
                       "# Retries\n\nFailed calls are attempted three times.\n\n"
                       "# Backoff\n\nBetween attempts the delay doubles.\n"),
        "glossary.md": "Glossary: timeouts, retries, backoff and settings are words used in this glossary.",
    })
    golden = make_golden([("span", "timeouts retries backoff settings", {"network.md": 1})])
    card = evaluated("bm25", golden, docs, chunking=ChunkSpec(200, 0))
    q = question(card, "bm25", "span")
    assert q.top[0].doc == "glossary.md" and q.rank is not None and q.rank > 1
    d = diagnosis(card, "bm25", "span")
    assert d["cause"] == "spans_chunks"
    assert "network.md#0: timeout" in d["evidence"] and "network.md#2: backoff" in d["evidence"]
    assert d["evidence"].endswith("the best chunk holds 1 of 3")


def test_possibly_mislabeled_when_retrievers_agree_on_another_document() -> None:
    docs = corpus({
        "json.md": "JSON: encode and decode, serialise objects to text and parse them back.",
        "csv.md": "CSV files: rows and columns, comma separated values.",
        "re.md": "Regular expressions match patterns in strings.",
        "paths.md": "Pathlib paths: files and folders on disk.",
    })
    wrong = "encode decode serialise objects parse"
    golden = make_golden([
        ("csv", "csv rows", {"csv.md": 1}),
        ("re", "regular expressions", {"re.md": 1}),
        ("paths", "pathlib paths", {"paths.md": 1}),
        ("wrong", wrong, {"csv.md": 1}),  # the label should be json.md
    ])
    dense = _semantic({
        "csv rows": [("csv.md", 0.8)], "regular expressions": [("re.md", 0.8)],
        "pathlib paths": [("paths.md", 0.8)], wrong: [("json.md", 0.9), ("csv.md", 0.2)],
    })
    card = evaluated({"bm25": "bm25", "dense:toy": dense}, golden, docs)
    for name in ("bm25", "dense:toy"):
        d = diagnosis(card, name, "wrong")
        assert d["cause"] == "possibly_mislabeled"
        assert "all put json.md first with a high score; expected csv.md" in d["evidence"]
        assert card.statistics.diagnosis_counts[name]["possibly_mislabeled"] == 1


def test_a_retriever_error_is_its_own_cause() -> None:
    def flaky(question: str, k: int) -> list[str]:
        if "boom" in question:
            raise RuntimeError("index offline")
        return ["music.md"]

    golden = make_golden([("ok", "violins", {"music.md": 1}), ("bad", "boom", {"cars.md": 1})])
    card = evaluated(flaky, golden, corpus({}))
    d = diagnosis(card, "flaky", "bad")
    assert d["cause"] == "retriever_error" and "index offline" in d["evidence"]
