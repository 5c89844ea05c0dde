"""Chunks and short lists from LangChain and LlamaIndex retrievers (issue 18, items 1 and 2).

1. An adapter passes the retriever's list on as it came: at doc level a document's rank is the position of
   its first chunk in that list, as LlamaIndex's own RetrieverEvaluator counts it, never its position among
   documents (the adapters used to merge a document's chunks first). The outside reference is LlamaIndex:
   its RetrieverEvaluator on its own retriever, and its MRR/HitRate metrics on a LangChain retriever's list.
2. A retriever that returns fewer results than asked (LangChain's BM25Retriever returns its k, 4) is scored
   on what it returned: how many came back is recorded, metrics past it are unmeasurable (n/a), and a miss
   beyond it says "not in the N returned" with the advice to raise the retriever's k.
Real chunks of examples/data (LangChain's RecursiveCharacterTextSplitter), goldeval's offline `minilm`.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import goldeval
from goldeval.corpus import load_corpus
from goldeval.golden.io import load_golden
from goldeval.ids import repeated_of
from goldeval.report.terminal import render, render_table
from goldeval.retrievers.adapters import LangChainRetriever
from goldeval.scorecard.depth import Returned
from network_guard import refuse_network

pytestmark = pytest.mark.models

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
CHUNK = 300
"""Characters per chunk: the 7 help pages become 24 chunks, several of a page often side by side."""


@pytest.fixture(scope="module")
def data() -> tuple[Any, Any]:
    corpus = load_corpus(EXAMPLES / "corpus")
    return corpus, load_golden(EXAMPLES / "golden_example.jsonl", corpus=corpus)


@pytest.fixture(scope="module")
def chunks(data) -> list[Any]:
    """LangChain Documents: each chunk's metadata names its page (`source`), as a text splitter leaves it."""
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    pages = [Document(page_content=p.text, metadata={"source": p.doc_id}) for p in data[0].passages()]
    return RecursiveCharacterTextSplitter(chunk_size=CHUNK, chunk_overlap=0).split_documents(pages)


def relevant(golden: Any, qid: str) -> list[str]:
    return [d for d, g in golden.grades(qid).items() if g > 0]


def llamaindex_score(metric: str, expected: list[str], retrieved: list[str]) -> float:
    """LlamaIndex's own retrieval metric (what its RetrieverEvaluator computes) on a list of ids."""
    from llama_index.core.evaluation.retrieval.metrics import MRR, HitRate

    cls = {"mrr": MRR, "hit": HitRate}[metric]
    return float(cls().compute(expected_ids=expected, retrieved_ids=retrieved).score)


def document_rank(q: Any) -> int | None:
    """Where the first expected document is among the distinct documents of the list (the old, merged rank)."""
    docs = list(dict.fromkeys(h.doc for h in q.top))
    return next((i for i, d in enumerate(docs, start=1) if d in q.expected), None)


