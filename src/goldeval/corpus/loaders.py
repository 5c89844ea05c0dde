"""`load_corpus`: one entry point for every corpus format goldeval reads.

Formats, and how `fmt="auto"` recognises them:
- `cranfield`: a folder holding `cran.all.1400`, or that file itself;
- `beir`: a folder holding `corpus.jsonl` (queries and qrels are read by `goldeval.golden.beir`);
- `jsonl`: a `.jsonl` / `.ndjson` file of `{"id", "title", "text"}` objects;
- `folder`: any other folder: .md, .rst, .txt, .html/.htm files, recursively.
"""

from __future__ import annotations

from pathlib import Path

from goldeval.corpus.beir import CORPUS_FILE, load_beir_corpus
from goldeval.corpus.cranfield import DOCS_FILE, load_cranfield_corpus
from goldeval.corpus.files import DEFAULT_MAX_BYTES
from goldeval.corpus.folder import load_folder
from goldeval.corpus.jsonl import load_jsonl
from goldeval.corpus.model import Corpus
from goldeval.errors import InputError

FORMATS = ("auto", "folder", "jsonl", "beir", "cranfield")


def load_corpus(path: str | Path, *, fmt: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES,
                name: str | None = None) -> Corpus:
    """Load a corpus from a folder, a JSONL file, a BEIR folder or the Cranfield collection.

    `max_bytes` caps the size of one document (a file of a folder corpus, a record of a JSONL or BEIR
    corpus; the CLI's `--max-doc-size`); larger ones are skipped with a warning.
    """
    path = Path(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown corpus format {fmt!r}", value=fmt, hint=f"use one of {', '.join(FORMATS)}")
    if max_bytes <= 0:
        raise InputError(f"max_bytes must be positive, got {max_bytes}", value=max_bytes)
    if not path.exists():
        raise InputError("corpus path not found", path=path,
                         hint="give a folder of documents, a JSONL file, a BEIR folder or a Cranfield folder")
    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "cranfield":
        return load_cranfield_corpus(path, name=name)
    if kind == "beir":
        return load_beir_corpus(path, name=name, max_bytes=max_bytes)
    if kind == "jsonl":
        if path.is_dir():
            raise InputError("a JSONL corpus must be a file, this is a folder", path=path)
        return load_jsonl(path, name=name, max_bytes=max_bytes)  # a FIFO or a device is refused there
    if not path.is_dir():
        raise InputError("not a folder, and not a .jsonl file", path=path,
                         hint="a single-file corpus is JSONL (one {\"id\", \"title\", \"text\"} object a line)")
    return load_folder(path, max_bytes=max_bytes, name=name)


def detect_format(path: Path) -> str:
    """The format `fmt="auto"` picks for an existing path."""
    if path.is_dir():
        if (path / DOCS_FILE).is_file():
            return "cranfield"
        if (path / CORPUS_FILE).is_file():
            return "beir"
        return "folder"
    if path.name == DOCS_FILE:
        return "cranfield"
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl"
    raise InputError(f"cannot tell the corpus format of file {path.name!r}", path=path,
                     hint="a single-file corpus is JSONL (.jsonl); a document collection is a folder")
