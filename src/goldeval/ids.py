"""Which document is this id: the one rule for passage ids, used by evaluation, validation and stats.

A passage id is a document id, or a chunk id `DOC#N` (N the 0-based chunk position). In order:
1. an id the corpus knows as a passage belongs to that passage's document;
2. an id that is a known document id is that document (a document id may itself contain `#`);
3. `DOC#N` (N digits) whose `DOC` is a known document id belongs to `DOC`; `DOC#x` is not a chunk id;
4. `ID#resultN` (N digits), a later result of a retriever that returned `ID` already (an adapter's
   chunk whose metadata names only its document, `repeat_id`), belongs where `ID` belongs;
5. anything else stays itself, an id the corpus does not know.
Known document ids are the corpus's; without a corpus, the ids the golden set judges (so a search
function's `a.md#3` counts for an expected `a.md`, and `https://x/a#install` stays itself).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from functools import cached_property

CHUNK_SEP = "#"
REPEAT_MARK = "#result"
"""`ID#resultN`: the result at position N (1-based) of a list in which `ID` came earlier (rule 4)."""


def split_chunk_id(pid: str) -> tuple[str, str | None]:
    """(`doc`, `N`) for `doc#N` with N a chunk number; (`pid`, None) otherwise (`doc#intro` is an id of its
    own, or a typo the golden-set checks name, never chunk `intro` of `doc`)."""
    doc, sep, position = pid.rpartition(CHUNK_SEP)
    return (doc, position) if sep and doc and position.isdigit() else (pid, None)


def repeat_id(pid: str, position: int) -> str:
    """The id of the result at `position` (1-based) of a list that holds `pid` earlier: a later chunk of a
    document whose chunks a retriever names by the document alone. Unique within the list, never a chunk
    id of the corpus (those end in `#N`), and it belongs where `pid` belongs (rule 4)."""
    return f"{pid}{REPEAT_MARK}{position}"


def repeated_of(pid: str) -> str | None:
    """`ID` for a `repeat_id` `ID#resultN`; None for any other id."""
    base, mark, position = pid.rpartition(REPEAT_MARK)
    return base if mark and base and position.isdigit() else None


def doc_part(pid: str) -> str:
    """The document part of a chunk id (`a.md#3` -> `a.md`, `a.md#result4` -> `a.md`); the id itself
    without a separator."""
    base = repeated_of(pid)
    return doc_part(base) if base is not None else split_chunk_id(pid)[0]


class DocumentOf:
    """Resolves any id to its document under the rules above, for one corpus (or none)."""

    def __init__(self, doc_of: Mapping[str, str],
                 doc_ids: Collection[str] | Callable[[], Collection[str]] | None = None) -> None:  # fmt: skip
        """`doc_ids`: the known document ids (a corpus's documents by default), or a function giving them, called
        the first time an id holding a `#` asks (a golden set's judged ids: half a million at 100k questions)."""
        self.doc_of = doc_of
        self._doc_ids = doc_ids

    @cached_property
    def doc_ids(self) -> set[str]:
        known = self._doc_ids() if callable(self._doc_ids) else self._doc_ids
        return set(self.doc_of.values()) if known is None else set(known)

    def __call__(self, pid: str) -> str:
        known = self.doc_of.get(pid)
        if known is not None:
            return known
        if CHUNK_SEP not in pid or pid in self.doc_ids:  # rules 3 and 4 need a `#`: most ids have none
            return pid
        base = repeated_of(pid)
        if base is not None:
            return self(base)
        doc = doc_part(pid)
        return doc if doc in self.doc_ids else pid

    def many(self, pids: list[str]) -> list[str]:
        """`[self(p) for p in pids]`; without a corpus's passages and without a `#` in any id, every id is
        its own document (rules 2 and 5), found in one C-level pass (issue 23: 1M calls cost a second)."""
        if not self.doc_of and CHUNK_SEP not in "".join(pids):
            return list(pids)
        return [self(p) for p in pids]

    def keeps(self, pids: Iterable[str]) -> bool:
        """Whether every id of `pids` is surely its own document, checked in C-level passes: no `#` (rules 3
        and 4 need one) and no corpus passage of another document (rule 1). False may be wrong (an id with a
        `#` can still be its own document), True never is; a caller then asks `self` of each id."""
        pids = pids if isinstance(pids, list) else list(pids)
        if CHUNK_SEP in "".join(pids):
            return False
        return not self.doc_of or all(map(str.__eq__, map(self.doc_of.get, pids, pids), pids))

    @cached_property
    def moved_plain(self) -> frozenset[str]:
        """Corpus passage ids without a `#` that belong to another document (rule 1): the ids besides those
        holding a `#` that may not be their own document (`keeps`). Empty for goldeval's own chunking."""
        return frozenset(p for p, d in self.doc_of.items() if p != d and CHUNK_SEP not in p)

    def is_passage(self, pid: str) -> bool:
        """Whether the corpus has this id as a passage or a document (rules 1 and 2)."""
        return pid in self.doc_of or pid in self.doc_ids
