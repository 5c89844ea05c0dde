"""The embedding cache: reuse, keys, atomic write-once entries, corruption, concurrency."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from goldeval.store.atomic import write_atomic
from goldeval.store.cache import EmbeddingCache, read_entry, text_hash
from goldeval.store.workspace import Workspace
from hang_guard import HANG_GUARD


class CountingEncoder:
    """A deterministic fake model that records every text it was asked to embed."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([_vector(t, self.dim) for t in texts])

    @property
    def embedded(self) -> int:
        return sum(len(c) for c in self.calls)


def _vector(text: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(text_hash(text)[:4], "little")
    return np.random.default_rng(seed).normal(size=dim).astype(np.float32)


def test_second_run_embeds_nothing_and_returns_the_same_vectors(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    encoder = CountingEncoder()
    texts = ["alpha", "beta", "gamma", "beta"]
    first = EmbeddingCache(ws, "model-a").get_or_compute(texts, encoder)
    assert encoder.embedded == 3  # the duplicate "beta" is embedded once
    cache = EmbeddingCache(ws, "model-a")
    second = cache.get_or_compute(texts, encoder)
    assert encoder.embedded == 3
    assert cache.stats.hits == 4 and cache.stats.computed == 0
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(second[1], _vector("beta", 8))


def test_only_new_texts_are_embedded(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    encoder = CountingEncoder()
    EmbeddingCache(ws, "m").get_or_compute(["a", "b"], encoder)
    EmbeddingCache(ws, "m").get_or_compute(["a", "b", "c"], encoder)
    assert encoder.calls == [["a", "b"], ["c"]]


def test_prefix_is_part_of_the_key(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    encoder = CountingEncoder()
    EmbeddingCache(ws, "e5").get_or_compute(["x"], encoder, prefix="query: ")
    EmbeddingCache(ws, "e5").get_or_compute(["x"], encoder, prefix="passage: ")
    assert encoder.embedded == 2


def test_two_models_never_share_vectors(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    enc_a, enc_b = CountingEncoder(), CountingEncoder(dim=4)
    a = EmbeddingCache(ws, "model-a", slug="same-name")
    b = EmbeddingCache(ws, "model-b", slug="same-name")
    assert a.folder != b.folder
    assert a.get_or_compute(["t"], enc_a).shape == (1, 8)
    assert b.get_or_compute(["t"], enc_b).shape == (1, 4)
    assert enc_a.embedded == 1 and enc_b.embedded == 1


def test_truncated_entry_is_detected_and_rebuilt(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    encoder = CountingEncoder()
    cache = EmbeddingCache(ws, "m")
    good = cache.get_or_compute(["one", "two"], encoder)
    (entry,) = cache.entries()
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) - 5])
    assert read_entry(entry) is None
    again = EmbeddingCache(ws, "m")
    rebuilt = again.get_or_compute(["one", "two"], encoder)
    assert again.stats.corrupt_entries == [entry.name]
    assert encoder.embedded == 4
    np.testing.assert_array_equal(good, rebuilt)
    assert read_entry(again.entries()[0]) is not None


def test_flipped_byte_fails_the_checksum(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    cache = EmbeddingCache(ws, "m")
    cache.get_or_compute(["one"], CountingEncoder())
    (entry,) = cache.entries()
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert read_entry(entry) is None


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.bin"
    write_atomic(target, [b"abc", b"def"])
    write_atomic(target, b"xyz")
    assert target.read_bytes() == b"xyz"
    assert [p.name for p in target.parent.iterdir()] == ["file.bin"]


def _worker(root: str, start: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    encoder = CountingEncoder()
    cache = EmbeddingCache(Workspace(Path(root)), "shared-model")
    texts = [f"text {i}" for i in range(start, start + 300)]
    vectors = None
    for _ in range(5):
        vectors = cache.get_or_compute(texts, encoder)
    assert vectors is not None
    out.put(float(vectors.sum()))


def test_two_processes_at_once_do_not_corrupt_the_cache(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    # Overlapping texts: both processes write some identical entries at the same moment.
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), start, queue)) for start in (0, 150, 0)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=HANG_GUARD)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = EmbeddingCache(Workspace(tmp_path), "shared-model")
    assert cache.entries()
    assert all(read_entry(e) is not None for e in cache.entries())
    texts = [f"text {i}" for i in range(450)]
    encoder = CountingEncoder()
    vectors = cache.get_or_compute(texts, encoder)
    assert encoder.embedded == 0
    expected = np.stack([_vector(t, 8) for t in texts])
    np.testing.assert_array_equal(vectors, expected)
    assert not list(cache.folder.glob(".*.tmp"))


def test_workspace_defaults_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOLDEVAL_WORKSPACE", raising=False)
    assert Workspace.at().root == Path(".goldeval")
    monkeypatch.setenv("GOLDEVAL_WORKSPACE", str(tmp_path / "ws"))
    assert Workspace.at().root == tmp_path / "ws"
    assert Workspace.at(tmp_path / "x").embeddings == tmp_path / "x" / "embeddings"


def test_many_small_entries_are_compacted_into_one(tmp_path: Path) -> None:
    from goldeval.store.cache import MAX_ENTRIES

    ws = Workspace(tmp_path)
    encoder = CountingEncoder()
    for i in range(MAX_ENTRIES + 1):
        EmbeddingCache(ws, "m").get_or_compute([f"question {i}"], encoder)
    cache = EmbeddingCache(ws, "m")
    assert len(cache.entries()) == 1
    texts = [f"question {i}" for i in range(MAX_ENTRIES + 1)]
    vectors = cache.get_or_compute(texts, encoder)
    assert encoder.embedded == MAX_ENTRIES + 1  # nothing embedded twice
    np.testing.assert_array_equal(vectors, np.stack([_vector(t, 8) for t in texts]))


def test_an_entry_removed_by_another_run_is_not_called_corrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(tmp_path)
    EmbeddingCache(ws, "m").get_or_compute(["a"], CountingEncoder())
    reader = EmbeddingCache(ws, "m")
    stale = reader.entries()
    stale[0].unlink()  # a concurrent compaction merged it away between listing and reading
    monkeypatch.setattr(reader, "entries", lambda: stale)
    encoder = CountingEncoder()
    reader.get_or_compute(["a"], encoder)
    assert reader.stats.corrupt_entries == []
    assert encoder.calls == [["a"]]
