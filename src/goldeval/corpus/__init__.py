"""Corpus: load a folder, JSONL, BEIR or Cranfield collection; chunk it into passages."""

from goldeval.corpus.chunking import ChunkSpec, parse_chunk_spec
from goldeval.corpus.loaders import load_corpus
from goldeval.corpus.model import Corpus, Document, Passage

__all__ = ["ChunkSpec", "Corpus", "Document", "Passage", "load_corpus", "parse_chunk_spec"]
