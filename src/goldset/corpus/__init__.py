"""Corpus: load a folder, JSONL, BEIR or Cranfield collection; chunk it into passages."""

from goldset.corpus.model import Corpus, Document, Passage

__all__ = ["Corpus", "Document", "Passage"]
