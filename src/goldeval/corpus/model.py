"""The corpus nouns: Document, Passage (a document or one of its chunks), Corpus."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldeval.types import DocId, PassageId


@dataclass(frozen=True)
class Document:
    """One document of the user's corpus."""

    id: DocId
    text: str
    title: str = ""
    source: str = ""
    """Where it came from (a file path, a JSONL line), for error messages."""


@dataclass(frozen=True)
class Passage:
    """A retrievable unit: a whole document (id == doc_id) or a chunk of one.

    Chunk ids derive from the document id and position: `library/json.rst.txt#3` is the fourth
    chunk (0-based) of `library/json.rst.txt`. `start`/`end` are character offsets into the
    document's text.
    """

    id: PassageId
    doc_id: DocId
    text: str
    title: str = ""
    start: int = 0
    end: int = 0


@dataclass
class Corpus:
    """Documents by id, in load order, with the warnings collected while loading."""

    documents: dict[DocId, Document]
    name: str = "corpus"
    path: str = ""
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path, **options: Any) -> Corpus:
        """Read a folder, JSONL file, BEIR folder or Cranfield collection: `corpus.loaders.load_corpus`
        (`fmt`, `max_bytes` and the other options are its own)."""
        from goldeval.corpus.loaders import load_corpus

        return load_corpus(path, **options)

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents.values())

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.documents

    def passages(self, chunking: object | None = None) -> Sequence[Passage]:
        """The units a retriever indexes: whole documents, or chunks if `chunking` is given.

        `chunking` is a `goldeval.corpus.chunking.ChunkSpec`; None means one passage per document.
        """
        if chunking is None:
            return [Passage(d.id, d.id, d.text, d.title, 0, len(d.text)) for d in self]
        from goldeval.corpus.chunking import chunk_corpus

        return chunk_corpus(self, chunking)  # type: ignore[arg-type]
