"""The scan of a TREC file: blocks of lines split into fields and columns, problems, repeated pairs.

Blocks of about 1 MiB are split on worker threads (numba's kernel and numpy's loops release the GIL,
so two cores split two blocks at once): by `kernels.split_block` when numba is worth loading for the
file (`jit.wanted`), and by numpy for any block the kernel leaves (a line of the wrong shape, a score
that is not a number: numpy's code owns every message) or without numba. Each block is then merged in
file order on the calling thread, which numbers its lines, gives its topics their codes and turns its
problems into InputErrors.
"""

from __future__ import annotations

import mmap
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from goldeval import jit, memory
from goldeval.errors import InputError, InputErrors
from goldeval.fingerprint import file_digest
from goldeval.trecio.fields import field_hash, padded, split_fields, words, words_view
from goldeval.trecio.fields import text as _text
from goldeval.trecio.numbers import POW5_HI, POW5_LO, POW10, parse_floats, parse_ints
from goldeval.trecio.repeats import duplicates
from goldeval.trecio.table import ByteMarks, TrecTable

BLOCK_BYTES = 1 << 20
"""Bytes split at a time: small enough for a block's temporary arrays to stay in the CPU caches."""
MAX_PROBLEMS = 20
"""Problems listed before the scan stops: the rest of a wrong file would only repeat them."""
THREADS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
"""Worker threads splitting blocks (at most 4: past that, merging on one thread is the limit)."""
FORMATS = {
    "qrels": ("qrels file", 4, "`qid iter docno rel`", "a TREC qrels line is e.g. `301 0 FT911-3 1` "
              "(is this a run file or a topics file?)", "the qrels file has no judgments", "expected lines `qid 0 docno rel`"),
    "run": ("run file", 6, "`topic Q0 docno rank score tag`", "a TREC run line is e.g. `301 Q0 FT911-3 1 12.5 "
            "mysystem` (is this a qrels file given as the run?)", "the run file has no results",
            "expected lines `topic Q0 docno rank score tag`"),
}  # fmt: skip
_UTF8 = "TREC files are plain text; save it as UTF-8"
Problem = tuple[int, str, str, str]
"""(line within its block, message, value, hint): an InputError once the line is known."""


@dataclass
class _Block:
    """One block's columns, with line numbers and topics still local to the block."""

    base: int
    size: int
    lines: int
    problems: list[Problem] = field(default_factory=list)
    columns: dict[str, np.ndarray] = field(default_factory=dict)
    topic_names: list[str] = field(default_factory=list)
    topic_runs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    tag: str | None = None


def read_table(path: Path, kind: str, *, sha256: bool = False, marks: str | None = None) -> TrecTable:
    """Read one TREC file into a TrecTable; InputErrors lists every malformed line and repeated pair. With
    `sha256`, the table carries the file's `file_fingerprint`, taken of the bytes as the scan goes by them
    (no second read of the file); with `marks` (a character, or ""), the rows whose doc id holds a byte past
    ASCII or that character, found the same way (`ByteMarks`: `check_text` then needs no pass of its own)."""
    what, _, _, _, empty, example = FORMATS[kind]
    source = _map(path, what)
    release = _Releaser(source)
    digest, hashed = (file_digest() if sha256 else None), 0
    seen = ByteMarks(source, marks) if marks is not None else None
    codes: dict[str, int] = {}
    problems: list[InputError] = []
    columns = _Columns(len(source))
    tag, line0 = "", 1
    kernel = _kernel(len(source))  # compiled (or loaded) here, before the worker threads need it
    if kernel is None:
        jit.record(len(source))
    for block in _ordered(lambda b: _split(kind, kernel, *b), _blocks(source)):
        problems += [InputError(m, path=path, line=line0 + i, value=v, hint=h) for i, m, v, h in block.problems]
        if block.columns:
            names = np.fromiter((codes.setdefault(name, len(codes)) for name in block.topic_names), np.int32,
                                len(block.topic_names))  # fmt: skip
            block.columns["topic"] = np.repeat(names, block.topic_runs)
            block.columns["line"] += line0
            columns.append(block.columns, block.size)
        tag = block.tag if block.tag is not None else tag
        line0 += block.lines
        if digest is not None or seen is not None:  # the block's bytes, still in the CPU caches from its split
            end = min(block.base + block.size, len(source))
            if digest is not None:
                digest.update(source[hashed:end])
            if seen is not None:
                seen.see(hashed, end)
            hashed = end
        release.before(block.base)
        if len(problems) >= MAX_PROBLEMS:
            break
    if not columns.size and not problems:
        raise InputError(empty, path=path, hint=example)
    if columns.size:
        cols = columns.finish()
        if digest is not None:
            digest.update(source[hashed:])
        if seen is not None:
            seen.see(hashed, len(source))
        table = TrecTable(path, kind, source, list(codes), cols["topic"], cols["value"], cols["start"], cols["stop"],
                          cols["hash"], cols["line"], tag, sha256=digest.hexdigest() if digest is not None else None)  # fmt: skip
        problems += duplicates(table)
        if seen is not None:
            seen.rows(table)
    if problems:
        problems = sorted(problems, key=lambda p: p.line or 0)[:MAX_PROBLEMS]
        raise InputErrors(problems, summary=f"{len(problems)} problem(s) in {what} {path}")
    return table


