"""Corpus: load a folder, JSONL, BEIR or Cranfield collection; chunk it into passages."""

from goldeval._lazy import exports
from goldeval.corpus.chunking import ChunkSpec, parse_chunk_spec
from goldeval.corpus.model import Corpus, Document, Passage

__all__ = ["ChunkSpec", "Corpus", "Document", "Passage", "parse_chunk_spec"]

# Public too, imported on first use (their modules are heavier or optional; the loaders bring the HTML,
# BEIR and folder readers, which a command that reads no corpus, or a golden set's `corpus.files`, never needs).
_LAZY = {
    "load_corpus": "goldeval.corpus.loaders",
    "load_cranfield_corpus": "goldeval.corpus.cranfield",
    "build_stdlib_corpus": "goldeval.corpus.stdlib",
}
__all__ += list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
