"""Evaluate the LangChain retriever you already have, as it is, in one line.

Run: python examples/adapter_langchain.py   (needs the extras dense and adapters; nothing is downloaded)

Your LangChain app builds a vector store and `store.as_retriever()`; goldeval takes that retriever
directly (`goldeval.evaluate(retriever, golden)`) or on the command line as `module:object`
(`goldeval eval --golden golden.jsonl --retriever 'langchain:my_app:retriever?id_key=source'`). The id
of each result is read from the document's metadata (`id_key`, default doc_id, then source, then id).
Here the store is LangChain's own InMemoryVectorStore, embedded with goldeval's offline `minilm`.
"""

from pathlib import Path

from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

import goldeval
from goldeval.corpus import load_corpus
from goldeval.report.terminal import render
from goldeval.retrievers.adapters import LangChainRetriever
from goldeval.retrievers.adapters.langchain import goldeval_embeddings

DATA = Path(__file__).resolve().parent / "data"

# --- your app: documents with their file path in the metadata, a store, a retriever -----------------
corpus = load_corpus(DATA / "corpus")
store = InMemoryVectorStore(goldeval_embeddings("minilm"))
store.add_documents([Document(page_content=p.text, metadata={"source": p.doc_id}) for p in corpus.passages()])
retriever = store.as_retriever()

# --- the evaluation: the retriever as it is, beside goldeval's BM25 on the same documents ------------
card = goldeval.evaluate({"langchain": retriever, "bm25": "bm25"}, DATA / "golden_example.jsonl", corpus=corpus,
                         k=(1, 3, 5))
render(goldeval.compare(card, passages=corpus.passages()))

# a metadata key of your own: say which
card = goldeval.evaluate(LangChainRetriever(retriever, id_key="source", name="langchain"),
                         DATA / "golden_example.jsonl", k=(1, 3, 5))
print("langchain hit@3 with id_key=source:", f"{card.retrievers[0].metrics[goldeval.parse_metric('hit@3')]:.3f}")