class _Columns:
    """The table's columns, filled block by block in place: no list of pieces to concatenate (that
    would double the memory at the end and leave the heap fragmented)."""

    def __init__(self, file_bytes: int) -> None:
        self.file_bytes = file_bytes
        self.arrays: dict[str, np.ndarray] = {}
        self.size = 0

    def append(self, pieces: dict[str, np.ndarray], block_bytes: int) -> None:
        rows = len(pieces["value"])
        capacity = len(self.arrays["value"]) if self.arrays else 0
        if self.size + rows > capacity:  # first block, or rows shorter than the first ones: grow
            guess = int(self.file_bytes / max(block_bytes, 1) * rows * 1.05) + 1024
            self._resize(max(guess, self.size + rows, int(capacity * 1.5)), pieces)
        for key, piece in pieces.items():
            self.arrays[key][self.size : self.size + rows] = piece
        self.size += rows

    def _resize(self, capacity: int, pieces: dict[str, np.ndarray]) -> None:
        for key, piece in pieces.items():
            grown = memory.empty(capacity, piece.dtype)
            if key in self.arrays:
                grown[: self.size] = self.arrays[key][: self.size]
            self.arrays[key] = grown

    def finish(self) -> dict[str, np.ndarray]:
        """The filled part of each column (copied to size when much was left over)."""
        out = {}
        for key in list(self.arrays):
            array = self.arrays.pop(key)
            out[key] = array[: self.size].copy() if self.size < 0.8 * len(array) else array[: self.size]
        return out


def _ordered(work: Callable[[tuple[np.ndarray, int, int]], _Block],
             items: Iterable[tuple[np.ndarray, int, int]]) -> Iterator[_Block]:  # fmt: skip
    """work(item) for each item, in order, on THREADS threads with a few blocks in flight (bounded memory)."""
    if THREADS == 1:
        yield from map(work, items)
        return
    with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="goldeval-trec") as pool:
        pending: deque[Future[_Block]] = deque()
        try:
            for item in items:
                pending.append(pool.submit(work, item))
                if len(pending) > 2 * THREADS:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def _kernel(nbytes: int) -> Any:
    """The numba block splitter (`kernels.split_block`) for a file of nbytes, or None: without numba,
    or when numba is not loaded and the file is too small to repay loading it (`jit.wanted`)."""
    if not jit.wanted(nbytes):
        return None
    from goldeval.trecio import kernels

    return jit.compiled(kernels.split_block)


def _map(path: Path, what: str) -> np.ndarray:
    """The file's bytes, memory-mapped (read-only, paged in by the OS as the scan goes)."""
    if not path.exists():
        raise InputError(f"{what} not found", path=path, hint="check the path")
    if path.is_dir():
        raise InputError(f"{what} is a folder, not a file", path=path, hint="give the file's path")
    if not path.is_file():  # a FIFO would block the open below until a writer came (issue 9)
        raise InputError(f"{what} is not a regular file (a FIFO, socket or device)", path=path,
                         hint="save it to a file and give its path")
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            return np.zeros(0, dtype=np.uint8)
        return np.frombuffer(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ), dtype=np.uint8)