def test_llamaindex_chunks_count_where_its_own_evaluator_counts_them(data, chunks, monkeypatch) -> None:
    attempts = refuse_network(monkeypatch)
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.evaluation import RetrieverEvaluator
    from llama_index.core.node_parser import LangchainNodeParser

    from goldeval.retrievers.adapters.llamaindex import goldeval_embedding

    corpus, golden = data
    pages = [Document(text=p.text, id_=p.doc_id, excluded_embed_metadata_keys=["source"]) for p in corpus.passages()]
    nodes = LangchainNodeParser(RecursiveCharacterTextSplitter(chunk_size=CHUNK, chunk_overlap=0)).get_nodes_from_documents(pages)
    assert len(nodes) == len(chunks) and {n.ref_doc_id for n in nodes} == {p.doc_id for p in corpus.passages()}
    index = VectorStoreIndex(nodes, embed_model=goldeval_embedding("minilm"))
    card = goldeval.evaluate({"li": index.as_retriever(similarity_top_k=2)}, golden, k=(3, 10), metrics=["mrr@10", "hit@10", "hit@3"])
    ours = card.retrievers[0]
    assert ours.n_errors == 0 and ours.returned == Returned(asked=100, min=len(nodes), median=len(nodes), max=len(nodes),
                                                            cut_short=True)
    theirs: dict[str, dict[str, float]] = {}
    for top_k, names in ((10, ["mrr", "hit_rate"]), (3, ["hit_rate"])):
        evaluator = RetrieverEvaluator.from_metric_names(names, retriever=index.as_retriever(similarity_top_k=top_k))
        for q in golden.answerable:  # LlamaIndex judges nodes: every chunk of an expected page is expected
            expected = [n.node_id for n in nodes if n.ref_doc_id in relevant(golden, q.id)]
            values = evaluator.evaluate(q.question, expected).metric_vals_dict
            theirs.setdefault(q.id, {}).update({f"{m}@{top_k}": v for m, v in values.items()})
    for q in ours.answerable:
        got = {str(m): v for m, v in q.metrics.items()}
        assert got == pytest.approx({"mrr@10": theirs[q.id]["mrr@10"], "hit@10": theirs[q.id]["hit_rate@10"],
                                     "hit@3": theirs[q.id]["hit_rate@3"]}), q.id
    hand = [q.id for q in golden.answerable if q.source != "synthetic"]  # the headline: synthetic ones beside it
    assert 0 < len(hand) < len(theirs)
    for metric, key in (("mrr@10", "mrr@10"), ("hit@3", "hit_rate@3")):
        mean = sum(theirs[qid][key] for qid in hand) / len(hand)
        assert ours.metrics[goldeval.parse_metric(metric)] == pytest.approx(mean)
    # the case is really here: a page's second chunk came before the answer, so the merged rank was better
    assert any(q.rank != document_rank(q) for q in ours.answerable)
    repeats = [(q, i, h) for q in ours.questions for i, h in enumerate(q.top) if repeated_of(h.id) is not None]
    assert repeats and all(h.doc == repeated_of(h.id) and h.doc in [e.doc for e in q.top[:i]] for q, i, h in repeats)
    assert attempts == []


def test_a_langchain_store_over_chunks_counts_the_chunks_it_returned_on_every_path(data, chunks, tmp_path) -> None:
    from langchain_core.vectorstores import InMemoryVectorStore

    from goldeval.retrievers.adapters.langchain import goldeval_embeddings

    corpus, golden = data
    store = InMemoryVectorStore(goldeval_embeddings("minilm"))
    store.add_documents(chunks)
    metrics = ["mrr", "hit@1", "hit@3", "hit@5"]
    card = goldeval.evaluate({"lc": store.as_retriever()}, golden, corpus=corpus, k=(1, 3, 5), metrics=metrics)
    ours = card.retrievers[0]
    for q in ours.answerable:  # LlamaIndex's metrics on the documents of the chunks the store returned, in order
        listed = [d.metadata["source"] for d in store.similarity_search(q.question, k=100)]
        expected = relevant(golden, q.id)
        reference = {"mrr": llamaindex_score("mrr", expected, listed),
                     **{f"hit@{k}": llamaindex_score("hit", expected, listed[:k]) for k in (1, 3, 5)}}
        assert {str(m): v for m, v in q.metrics.items()} == pytest.approx(reference), q.id
    assert any(q.rank != document_rank(q) for q in ours.answerable)
    # the same lists as a TREC run file: the same ranks and numbers (ids name their document: goldeval.ids)
    run = LangChainRetriever(store.as_retriever(), name="lc").search({q.id: q.question for q in golden}, top_k=100)
    lines = [f"{qid} Q0 {pid} {rank} {score!r} lc" for qid, hits in run.results.items()
             for rank, (pid, score) in enumerate(hits, start=1)]
    (tmp_path / "lc.trec").write_text("\n".join(lines) + "\n")
    again = goldeval.evaluate({"lc": f"run:{tmp_path / 'lc.trec'}"}, golden, corpus=corpus, k=(1, 3, 5),
                              metrics=metrics).retrievers[0]
    assert [(q.id, q.rank) for q in again.questions] == [(q.id, q.rank) for q in ours.questions]
    assert again.metrics == pytest.approx(ours.metrics)


