"""The embedding cache: vectors keyed by model and by the content hash of each text.

Layout, under `<workspace>/embeddings/<model-slug>-<hash of the model key>/`:

    model.json          what the key stands for (model name, weights, prefixes), for people
    <entry>.gsemb       one write-once entry: a header line, the text hashes, the vectors

An entry's file name is the hash of the model key and of the text hashes it holds, so two runs
that embed the same texts write the same name with the same content (`os.replace` is atomic:
whoever wins, the file is whole). A header records the count, the dimension and a SHA-256 of the
payload; an entry whose size or checksum does not match (a truncated or damaged file) is
deleted, said in a warning naming it (`goldeval.store.kept`, the rule of every kept file), and its texts
are embedded again. Texts are hashed exactly as the model sees them (prefix
included), so a query and a passage with the same text share a vector only if the model would
give them the same one. Two models never share a folder; two corpora share vectors only for
identical texts, which is correct.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from goldeval.fingerprint import Fingerprinter, bytes_fingerprint, text_fingerprint
from goldeval.store.atomic import clean_stale_temps, write_atomic
from goldeval.store.kept import Damaged, damaged
from goldeval.store.workspace import Workspace, file_lock
from goldeval.textsafe import warn

MAGIC = b"GSEMB1 "
HASH_BYTES = 16
MAX_ENTRIES = 32
"""Past this many entries in a model's folder, they are merged into one (`EmbeddingCache.compact`)."""

Encode = Callable[[list[str]], np.ndarray]
"""Embeds a list of texts into a float32 matrix, one row per text."""
Order = Callable[[list[str]], list[int]]
"""The positions of texts in the order an encoder batches them (bare texts in, a permutation out)."""


def text_hash(text: str) -> bytes:
    """The cache key of one text: the first 16 bytes of SHA-256 of its UTF-8 bytes."""
    return bytes.fromhex(text_fingerprint(text, length=2 * HASH_BYTES))


@dataclass
class CacheStats:
    """What the last `get_or_compute` did, for tests and progress lines."""

    hits: int = 0
    computed: int = 0
    corrupt_entries: list[str] = field(default_factory=list)


class EmbeddingCache:
    """Vectors of one model, found by text hash, stored in write-once entries."""

    def __init__(self, workspace: Workspace, model_key: str, *, slug: str = "model", about: dict[str, object] | None = None) -> None:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in slug)[:48]
        digest = text_fingerprint(model_key, length=16)
        self.folder = workspace.embeddings / f"{safe}-{digest}"
        clean_stale_temps(self.folder)  # an entry whose writer was killed mid-write leaves a .tmp (issue 9)
        self.model_key = model_key
        self.stats = CacheStats()
        self._folder_ready = False
        self._about = about or {}
        # Entries are write-once, so one read per process is enough (passages, then queries).
        self._memo: dict[str, tuple[list[bytes], np.ndarray]] = {}

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
            step = max(1, chunk or len(pending))
            for start in range(0, len(pending), step):
                part = pending[start : start + step]
                new_texts = [texts[i] for _, i in part]
                vectors = np.ascontiguousarray(encode(new_texts), dtype=np.float32)
                if vectors.shape[0] != len(new_texts):
                    raise ValueError(f"encoder returned {vectors.shape[0]} vectors for {len(new_texts)} texts")
                self._write([h for h, _ in part], vectors)
                known.update(zip([h for h, _ in part], vectors, strict=True))
                self.stats.computed += len(part)
            if len(self.entries()) > MAX_ENTRIES:
                self.compact()
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
                    entry = check_entry(path)
                except FileNotFoundError:
                    continue  # merged into a larger entry by another run's compaction meanwhile
                except (OSError, ValueError) as exc:
                    self.stats.corrupt_entries.append(path.name)
                    if isinstance(exc, Damaged):
                        damaged(f"embedding cache entry {path}", "embedding its texts again")
                    else:
                        warn(f"embedding cache entry {path} is unreadable ({exc}); embedding its texts again")
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                    continue
            self._memo[path.name] = entry
            hashes, vectors = entry
            for i, h in enumerate(hashes):
                if h in wanted:
                    found[h] = vectors[i]
        return found

    def _write(self, hashes: list[bytes], vectors: np.ndarray) -> None:
        if not self._folder_ready:
            self.folder.mkdir(parents=True, exist_ok=True)
            about = {"model_key": self.model_key, **self._about}
            write_atomic(self.folder / "model.json", json.dumps(about, indent=2, default=str).encode())
            self._folder_ready = True
        hash_blob = b"".join(hashes)
        name = Fingerprinter().record(self.model_key, hash_blob).hexdigest(length=32) + ".gsemb"
        write_entry(self.folder / name, hash_blob, vectors)
        self._memo[name] = (list(hashes), vectors)

    def compact(self) -> None:
        """Merge every entry into one (under a lock), then delete the merged ones.

        The merged entry is written before any old one is removed, so a concurrent reader finds each
        vector in one file or the other; at worst it embeds a few texts again.
        """
        with file_lock(self.folder / ".compact.lock"):
            paths = self.entries()
            if len(paths) <= 1:
                return
            merged: dict[bytes, np.ndarray] = {}
            for path in paths:
                entry = self._memo.get(path.name) or read_entry(path)
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


def write_entry(path: Path, hash_blob: bytes, vectors: np.ndarray) -> None:
    """Write one entry: `GSEMB1 {json header}\\n`, then the hashes, then float32 rows."""
    vec_blob = np.ascontiguousarray(vectors, dtype="<f4").tobytes()
    digest = bytes_fingerprint(hash_blob + vec_blob)
    header = {"count": len(hash_blob) // HASH_BYTES, "dim": int(vectors.shape[1]), "sha256": digest}
    write_atomic(path, [MAGIC + json.dumps(header).encode() + b"\n", hash_blob, vec_blob])


def read_entry(path: Path) -> tuple[list[bytes], np.ndarray] | None:
    """An entry's hashes and vectors, or None when it is truncated, damaged or unreadable."""
    try:
        return check_entry(path)
    except (OSError, ValueError):
        return None


def check_entry(path: Path) -> tuple[list[bytes], np.ndarray]:
    """An entry's hashes and vectors; `store.kept.Damaged` when its payload fails the checksum its header
    records, ValueError when it is cut short or not an entry, OSError when it cannot be read."""
    data = path.read_bytes()
    end = data.find(b"\n")
    if not data.startswith(MAGIC) or end < 0:
        raise ValueError("not an entry")
    try:
        header = json.loads(data[len(MAGIC) : end])
        count, dim, digest = int(header["count"]), int(header["dim"]), str(header["sha256"])
    except (ValueError, KeyError, TypeError):
        raise ValueError("its header does not read") from None
    payload = memoryview(data)[end + 1 :]
    if len(payload) != count * HASH_BYTES + count * dim * 4:
        raise ValueError(f"{len(payload)} bytes where its header says {count * HASH_BYTES + count * dim * 4}")
    if bytes_fingerprint(payload) != digest:
        raise Damaged("checksum mismatch")
    hash_blob = bytes(payload[: count * HASH_BYTES])
    vectors = np.frombuffer(payload[count * HASH_BYTES :], dtype="<f4").reshape(count, dim)
    hashes = [hash_blob[i : i + HASH_BYTES] for i in range(0, len(hash_blob), HASH_BYTES)]
    return hashes, vectors