class _Releaser:
    """Drops the scanned pages of the map from this process's memory as the scan moves on (they stay
    in the OS page cache): a 500 MB run then costs its columns, not its bytes, in resident memory."""

    def __init__(self, source: np.ndarray) -> None:
        exporter = getattr(source.base, "obj", None)  # np.frombuffer(mmap) keeps a memoryview of the map
        self.map = exporter if isinstance(exporter, mmap.mmap) else None
        self.done = 0

    def before(self, offset: int) -> None:
        end = offset // mmap.PAGESIZE * mmap.PAGESIZE
        if self.map is not None and hasattr(mmap, "MADV_DONTNEED") and end - self.done >= 1 << 24:
            self.map.madvise(mmap.MADV_DONTNEED, self.done, end - self.done)
            self.done = end


def _blocks(source: np.ndarray) -> Iterator[tuple[np.ndarray, int, int]]:
    """(bytes, offset in the file, block size): each block is whole lines ending with a newline, and
    its bytes run at least 17 past it (word and number reads); a leading UTF-8 BOM is skipped."""
    base, size = (3 if source[:3].tobytes() == b"\xef\xbb\xbf" else 0), len(source)
    while base < size:
        cut = _last_newline(source, base, base + BLOCK_BYTES) + 1
        if 0 < cut < size - 24:
            yield source[base : cut + 24], base, cut - base
        else:  # the last lines: a copy ending with a newline, and room to read past it
            yield np.concatenate((source[base:], np.frombuffer(b"\n" + bytes(24), dtype=np.uint8))), base, size - base + 1
            cut = size
        base = cut


def _last_newline(source: np.ndarray, base: int, end: int) -> int:
    """Offset of the last newline in source[base:end], looking further when a line is longer; -1 if none."""
    end = min(end, len(source))
    while True:
        for lo in (max(base, end - 65536), base):
            found = np.flatnonzero(source[lo:end] == 10)
            if len(found):
                return lo + int(found[-1])
        if end >= len(source):
            return -1
        end = min(len(source), end + (end - base))


def _split(kind: str, kernel: Any, ext: np.ndarray, base: int, size: int) -> _Block:
    """Columns of one block (`ext[:size]`, readable to the end of `ext`), on a worker thread: by the
    numba kernel when there is one and it takes the block, else by numpy."""
    block = None if kernel is None else _split_compiled(kernel, kind, ext, base, size)
    return _split_numpy(kind, ext, base, size) if block is None else block


def _split_compiled(kernel: Any, kind: str, ext: np.ndarray, base: int, size: int) -> _Block | None:
    """`kernels.split_block`'s columns of one block; None where it left the block to numpy (a line it
    does not take, or a score that is not a number: numpy's code says which and where)."""
    run = kind == "run"
    status, lines, rows, topics, n_rest, tag_start, tag_stop, arrays = kernel(ext, words_view(ext), size, base, run, POW10,
                                                                                 POW5_HI, POW5_LO)
    value, grade, start, stop, hashes, line, topic_at, topic_start, topic_stop = arrays[:9]
    if status:
        return None
    block = _Block(base, size, lines)
    if not rows:
        return block
    if n_rest and not _finish_scores(ext, value, *(array[:n_rest] for array in arrays[9:])):
        return None
    if run:
        block.tag = _text(ext, tag_start, tag_stop)
    at = topic_at[:topics]
    _name_topics(block, ext, topic_start[:topics], topic_stop[:topics], line[at], np.diff(np.append(at, rows)))
    block.columns = {"value": (value if run else grade)[:rows], "start": start[:rows],
                     "stop": stop[:rows], "hash": hashes[:rows], "line": line[:rows]}  # fmt: skip
    return block


