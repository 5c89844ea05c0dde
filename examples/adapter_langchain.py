"""Evaluate the LangChain retriever you already have, as it is, in one line.

Run: python examples/adapter_langchain.py   (needs the extras dense and adapters; nothing is downloaded)

Your LangChain app builds a vector store and `store.as_retriever()`; goldeval takes that retriever
directly (`goldeval.evaluate(retriever, golden)`) or on the command line as `module:object`
(`goldeval eval --golden golden.jsonl --retriever 'langchain:my_app:retriever?id_key=source'`). The id
of each result is read from the document's metadata (`id_key`, default doc_id, then source, then id).
Here the store is LangChain's own InMemoryVectorStore, embedded with goldeval's offline `minilm` over the
same texts `dense:minilm` embeds, so the two score alike: the adapter adds nothing and drops nothing. Each
result counts where the retriever put it (two chunks of one page: the first is the hit, the second counts
for nothing). The numbers themselves move a little from one CPU to another (the int8 model's kernels
differ), which is why the example prints the LangChain number beside dense:minilm's rather than a constant.
"""

from pathlib import Path

from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

import goldeval
from goldeval import LangChainRetriever
from goldeval.corpus import load_corpus
from goldeval.report import render
from goldeval.retrievers import goldeval_embeddings, passage_text

DATA = Path(__file__).resolve().parent / "data"

# --- your app: documents with their file path in the metadata, a store, a retriever -----------------
corpus = load_corpus(DATA / "corpus")
store = InMemoryVectorStore(goldeval_embeddings("minilm"))
store.add_documents([Document(page_content=passage_text(p), metadata={"source": p.doc_id}) for p in corpus.passages()])
retriever = store.as_retriever()

# --- the evaluation: the retriever as it is, beside goldeval's dense:minilm and BM25 on the same documents
card = goldeval.evaluate({"langchain": retriever, "dense:minilm": "dense:minilm", "bm25": "bm25"},
                         DATA / "golden_example.jsonl", corpus=corpus, k=(1, 3, 5))
render(goldeval.compare(card, passages=corpus.passages()))

# a metadata key of your own: say which
hit3 = goldeval.parse_metric("hit@3")
mine = goldeval.evaluate(LangChainRetriever(retriever, id_key="source", name="langchain"),
                         DATA / "golden_example.jsonl", k=(1, 3, 5))
print(f"langchain hit@3 with id_key=source: {mine.retrievers[0].metrics[hit3]:.3f}; "
      f"dense:minilm on the same texts: {card.retriever('dense:minilm').metrics[hit3]:.3f}")
