"""Evaluate the LlamaIndex retriever (or index) you already have, as it is, in one line.

Run: python examples/adapter_llamaindex.py   (needs the extras dense and adapters; nothing is downloaded)

goldeval takes `index.as_retriever()` (or the index itself) directly, or on the command line as
`module:object` (`--retriever 'llamaindex:my_app:retriever?id_key=source'`). Each question is asked
of a copy of the retriever whose `similarity_top_k` is the evaluation's depth, so a miss reports where
the answer finally appeared; your object is left as it was. Here the index is LlamaIndex's own
VectorStoreIndex over a SimpleVectorStore, embedded with goldeval's offline `minilm`.
"""

from pathlib import Path

from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore

import goldeval
from goldeval.corpus import load_corpus
from goldeval.report import render
from goldeval.retrievers import goldeval_embedding

DATA = Path(__file__).resolve().parent / "data"

# --- your app: nodes with their file path in the metadata, an index, a retriever --------------------
corpus = load_corpus(DATA / "corpus")
nodes = [TextNode(text=p.text, metadata={"source": p.doc_id}, excluded_embed_metadata_keys=["source"])
         for p in corpus.passages()]
index = VectorStoreIndex(nodes, embed_model=goldeval_embedding("minilm"),
                         storage_context=StorageContext.from_defaults(vector_store=SimpleVectorStore()))
retriever = index.as_retriever(similarity_top_k=3)

# --- the evaluation: the retriever as it is, beside goldeval's BM25 on the same documents ------------
card = goldeval.evaluate({"llamaindex": retriever, "bm25": "bm25"}, DATA / "golden_example.jsonl", corpus=corpus,
                         k=(1, 3, 5))
render(goldeval.compare(card, passages=corpus.passages()))
print("the retriever still returns", retriever.similarity_top_k, "results to your app")