def bm25(chunks: list[Any], **kwargs: Any) -> Any:
    with warnings.catch_warnings():  # langchain-community says at import that it is being sunset
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.retrievers import BM25Retriever
    return BM25Retriever.from_documents(chunks, **kwargs)


def test_a_bm25_retriever_returning_four_is_not_scored_as_if_it_returned_a_hundred(data, chunks, tmp_path) -> None:
    corpus, golden = data
    four = bm25(chunks)
    assert four.k == 4  # LangChain's default; goldeval's k=100 does not reach it
    card = goldeval.evaluate({"lc_bm25": four, "bm25": "bm25"}, golden, corpus=corpus, workspace=tmp_path / "ws")
    lc, own = card.retrievers
    assert lc.returned == Returned(asked=100, min=4, median=4.0, max=4, cut_short=True)
    assert {q.returned for q in lc.questions} == {4}
    assert [str(m) for m in lc.unmeasurable] == ["hit@5", "hit@10", "recall@5", "recall@10", "precision@5",
                                                 "precision@10", "ndcg@5", "ndcg@10"]
    # goldeval's BM25 returns what scores: 7 pages at most, a complete list, every metric measured
    assert own.returned is not None and own.returned.max <= 7 and not own.returned.cut_short and own.unmeasurable == []
    for q in lc.answerable:  # the numbers that are measured are LlamaIndex's on the same four documents
        listed = [d.metadata["source"] for d in four.invoke(q.question)]
        assert q.metrics[goldeval.parse_metric("mrr")] == pytest.approx(llamaindex_score("mrr", relevant(golden, q.id), listed))
        assert q.metrics[goldeval.parse_metric("hit@1")] == llamaindex_score("hit", relevant(golden, q.id), listed[:1])
    card.save(tmp_path / "r.json")
    entry = json.loads((tmp_path / "r.json").read_text())["retrievers"][0]
    assert entry["returned"] == {"asked": 100, "min": 4, "median": 4.0, "max": 4, "cut_short": True,
                                 "unmeasurable": [str(m) for m in lc.unmeasurable]}
    assert entry["questions"][0]["returned"] == 4
    loaded = goldeval.Scorecard.load(tmp_path / "r.json").retrievers[0]
    assert loaded.returned == lc.returned and loaded.unmeasurable == lc.unmeasurable
    console = Console(record=True, width=200)
    render_table(card, console)
    text = console.export_text()
    flat = " ".join(text.split())
    assert "(doc level, 100 asked per question)" in text and "top 100 retrieved" not in text
    assert ("lc_bm25: returned at most 4 results per question (min 4, median 4) of the 100 asked; hit@5, hit@10, "
            "recall@5, recall@10, precision@5, precision@10, ndcg@5, ndcg@10: n/a, past what it returned; raise the "
            "retriever's own k") in flat
    hit10 = next(line for line in text.splitlines() if line.startswith("hit@10 ")).replace("│", " ").split()
    assert hit10 == ["hit@10", "n/a", f"{own.metrics[goldeval.parse_metric('hit@10')]:.3f}"]


def test_a_miss_past_a_short_list_says_so_and_advises_raising_k(data, chunks) -> None:
    corpus, golden = data
    card = goldeval.compare(goldeval.evaluate({"lc_bm25": bm25(chunks, k=1)}, golden, corpus=corpus))
    lc = card.retrievers[0]
    missed = [q for q in lc.answerable if not q.hit_at(card.headline_k)]
    assert missed and lc.returned is not None and lc.returned.max == 1
    for q in missed:
        assert q.rank is None and q.diagnosis is not None and q.diagnosis["cause"] == "cut_short"
        assert q.diagnosis["evidence"] == "no expected answer in the 1 results it returned (100 were asked for)"
        assert q.diagnosis["suggestion"].startswith("raise the retriever's own k")
    console = Console(record=True, width=200)
    render(card, console=console, show_misses=True)
    flat = " ".join(console.export_text().split())
    for q in missed:  # the miss list, where it used to read "rank >100"
        assert f"miss {q.id} (not in the 1 returned): " in flat
    assert "rank >100" not in flat and "cut short: raise the retriever's own k" in flat
