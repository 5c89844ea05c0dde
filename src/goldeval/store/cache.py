"""The embedding cache and the rerank score cache: rows keyed by a model's identity and by a content hash.

Layout, under `<workspace>/embeddings/<model-slug>-<hash of the model key>/` (vectors, float32) and
`<workspace>/rerank-scores/<reranker-slug>-<hash of the reranker key>/` (scores, float64):

    model.json          what the key stands for (model name, weights, prefixes; a reranker's URL), for people
    <entry>.gsemb       one write-once entry: a header line, the hashes, the rows

An entry's file name is the hash of the model key and of the hashes it holds, so two runs that compute
the same rows write the same name with the same content (`os.replace` is atomic: whoever wins, the file
is whole). A header records the count, the row width (`dim`), the row type where it is not float32 (a
score entry's `"dtype": "<f8"`) and a SHA-256 of the payload; an entry whose size or checksum does not
match (a truncated or damaged file) is deleted, said in a warning naming it (`goldeval.store.kept`, the
rule of every kept file), and its rows are computed again.

Embeddings are keyed by each text, hashed exactly as the model sees it (prefix included), so a query and a
passage with the same text share a vector only if the model would give them the same one. Rerank scores
are keyed by each (query text, passage text) pair (`pair_hash`), stored as float64, the type every
reranker's score is handed on in, so a score read back is the score computed, bit for bit. Two models
never share a folder; two corpora share rows only for identical texts, which is correct.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

from goldeval.fingerprint import Fingerprinter, bytes_fingerprint, text_fingerprint
from goldeval.store.atomic import clean_stale_temps, write_atomic
from goldeval.store.kept import Damaged, damaged
from goldeval.store.workspace import Workspace, file_lock
from goldeval.textsafe import warn

T = TypeVar("T")
MAGIC = b"GSEMB1 "
HASH_BYTES = 16
MAX_ENTRIES = 32
"""Past this many entries in a model's folder, they are merged into one (`EntryCache.compact`)."""
VECTORS = "<f4"
"""The row type of an embedding entry (a header without `dtype` holds these)."""
SCORES = "<f8"
"""The row type of a rerank score entry: float64, what a score is handed on in, so none is rounded."""

Encode = Callable[[list[str]], np.ndarray]
"""Embeds a list of texts into a float32 matrix, one row per text."""
Order = Callable[[list[str]], list[int]]
"""The positions of texts in the order an encoder batches them (bare texts in, a permutation out)."""
Items = list[tuple[str, list[str]]]
"""(query, passage texts) per question: what a reranker scores."""
Score = Callable[[Items], list[list[float]]]
"""Scores each (query, texts): one score per text, in order."""


def text_hash(text: str) -> bytes:
    """The cache key of one text: the first 16 bytes of SHA-256 of its UTF-8 bytes."""
    return bytes.fromhex(text_fingerprint(text, length=2 * HASH_BYTES))


def pair_hash(query: str, text: str) -> bytes:
    """The cache key of one (query, passage) pair: 16 bytes of `Fingerprinter`'s record of the two texts."""
    return bytes.fromhex(Fingerprinter().record(query, text).hexdigest(length=2 * HASH_BYTES))


@dataclass
class CacheStats:
    """What the last `get_or_compute` (or `get_or_score`) did, for tests and progress lines."""

    hits: int = 0
    computed: int = 0
    corrupt_entries: list[str] = field(default_factory=list)


