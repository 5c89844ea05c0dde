"""The corpus half of a BEIR dataset folder: `corpus.jsonl` with `_id`, `title` and `text`.

A BEIR folder (Thakur et al., 2021) holds `corpus.jsonl`, `queries.jsonl` and `qrels/<split>.tsv`;
the questions and judgments are read by `goldeval.golden.beir.load_beir_golden`.
"""

from __future__ import annotations

from pathlib import Path

from goldeval.corpus.files import DEFAULT_MAX_BYTES
from goldeval.corpus.jsonl import load_jsonl
from goldeval.corpus.model import Corpus
from goldeval.errors import InputError

CORPUS_FILE = "corpus.jsonl"


def load_beir_corpus(folder: Path, *, name: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Corpus:
    """Read a BEIR folder's corpus.jsonl (`_id` is the document id); records past `max_bytes` are skipped."""
    path = folder / CORPUS_FILE
    if not path.is_file():
        raise InputError(f"no {CORPUS_FILE} in this folder", path=folder,
                         hint="a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv")
    return load_jsonl(path, id_key="_id", name=name or folder.name, max_bytes=max_bytes)