def _finish_scores(ext: np.ndarray, value: np.ndarray, rows: np.ndarray, start: np.ndarray, stop: np.ndarray) -> bool:
    """The scores the kernel left, none of them a decimal it reads (inf, over 19 digits...), by numpy's
    `parse_floats`; False when one is not a number (numpy's path then says which and where)."""
    parsed, bad = parse_floats(ext, start, stop)
    value[rows] = parsed
    return not bad.any()


def _split_numpy(kind: str, ext: np.ndarray, base: int, size: int) -> _Block:
    """Columns of one block by numpy, and every problem in it (field counts, numbers, topic ids)."""
    _, n_fields, layout, hint, _, _ = FORMATS[kind]
    a = ext[:size]
    start, stop, count, first = split_fields(a)
    has = count > 0
    lead = np.zeros(len(count), dtype=bool)
    lead[has] = a[start[first[has]]] == ord("#")
    ok = has & ~lead & ((count == n_fields) if kind == "qrels" else (count >= n_fields))
    block = _Block(base, size, len(count))
    for i in np.flatnonzero(has & ~lead & ~ok)[:MAX_PROBLEMS].tolist():
        text = _text(a, start[first[i]], stop[first[i] + count[i] - 1])
        block.problems.append((i, f"expected {n_fields} fields {layout}, found {count[i]}", text, hint))
    rows = np.flatnonzero(ok)
    if not len(rows):
        return block
    at = first[rows]
    value_at = at + (3 if kind == "qrels" else 4)
    value, bad = (parse_ints if kind == "qrels" else parse_floats)(ext, start[value_at], stop[value_at])
    for i in np.flatnonzero(bad)[:MAX_PROBLEMS].tolist():
        text = _text(a, start[value_at[i]], stop[value_at[i]])
        block.problems.append((int(rows[i]),) + ((f"relevance `{text}` is not an integer", text,
                              "the 4th field is the relevance grade, e.g. 0, 1, 2") if kind == "qrels" else
                              (f"score `{text}` is not a number", text, "the 5th field is the score, e.g. 12.5")))  # fmt: skip
    if kind == "run":
        block.tag = _text(a, start[first[rows[-1]] + 5], stop[first[rows[-1]] + 5])
    if bad.any():
        at, value, rows = at[~bad], value[~bad], rows[~bad]
    if len(at):
        _topics(block, ext, start[at], stop[at], rows)
        block.columns = {"value": value, "start": start[at + 2] + base, "stop": stop[at + 2] + base,
                         "hash": field_hash(ext, start[at + 2], stop[at + 2]), "line": rows.astype(np.int32)}  # fmt: skip
    return block


def _topics(block: _Block, ext: np.ndarray, start: np.ndarray, stop: np.ndarray, rows: np.ndarray) -> None:
    """The topic at each row where it changes, decoded to str, and how many rows it runs for."""
    change = np.ones(len(start), dtype=bool)
    length = stop - start
    change[1:] = length[1:] != length[:-1]
    for word in words(ext, start, stop):
        change[1:] |= word[1:] != word[:-1]
    at = np.flatnonzero(change)
    _name_topics(block, ext, start[at], stop[at], rows[at], np.diff(np.append(at, len(start))))


def _name_topics(block: _Block, ext: np.ndarray, start: np.ndarray, stop: np.ndarray, rows: np.ndarray,
                 runs: np.ndarray) -> None:  # fmt: skip
    """Each topic id ext[start:stop] decoded to str (at once, joined by newlines), and its run of rows."""
    length = stop - start
    ids = padded(ext, start, stop, int(length.max()) + 1)
    ids[np.arange(len(start)), length] = 10
    raw = ids[np.arange(ids.shape[1]) <= length[:, None]].tobytes()
    try:
        names = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        j = int(np.searchsorted(np.cumsum(length + 1), exc.start, side="right"))
        block.problems.append((int(rows[j]), "topic id is not UTF-8 text", _text(ext, start[j], stop[j]), _UTF8))
        names = raw.decode("utf-8", "replace").split("\n")
    block.topic_names = names[:-1]
    block.topic_runs = runs
