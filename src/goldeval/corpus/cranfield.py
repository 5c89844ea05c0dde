"""The Cranfield 1400 collection's document file, `cran.all.1400`.

Records start with `.I <number>`; fields follow as `.T` (title), `.A` (authors), `.B` (source) and
`.W` (abstract), each marker alone on its line. A document's id is its `.I` number as a string
(`"1"` .. `"1400"`), its title the `.T` field, and its text the `.W` abstract, which repeats the
title in 1396 of the 1400 documents; where it does not, the title is put in front of it, so the
text is always title + abstract without indexing the title twice.

Quirks of the distributed file, handled on purpose: a few abstracts contain stray `.A`, `.B` or a
second `.W` marker line inside the text (documents 240, 576, 578); once `.W` has begun, such marker
lines are dropped and the text after them stays in the abstract. Documents 471 and 995 are empty
in the original; they are kept (the collection has 1400 documents) with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from goldeval.corpus.files import Skipped, decode_text
from goldeval.corpus.model import Corpus, Document
from goldeval.errors import InputError

DOCS_FILE = "cran.all.1400"
_RECORD = re.compile(r"^\.I[ \t]+(\S+)[ \t]*$")
_MARKER = re.compile(r"^\.([A-Z])[ \t]*$")


@dataclass
class Record:
    """One `.I` record: its number as written, the line it starts on, and its fields' lines."""

    number: str
    line: int
    fields: dict[str, list[str]] = field(default_factory=dict)

    def text(self, name: str) -> str:
        return "\n".join(self.fields.get(name, [])).strip()

    def one_line(self, name: str) -> str:
        return " ".join(self.text(name).split())


def read_records(path: Path, *, body: str = "W") -> list[Record]:
    """Parse a `.I`-record file (cran.all.1400, cran.qry). Lines before the first `.I` are an error.

    Once the `body` field has begun, later marker lines are treated as stray (see module doc).
    """
    text = read_whole(path)
    records: list[Record] = []
    current: Record | None = None
    name = ""
    for lineno, line in enumerate(text.split("\n"), 1):
        start = _RECORD.match(line)
        if start:
            current = Record(start.group(1), lineno)
            records.append(current)
            name = ""
            continue
        marker = _MARKER.match(line)
        if current is None:
            if line.strip():
                raise InputError("text before the first `.I` record", path=path, line=lineno, value=line,
                                 hint="a Cranfield file starts with a line `.I 1`")
            continue
        if marker and name != body:
            name = marker.group(1)
            current.fields.setdefault(name, [])
        elif marker:
            continue  # a stray marker inside the body: keep reading the body
        elif name:
            current.fields[name].append(line)
    if not records:
        raise InputError("no `.I` records found", path=path, hint="is this a Cranfield-format file?")
    return records


def read_whole(path: Path) -> str:
    """A whole collection file as text, or InputError if it is not readable UTF-8 text."""
    if not path.is_file():
        raise InputError("file not found", path=path, hint=f"a Cranfield folder holds {DOCS_FILE}, cran.qry and cranqrel")
    result = decode_text(path, path.read_bytes())
    if isinstance(result, Skipped):
        raise InputError(f"cannot use this file: {result.detail}", path=path)
    return result


def load_cranfield_corpus(folder: Path, *, name: str | None = None) -> Corpus:
    """Read `cran.all.1400` from a Cranfield folder (or the file itself) into a Corpus."""
    path = folder / DOCS_FILE if folder.is_dir() else folder
    corpus = Corpus({}, name=name or "cranfield", path=str(path))
    empty: list[str] = []
    for record in read_records(path):
        doc_id = _doc_id(record, path)
        if doc_id in corpus.documents:
            raise InputError(f"duplicate document number {record.number!r}", path=path, line=record.line,
                             value=record.number)
        title, abstract = record.one_line("T"), record.text("W")
        text = abstract if " ".join(abstract.split()).startswith(title) else f"{title}\n{abstract}".strip()
        if not text:
            empty.append(doc_id)
        corpus.documents[doc_id] = Document(doc_id, text, title, source=f"{path}:{record.line}")
    if empty:
        corpus.warnings.append(f"{len(empty)} documents have no text in the collection ({', '.join(empty)}); "
                               "kept so that document numbers and counts match the judgments")
    return corpus


def _doc_id(record: Record, path: Path) -> str:
    if not record.number.isdigit():
        raise InputError(f"document number {record.number!r} is not a number", path=path, line=record.line,
                         value=record.number)
    return str(int(record.number))
