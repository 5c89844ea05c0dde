"""Which document is this id: the one rule for passage ids, used by evaluation, validation and stats.

A passage id is a document id, or a chunk id `DOC#N` (N the 0-based chunk position). In order:
1. an id the corpus knows as a passage belongs to that passage's document;
2. an id that is a known document id is that document (a document id may itself contain `#`);
3. `DOC#N` (N digits) whose `DOC` is a known document id belongs to `DOC`; `DOC#x` is not a chunk id;
4. anything else stays itself, an id the corpus does not know.
Known document ids are the corpus's; without a corpus, the ids the golden set judges (so a search
function's `a.md#3` counts for an expected `a.md`, and `https://x/a#install` stays itself).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

CHUNK_SEP = "#"


def split_chunk_id(pid: str) -> tuple[str, str | None]:
    """(`doc`, `N`) for `doc#N` with N a chunk number; (`pid`, None) otherwise (`doc#intro` is an id of its
    own, or a typo the golden-set checks name, never chunk `intro` of `doc`)."""
    doc, sep, position = pid.rpartition(CHUNK_SEP)
    return (doc, position) if sep and doc and position.isdigit() else (pid, None)


def doc_part(pid: str) -> str:
    """The document part of a chunk id (`a.md#3` -> `a.md`); the id itself without a separator."""
    return split_chunk_id(pid)[0]


class DocumentOf:
    """Resolves any id to its document under the rules above, for one corpus (or none)."""

    def __init__(self, doc_of: Mapping[str, str], doc_ids: Collection[str] | None = None) -> None:
        self.doc_of = doc_of
        self.doc_ids = set(doc_of.values()) if doc_ids is None else set(doc_ids)

    def __call__(self, pid: str) -> str:
        known = self.doc_of.get(pid)
        if known is not None:
            return known
        if pid in self.doc_ids:
            return pid
        doc = doc_part(pid)
        return doc if doc in self.doc_ids else pid

    def is_passage(self, pid: str) -> bool:
        """Whether the corpus has this id as a passage or a document (rules 1 and 2)."""
        return pid in self.doc_of or pid in self.doc_ids