class EntryCache:
    """Rows of one model, found by a 16-byte hash, stored in write-once entries (the machinery both caches
    share: reading and checking entries, writing one per chunk, compacting)."""

    dtype = VECTORS
    what = "embedding cache entry"
    redo = "embedding its texts again"
    noun = "vectors"
    keeps_nonfinite = True
    """Whether a row holding NaN or infinity is stored (embeddings: as they always were; scores: never)."""

    def __init__(self, folder: Path, model_key: str, *, about: dict[str, object] | None = None) -> None:
        self.folder = folder
        clean_stale_temps(self.folder)  # an entry whose writer was killed mid-write leaves a .tmp (issue 9)
        self.model_key = model_key
        self.stats = CacheStats()
        self._folder_ready = False
        self._about = about or {}
        # Entries are write-once, so one read per process is enough (passages, then queries).
        self._memo: dict[str, tuple[list[bytes], np.ndarray]] = {}

    @staticmethod
    def folder_name(slug: str, model_key: str) -> str:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in slug)[:48]
        return f"{safe}-{text_fingerprint(model_key, length=16)}"

    def _fill(self, order: Sequence[tuple[list[bytes], T]], compute: Callable[[list[T]], np.ndarray],
              known: dict[bytes, np.ndarray], step: int) -> None:
        """Compute the rows of `order` (each: the hashes of its rows, what computes them), `step` at a time,
        storing each chunk as soon as it is done (issue 19: a killed run kept nothing), into `known`."""
        for start in range(0, len(order), max(1, step)):
            part = order[start : start + max(1, step)]
            hashes = [h for group, _ in part for h in group]
            rows = np.asarray(compute([item for _, item in part]), dtype=self.dtype)
            if rows.shape[0] != len(hashes):
                raise ValueError(f"{rows.shape[0]} {self.noun} computed for {len(hashes)} asked")
            keep = [i for i in range(len(hashes)) if self.keeps_nonfinite or np.isfinite(rows[i]).all()]
            if keep:
                self._write([hashes[i] for i in keep], rows[keep])
            known.update(zip(hashes, rows, strict=True))
            self.stats.computed += len(hashes)
        if len(self.entries()) > MAX_ENTRIES:
            self.compact()

    # --- entries ---------------------------------------------------------------------------------

    def entries(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(self.folder.glob("*.gsemb"))

    def _load(self, wanted: set[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        for path in self.entries():
            entry = self._memo.get(path.name)
            if entry is None:
                try:
                    entry = check_entry(path, self.dtype)
                except FileNotFoundError:
                    continue  # merged into a larger entry by another run's compaction meanwhile
                except (OSError, ValueError) as exc:
                    self.stats.corrupt_entries.append(path.name)
                    if isinstance(exc, Damaged):
                        damaged(f"{self.what} {path}", self.redo)
                    else:
                        warn(f"{self.what} {path} is unreadable ({exc}); {self.redo}")
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                    continue
            self._memo[path.name] = entry
            hashes, rows = entry
            for i, h in enumerate(hashes):
                if h in wanted:
                    found[h] = rows[i]
        return found

    def _write(self, hashes: list[bytes], rows: np.ndarray) -> None:
        if not self._folder_ready:
            self.folder.mkdir(parents=True, exist_ok=True)
            about = {"model_key": self.model_key, **self._about}
            write_atomic(self.folder / "model.json", json.dumps(about, indent=2, default=str).encode())
            self._folder_ready = True
        hash_blob = b"".join(hashes)
        name = Fingerprinter().record(self.model_key, hash_blob).hexdigest(length=32) + ".gsemb"
        write_entry(self.folder / name, hash_blob, rows, self.dtype)
        self._memo[name] = (list(hashes), rows)

    def compact(self) -> None:
        """Merge every entry into one (under a lock), then delete the merged ones.

        The merged entry is written before any old one is removed, so a concurrent reader finds each
        row in one file or the other; at worst it computes a few rows again.
        """
        with file_lock(self.folder / ".compact.lock"):
            paths = self.entries()
            if len(paths) <= 1:
                return
            merged: dict[bytes, np.ndarray] = {}
            for path in paths:
                entry = self._memo.get(path.name) or read_entry(path, self.dtype)
                if entry is not None:
                    merged.update(zip(*entry, strict=True))
            if merged:
                self._write(list(merged), np.stack(list(merged.values())))
            keep = Fingerprinter().record(self.model_key, b"".join(merged)).hexdigest(length=32) + ".gsemb"
            for path in paths:
                if path.name != keep:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                    self._memo.pop(path.name, None)


class EmbeddingCache(EntryCache):
    """Vectors of one model, found by text hash, stored in write-once entries."""

    def __init__(self, workspace: Workspace, model_key: str, *, slug: str = "model", about: dict[str, object] | None = None) -> None:
        super().__init__(workspace.embeddings / self.folder_name(slug, model_key), model_key, about=about)

    def get_or_compute(self, texts: Sequence[str], encode: Encode, *, prefix: str = "", chunk: int | None = None,
                       order: Order | None = None) -> np.ndarray:
        """Vectors for `texts`: cached ones read, the rest embedded by `encode` (bare texts), `chunk` at a time,
        each chunk stored as soon as it is embedded (issue 19: a run killed after 752 of 8,457 windows kept
        nothing), so an interrupted run keeps what it computed, or paid an API for.

        `prefix` is what the model puts before each text (e5's `query: `); it is part of the key. The missing
        texts are cut into chunks in the order the encoder batches them (`order`: the encoder's own rule,
        `goldeval.retrievers.encoders.base.cached_encode`; input order without it), so with `chunk` a multiple
        of its batch size every batch holds the same texts as one call over all of them would: the same
        vectors, byte for byte.
        """
        self.stats = CacheStats()
        hashes = [text_hash(prefix + t) for t in texts]
        known = self._load(set(hashes))
        missing: dict[bytes, int] = {}
        for i, h in enumerate(hashes):
            if h not in known and h not in missing:
                missing[h] = i
        if missing:
            pending = list(missing.items())
            if order is not None:
                pending = [pending[p] for p in order([texts[i] for _, i in pending])]
            self._fill([([h], texts[i]) for h, i in pending], encode, known, chunk or len(pending))
        self.stats.hits = len(texts) - len(missing)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)

    def missing(self, texts: Sequence[str], *, prefix: str = "") -> list[str]:
        """The texts (each once, in order) that `get_or_compute` would embed now: what `--dry-run` counts."""
        hashes = [text_hash(prefix + t) for t in texts]
        known = self._load(set(hashes))
        seen: set[bytes] = set()
        out = []
        for text, h in zip(texts, hashes, strict=True):
            if h not in known and h not in seen:
                seen.add(h)
                out.append(text)
        return out


class ScoreCache(EntryCache):
    """A reranker's scores, found by (query, passage) pair, stored in write-once entries a chunk of questions
    at a time: a rerank API or a cross-encoder re-run scores only the pairs it has not scored before."""

    dtype = SCORES
    what = "rerank score cache entry"
    redo = "scoring its pairs again"
    noun = "scores"
    keeps_nonfinite = False  # a NaN fails its question (`RerankRetriever`); the next run asks again

    def __init__(self, workspace: Workspace, reranker_key: str, *, slug: str = "reranker",
                 about: dict[str, object] | None = None) -> None:
        super().__init__(workspace.folder("rerank-scores") / self.folder_name(slug, reranker_key), reranker_key,
                         about=about)

    def get_or_score(self, items: Sequence[tuple[str, Sequence[str]]], score: Score, *, chunk: int) -> list[list[float]]:
        """One score per text of each (query, texts): cached pairs read, the rest scored by `score`, `chunk`
        questions a call, each call's scores stored as soon as it returns. A question sends only its pairs
        not cached (and each pair once in a run); a score that is not finite is handed on, never kept."""
        self.stats = CacheStats()
        hashes = [[pair_hash(query, text) for text in texts] for query, texts in items]
        known = self._load({h for row in hashes for h in row})
        order: list[tuple[list[bytes], tuple[str, list[str]]]] = []
        asked: set[bytes] = set()
        for (query, texts), row in zip(items, hashes, strict=True):
            fresh = [(h, t) for h, t in zip(row, texts, strict=True) if h not in known and h not in asked]
            asked.update(h for h, _ in fresh)
            if fresh:
                order.append(([h for h, _ in fresh], (query, [t for _, t in fresh])))

        def flat(part: Items) -> np.ndarray:
            scores = score(part)
            if [len(s) for s in scores] != [len(texts) for _, texts in part]:
                raise ValueError(f"{sum(map(len, scores))} scores for {sum(len(t) for _, t in part)} texts")
            return np.asarray([[float(s)] for row in scores for s in row], dtype=np.float64).reshape(-1, 1)

        if order:
            self._fill(order, flat, known, chunk)
        self.stats.hits = sum(len(row) for row in hashes) - len(asked)
        return [[float(known[h][0]) for h in row] for row in hashes]


def write_entry(path: Path, hash_blob: bytes, rows: np.ndarray, dtype: str = VECTORS) -> None:
    """Write one entry: `GSEMB1 {json header}\\n`, then the hashes, then the rows (float32, or `dtype`)."""
    row_blob = np.ascontiguousarray(rows, dtype=dtype).tobytes()
    digest = bytes_fingerprint(hash_blob + row_blob)
    header: dict[str, object] = {"count": len(hash_blob) // HASH_BYTES, "dim": int(rows.shape[1]), "sha256": digest}
    if dtype != VECTORS:  # an embedding entry's header stays as it always was
        header["dtype"] = dtype
    write_atomic(path, [MAGIC + json.dumps(header).encode() + b"\n", hash_blob, row_blob])


def read_entry(path: Path, dtype: str = VECTORS) -> tuple[list[bytes], np.ndarray] | None:
    """An entry's hashes and rows, or None when it is truncated, damaged or unreadable."""
    try:
        return check_entry(path, dtype)
    except (OSError, ValueError):
        return None


def check_entry(path: Path, dtype: str = VECTORS) -> tuple[list[bytes], np.ndarray]:
    """An entry's hashes and rows; `store.kept.Damaged` when its payload fails the checksum its header
    records, ValueError when it is cut short, not an entry or rows of another type, OSError when it cannot
    be read."""
    data = path.read_bytes()
    end = data.find(b"\n")
    if not data.startswith(MAGIC) or end < 0:
        raise ValueError("not an entry")
    try:
        header = json.loads(data[len(MAGIC) : end])
        count, dim, digest = int(header["count"]), int(header["dim"]), str(header["sha256"])
        kind = str(header.get("dtype", VECTORS))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ValueError("its header does not read") from None
    if kind != dtype:
        raise ValueError(f"it holds {kind} rows, not {dtype}")
    width = np.dtype(dtype).itemsize
    payload = memoryview(data)[end + 1 :]
    if len(payload) != count * HASH_BYTES + count * dim * width:
        raise ValueError(f"{len(payload)} bytes where its header says {count * HASH_BYTES + count * dim * width}")
    if bytes_fingerprint(payload) != digest:
        raise Damaged("checksum mismatch")
    hash_blob = bytes(payload[: count * HASH_BYTES])
    rows = np.frombuffer(payload[count * HASH_BYTES :], dtype=dtype).reshape(count, dim)
    hashes = [hash_blob[i : i + HASH_BYTES] for i in range(0, len(hash_blob), HASH_BYTES)]
    return hashes, rows
