"""`TrecTable`: one TREC qrels or run file as columns."""

from __future__ import annotations

import mmap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from goldeval.arrays import distinct_values
from goldeval.errors import InputError
from goldeval.trecio.fields import field_hash, padded, words
from goldeval.types import DocId, QuestionId

SLICE = 1 << 26
"""Bytes of a file scanned at once (`rows_holding`, `check_text`)."""


@dataclass
class TrecTable:
    """A TREC qrels or run file as columns, one row per judgment or result line, in file order.

    `topic` indexes `topics` (distinct topic ids in order of first appearance). `value` is the score
    (run, float64) or the judgment (qrels, int64). Row i's doc id is `source[doc_start[i]:doc_stop[i]]`
    (the file's bytes, memory-mapped); `doc_hash` is equal for equal ids. `line`: 1-based line numbers.
    """

    path: Path
    kind: str
    source: np.ndarray
    topics: list[QuestionId]
    topic: np.ndarray
    value: np.ndarray
    doc_start: np.ndarray
    doc_stop: np.ndarray
    doc_hash: np.ndarray
    line: np.ndarray | None
    """1-based line numbers; None once `forget_lines` let them go (`line_at` counts them then)."""
    tag: str = ""
    strings: Sequence[DocId] | None = None
    """The ids as str when the table was made of them (`of_ids`): read from there, never decoded."""
    sha256: str | None = None
    """The file's `file_fingerprint` (what `sha256sum` prints), taken as it was read, when the reader was asked."""
    held: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    """Character -> the rows whose doc id holds it, as `check_text` found them in its pass (`rows_holding`)."""
    past_ascii: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The rows whose doc id holds a byte past ASCII, when the reader's own pass found them (`ByteMarks`)."""

    def __len__(self) -> int:
        return len(self.topic)

    @classmethod
    def of_ids(cls, kind: str, topics: list[QuestionId], topic: np.ndarray, ids: Sequence[DocId], value: np.ndarray,
               path: str | Path = "<memory>") -> TrecTable:  # fmt: skip
        """A table of ids held in memory (a Run's results, a golden set's judgments), hashed as a file's doc ids
        are, so the two join by the same hashes and bytes (`metrics.trec_judge`). An id that is not valid text
        (a lone surrogate) keeps its code points as bytes: it equals no file's id, as no file can hold it."""
        source, start, stop = _id_bytes(ids)
        return cls(Path(path), kind, source, topics, np.asarray(topic, dtype=np.int32), np.asarray(value), start, stop,
                   field_hash(source, start, stop), None, strings=ids)

    def line_at(self, row: int) -> int:
        """The 1-based line of `row` in its file: one more than the newlines before its doc id."""
        if self.line is not None:
            return int(self.line[row])
        end = int(self.doc_start[row])
        return 1 + sum(int(np.count_nonzero(self.source[a : min(a + SLICE, end)] == 10)) for a in range(0, end, SLICE))

    def forget_lines(self) -> None:
        """Let the line numbers go (8 bytes a row): a run kept through scoring needs them only to name the line
        of a bad id, which `line_at` counts again."""
        self.line = None

    def doc_bytes(self, rows: np.ndarray, width: int | None = None) -> np.ndarray:
        """The doc ids of `rows` as a zero-padded uint8 matrix (zero sorts first, as in strcmp)."""
        start, stop = self.doc_start[rows], self.doc_stop[rows]
        return padded(self.source, start, stop, int((stop - start).max(initial=0)) if width is None else width)

    def doc_words(self, rows: np.ndarray) -> Iterator[np.ndarray]:
        """The doc ids of `rows` as little-endian 64-bit words, zero past each id's end."""
        return words(self.source, self.doc_start[rows], self.doc_stop[rows])

    def same_docs(self, rows: np.ndarray, other: TrecTable, other_rows: np.ndarray) -> np.ndarray:
        """Whether the doc id of each of `rows` equals that of `other_rows` in `other`, byte for byte."""
        length = self.doc_stop[rows] - self.doc_start[rows]
        same = length == other.doc_stop[other_rows] - other.doc_start[other_rows]
        for mine, theirs in zip(self.doc_words(rows), other.doc_words(other_rows), strict=False):
            same &= mine == theirs
        return same

    def rows_holding(self, char: str) -> np.ndarray:
        """The rows whose doc id holds the ASCII character `char` (e.g. `#`, which chunk ids have), in row order
        (remembered from `check_text` when it was asked for it)."""
        if char in self.held:
            return self.held[char]
        return self._rows_of(self._pass(char, high=False).found[1])

    def check_text(self, *, remember: str = "") -> None:
        """InputError naming the line of the first doc id that is not UTF-8: only rows holding a byte past
        ASCII are decoded (a file of ASCII ids is checked in one pass over its bytes, or none when the reader
        looked as it read: `ByteMarks`). The rows holding the character `remember` are found in the same pass
        and kept for `rows_holding`."""
        known = self.past_ascii is not None and (not remember or remember in self.held)
        high = self.past_ascii if known else self._pass(remember).rows(self)
        if high is not None and len(high):
            self.doc_ids(high)

    def _pass(self, holding: str, *, high: bool = True) -> ByteMarks:
        """One pass over the file, a slice at a time (bounded temporaries), each slice's pages let go after."""
        marks = ByteMarks(self.source, holding, high=high)
        for begin in range(0, len(self.source), SLICE):
            marks.see(begin, begin + SLICE)
            self.drop_pages(begin, begin + SLICE)
        return marks

    def _rows_of(self, found: list[np.ndarray]) -> np.ndarray:
        """The rows whose doc id holds one of the byte offsets `found`, in row order."""
        at = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        if not len(at):
            return at
        order = None if bool(np.all(self.doc_start[1:] >= self.doc_start[:-1])) else np.argsort(self.doc_start)
        starts = self.doc_start if order is None else self.doc_start[order]
        slot = np.searchsorted(starts, at, side="right") - 1
        inside = slot >= 0
        slot, at = slot[inside], at[inside]
        rows = slot if order is None else order[slot]
        return distinct_values(rows[at < self.doc_stop[rows]])

    def drop_pages(self, begin: int = 0, end: int | None = None) -> None:
        """Let the OS take back the file's pages read so far (they stay in its page cache), or those of bytes
        `begin` to `end`: reading the doc ids of rows spread over a large file, or scanning it, would otherwise
        keep all of it resident."""
        exporter = getattr(self.source.base, "obj", None)
        if isinstance(exporter, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            start = begin // mmap.PAGESIZE * mmap.PAGESIZE
            stop = len(exporter) if end is None else min(end, len(exporter))
            if stop > start:
                exporter.madvise(mmap.MADV_DONTNEED, start, stop - start)

    def doc_ids(self, which: np.ndarray | None = None) -> list[DocId]:
        """Every row's doc id as str (UTF-8), or those of the rows `which`; an id that is not UTF-8 is an
        InputError naming its line."""
        which = np.arange(len(self)) if which is None else which
        if self.strings is not None:
            return [self.strings[i] for i in which.tolist()]
        out: list[str] = []
        step = 1 << 16
        for begin in range(0, len(which), step):
            rows = which[begin : begin + step]
            length = self.doc_stop[rows] - self.doc_start[rows]
            ids = self.doc_bytes(rows, int(length.max()) + 1)
            self.drop_pages(int(self.doc_start[rows].min()), int(self.doc_stop[rows].max()))  # rows spread over a file
            ids[np.arange(len(rows)), length] = 10
            try:
                out += ids[np.arange(ids.shape[1]) <= length[:, None]].tobytes().decode("utf-8").split("\n")[:-1]
            except UnicodeDecodeError as exc:
                row = int(rows[np.searchsorted(np.cumsum(length + 1), exc.start, side="right")])
                raise InputError(f"{self.kind} file is not UTF-8 text (in the doc id)", path=self.path,
                                 line=self.line_at(row), hint="TREC files are plain text; save it as UTF-8") from None
        return out

    def doc_id_objects(self) -> np.ndarray:
        """Every row's doc id as str in an object array, one str per distinct id: a run holds each
        document about once per topic that retrieved it, so 100k topics x 100 results decode and keep
        about a tenth of the strings. Rows are grouped by their hash, and each row is checked byte for
        byte against its group's first (a hash is only a shortcut); should two ids ever share a hash,
        every row is decoded on its own instead."""
        if self.strings is not None:
            return np.array(self.strings, dtype=object)
        _, first, inverse = np.unique(self.doc_hash, return_index=True, return_inverse=True)
        head = first[inverse.ravel()]
        for begin in range(0, len(self), 1 << 20):  # in slices: bounded temporaries
            rows = np.arange(begin, min(begin + (1 << 20), len(self)))
            other = rows != head[rows]
            if not self.same_docs(rows[other], self, head[rows][other]).all():  # pragma: no cover - a collision
                return np.array(self.doc_ids(), dtype=object)
        unique = np.empty(len(first), dtype=object)
        unique[:] = self.doc_ids(first)
        return unique[inverse.ravel()]

    def to_dict(self) -> dict[QuestionId, dict[DocId, float]] | dict[QuestionId, dict[DocId, int]]:
        """{topic: {doc: value}}, topics and docs in file order."""
        docs, values = self.doc_ids(), self.value.tolist()
        out: dict[str, dict[str, object]] = {}
        bounds = np.concatenate(([0], np.flatnonzero(self.topic[1:] != self.topic[:-1]) + 1, [len(self)]))
        codes = self.topic[bounds[:-1]].tolist() if len(self) else []
        for code, begin, end in zip(codes, bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            out.setdefault(self.topics[code], {}).update(zip(docs[begin:end], values[begin:end], strict=True))
        return out  # type: ignore[return-value]


def _id_bytes(ids: Sequence[DocId]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ids' bytes one after the other, and where each starts and stops (see `TrecTable.of_ids`)."""
    text = "".join(ids)
    if text.isascii():
        source = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        length = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    else:
        encoded = [i.encode("utf-8", "surrogatepass") for i in ids]
        source = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        length = np.fromiter(map(len, encoded), dtype=np.int64, count=len(ids))
    stop = np.cumsum(length)
    return source, stop - length, stop


def id_hashes(ids: Sequence[DocId]) -> np.ndarray:
    """The doc id hash (`TrecTable.doc_hash`) of each of `ids`."""
    return field_hash(*_id_bytes(ids))


class ByteMarks:
    """The byte offsets of a file's bytes past ASCII and of one ASCII character, gathered slice by slice (by
    `TrecTable.check_text`'s pass, or by the reader's as it goes by each block: `scan.read_table`), turned
    into the rows whose doc id holds them (`rows`): a table's `past_ascii` and `held`. C's memchr says first
    whether a slice holds the character at all, numpy's max whether it holds a byte past ASCII."""

    def __init__(self, source: np.ndarray, holding: str = "", *, high: bool = True) -> None:
        holder = getattr(source.base, "obj", source.base)
        self.source, self.high, self.holding = source, high, holding
        self.search = holder.find if isinstance(holder, (bytes, mmap.mmap)) else None
        self.byte = holding.encode("ascii")
        self.found: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])

    def see(self, begin: int, end: int) -> None:
        block = self.source[begin:end]
        if self.high and int(block.max(initial=0)) >= 0x80:
            self.found[0].append(np.flatnonzero(block >= 0x80) + begin)
        if self.byte and (self.search is None or self.search(self.byte, begin, end) >= 0):
            self.found[1].append(np.flatnonzero(block == self.byte[0]) + begin)

    def rows(self, table: TrecTable) -> np.ndarray:
        """The rows holding a byte past ASCII; those holding the character are kept in `table.held`."""
        if self.holding:
            table.held[self.holding] = table._rows_of(self.found[1])
        table.past_ascii = table._rows_of(self.found[0])
        return table.past_ascii
