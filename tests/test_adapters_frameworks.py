"""LangChain and LlamaIndex retrievers evaluated as they are (issue 13): each library's own in-memory
store, filled with goldeval's offline `minilm` wrapped as that library's embeddings class, scores exactly
as goldeval's `dense:minilm` on the same passages; no network is touched."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

import goldeval
from goldeval.cli import main
from goldeval.corpus import load_corpus
from goldeval.golden.io import load_golden
from goldeval.retrievers.adapters import LangChainRetriever, LlamaIndexRetriever, adapt
from goldeval.retrievers.dense import passage_text
from network_guard import refuse_network

pytestmark = pytest.mark.models

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
K = (1, 3, 5)


@pytest.fixture(scope="module")
def data() -> tuple[Any, Any]:
    corpus = load_corpus(EXAMPLES / "corpus")
    return corpus, load_golden(EXAMPLES / "golden_example.jsonl", corpus=corpus)


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory) -> Any:
    corpus, golden = data
    return goldeval.evaluate("dense:minilm", golden, corpus=corpus, k=K,
                             workspace=tmp_path_factory.mktemp("ws")).retrievers[0]


def langchain_store(corpus: Any, key: str = "source") -> Any:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from goldeval.retrievers.adapters.langchain import goldeval_embeddings

    store = InMemoryVectorStore(goldeval_embeddings("minilm"))
    store.add_documents([Document(page_content=passage_text(p), metadata={key: p.doc_id}) for p in corpus.passages()])
    return store


def same_as(card: Any, reference: Any) -> None:
    ours = card.retrievers[0]
    assert ours.n_errors == 0
    assert [(q.id, q.rank) for q in ours.questions] == [(q.id, q.rank) for q in reference.questions]
    for m, value in reference.metrics.items():
        assert ours.metrics[m] == pytest.approx(value), m


def test_a_langchain_retriever_is_evaluated_directly(data, reference, monkeypatch) -> None:
    attempts = refuse_network(monkeypatch)
    corpus, golden = data
    retriever = langchain_store(corpus).as_retriever()  # its own k is 4; goldeval asks for the depth
    card = goldeval.evaluate({"langchain": retriever}, golden, k=K)
    same_as(card, reference)
    ours = card.retrievers[0]
    assert ours.config["kind"] == "langchain" and ours.config["scores"] == "store"
    assert ours.config["class"] == "langchain_core.vectorstores.base.VectorStoreRetriever"
    assert ours.questions[0].top[0].score == pytest.approx(reference.questions[0].top[0].score, abs=1e-4)
    assert len(ours.questions[0].top) == 5 and retriever.search_kwargs == {}  # the user's object is unchanged
    assert attempts == []


def test_the_document_id_comes_from_the_metadata_key_given(data, reference) -> None:
    corpus, golden = data
    store = langchain_store(corpus, key="path")
    card = goldeval.evaluate(LangChainRetriever(store.as_retriever(), id_key="path", name="lc"), golden, k=K)
    same_as(card, reference)
    wrong = goldeval.evaluate(LangChainRetriever(store.as_retriever(), id_key="url", name="lc"), golden, k=K)
    first = wrong.retrievers[0].questions[0]
    assert wrong.retrievers[0].n_errors == len(golden)
    assert first.error == "ValueError: a result has no metadata key 'url' (it has: path)"


def test_ids_the_store_assigned_are_said_once_not_scored_in_silence(data, capsys) -> None:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from goldeval.retrievers.adapters.langchain import goldeval_embeddings

    corpus, golden = data
    store = InMemoryVectorStore(goldeval_embeddings("minilm"))
    store.add_documents([Document(page_content=passage_text(p)) for p in corpus.passages()])  # no metadata: UUIDs
    card = goldeval.evaluate({"lc": store.as_retriever()}, golden, k=K)
    err = capsys.readouterr().err
    assert err.count("lc: its results have no doc_id, source, id metadata, so each counts for its Document.id") == 1
    assert "give id_key=KEY" in err
    assert card.retrievers[0].metrics[goldeval.parse_metric("hit@5")] == 0.0  # the UUIDs match nothing, as said


def test_a_retriever_without_scores_is_ranked_by_its_order(data) -> None:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class Keyword(BaseRetriever):
        docs: list[Document]

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            words = set(query.lower().split())
            scored = sorted(self.docs, key=lambda d: -len(words & set(d.page_content.lower().split())))
            return scored[:3]

    corpus, golden = data
    keyword = Keyword(docs=[Document(page_content=p.text, metadata={"doc_id": p.doc_id}) for p in corpus.passages()])
    card = goldeval.evaluate(keyword, golden, k=K)
    ours = card.retrievers[0]
    assert ours.n_errors == 0 and ours.config["scores"] == "rank"
    assert [h.score for h in ours.questions[0].top] == [3.0, 2.0, 1.0]


def test_a_llamaindex_retriever_is_evaluated_directly(data, reference, monkeypatch) -> None:
    attempts = refuse_network(monkeypatch)
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores import SimpleVectorStore

    from goldeval.retrievers.adapters.llamaindex import goldeval_embedding

    corpus, golden = data
    nodes = [TextNode(text=passage_text(p), metadata={"source": p.doc_id}, excluded_embed_metadata_keys=["source"])
             for p in corpus.passages()]
    from llama_index.core import StorageContext

    storage = StorageContext.from_defaults(vector_store=SimpleVectorStore())
    index = VectorStoreIndex(nodes, embed_model=goldeval_embedding("minilm"), storage_context=storage)
    retriever = index.as_retriever(similarity_top_k=2)
    card = goldeval.evaluate({"llamaindex": retriever}, golden, k=K)
    same_as(card, reference)
    assert retriever.similarity_top_k == 2  # asked on a copy: the user's object is unchanged
    assert card.retrievers[0].config["kind"] == "llamaindex"
    whole_index = adapt(index, name="index")
    assert isinstance(whole_index, LlamaIndexRetriever)
    same_as(goldeval.evaluate(whole_index, golden, k=K), reference)
    assert attempts == []


def test_module_object_on_the_command_line(data, reference, tmp_path: Path, monkeypatch) -> None:
    corpus = str(EXAMPLES / "corpus")
    (tmp_path / "lc_app.py").write_text(textwrap.dedent(f"""\
        from langchain_core.documents import Document
        from langchain_core.vectorstores import InMemoryVectorStore

        from goldeval.corpus import load_corpus
        from goldeval.retrievers.adapters.langchain import goldeval_embeddings
        from goldeval.retrievers.dense import passage_text

        store = InMemoryVectorStore(goldeval_embeddings("minilm"))
        store.add_documents([Document(page_content=passage_text(p), metadata={{"file": p.doc_id, "source": p.doc_id}})
                             for p in load_corpus({corpus!r}).passages()])
        retriever = store.as_retriever()
        """))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    code = main(["eval", "--golden", str(EXAMPLES / "golden_example.jsonl"), "--retriever",
                 "langchain:lc_app:retriever?id_key=file", "--k", "1,3,5", "--json", str(out), "--quiet", "--no-stats"])
    assert code == 0
    (entry,) = json.loads(out.read_text())["retrievers"]
    assert entry["config"]["id_key"] == "file" and entry["config"]["kind"] == "langchain"
    assert entry["metrics"]["mrr"] == pytest.approx(reference.metrics[goldeval.parse_metric("mrr")])
    plain = tmp_path / "plain.json"  # module:object, as for a search function; the id from `source`
    assert main(["eval", "--golden", str(EXAMPLES / "golden_example.jsonl"), "--retriever", "lc_app:retriever",
                 "--k", "1,3,5", "--json", str(plain), "--quiet", "--no-stats"]) == 0
    (entry,) = json.loads(plain.read_text())["retrievers"]
    assert entry["config"]["kind"] == "langchain" and entry["config"]["id_key"] is None
    assert entry["metrics"]["mrr"] == pytest.approx(reference.metrics[goldeval.parse_metric("mrr")])
    for spec in ("langchain:lc_app:store", "lc_app:store"):  # a vector store is not a retriever
        assert main(["eval", "--golden", str(EXAMPLES / "golden_example.jsonl"), "--retriever", spec, "--quiet"]) == 2


@pytest.mark.parametrize("name", ["adapter_langchain.py", "adapter_llamaindex.py"])
def test_the_examples_run_offline(name: str, tmp_path: Path, monkeypatch, capsys) -> None:
    import runpy
    import sys

    attempts = refuse_network(monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [name])
    runpy.run_path(str(EXAMPLES.parent / name), run_name="__main__")
    out = capsys.readouterr().out
    assert "goldeval scorecard: golden_example.jsonl" in out and "Why the misses missed at k=5" in out
    if "langchain" in name:  # the adapter scores as dense:minilm on the same texts, on any CPU (issue 17: a
        # constant 1.000 was the int8 model on AVX-512; on AVX2 (qemu -cpu Haswell) h01's answer scores 0.531 to
        # claude-git-workflow's 0.535, not 0.522 to 0.519, and drops from rank 3 to 4: hit@3 8/9 = 0.889)
        found = re.search(r"langchain hit@3 with id_key=source: (\d\.\d{3}); dense:minilm on the same texts: "
                          r"(\d\.\d{3})", out)
        assert found is not None and found.group(1) == found.group(2)
    else:
        assert "the retriever still returns 3 results to your app" in out
    assert attempts == []
