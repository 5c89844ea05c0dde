"""What a sweep stores in the workspace, each stage's output keyed by the content it came from.

Under `<workspace>/sweep/`:

    chunks/<key>.json       the passages of one corpus under one chunking
                            (key: corpus fingerprint + chunk spec)
    runs/<key>.json         one retriever's ranked results for every question, with its resolved
                            configuration and what it cost (key: passages fingerprint + resolved
                            retriever config + model and code identity + question texts + depth)
    embedding-time/<key>.json   how long one model took to embed one set of passages

Embeddings themselves live in the workspace's embedding cache (`goldeval.store.cache`), shared with
`goldeval eval`. Every file is written atomically (`goldeval.store.atomic`), so a crash or two sweeps
at once leave the old file or the new one; a file that does not parse is a miss and is written again.
Fusion and scoring are not stored: they are pure and take milliseconds, so a new fusion weight or a
new k is computed from stored runs without searching again.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldeval.corpus.model import Corpus, Passage
from goldeval.run import Hits, Run
from goldeval.store.atomic import write_atomic
from goldeval.store.workspace import Workspace

FORMAT = 1
"""Bumped when the stored layout changes, so old files are misses rather than misreads."""


def content_key(*parts: object) -> str:
    """sha256 of the parts as canonical JSON: the name of a stored stage output."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def corpus_fingerprint(corpus: Corpus) -> str:
    """sha256 of the documents (id, title, text) in order: the chunks' key."""
    digest = hashlib.sha256()
    for doc in corpus:
        for part in (doc.id, doc.title, doc.text):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
        digest.update(b"\x01")
    return digest.hexdigest()


def questions_fingerprint(questions: Mapping[str, str]) -> str:
    return content_key(sorted(questions.items()))


@dataclass
class StoredRun:
    """One retriever's results for every question, its configuration, and what it cost to make."""

    spec: str
    depth: int
    results: dict[str, Hits]
    errors: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    """The retriever's resolved configuration, as `Retriever.config` gave it when it was built."""
    cost: dict[str, Any] = field(default_factory=dict)
    """`index_seconds`, `index_bytes`, `search_seconds`, `embedded` (texts embedded while building and
    searching), measured when the run was made (a cache hit reports the same numbers)."""
    latency_ms: dict[str, float] = field(default_factory=dict)
    """Milliseconds to answer each sampled question alone (`goldeval.sweep.cost`)."""
    machine: dict[str, Any] = field(default_factory=dict)

    def run(self) -> Run:
        return Run(self.spec, {q: list(h) for q, h in self.results.items()}, dict(self.errors))

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "spec": self.spec, "depth": self.depth,
                "results": {q: [[pid, score] for pid, score in hits] for q, hits in self.results.items()},
                "errors": self.errors, "config": self.config, "cost": self.cost, "latency_ms": self.latency_ms,
                "machine": self.machine}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StoredRun:
        if data.get("format") != FORMAT:
            raise ValueError(f"stored run format {data.get('format')!r}, expected {FORMAT}")
        results = {str(q): [(str(pid), float(score)) for pid, score in hits] for q, hits in data["results"].items()}
        return cls(str(data["spec"]), int(data["depth"]), results, dict(data.get("errors") or {}),
                   dict(data.get("config") or {}), dict(data.get("cost") or {}),
                   {str(q): float(ms) for q, ms in (data.get("latency_ms") or {}).items()}, dict(data.get("machine") or {}))

    @classmethod
    def from_run(cls, run: Run, *, spec: str, depth: int, config: Mapping[str, Any] | None = None) -> StoredRun:
        return cls(spec, depth, {q: list(h) for q, h in run.results.items()}, dict(run.errors), dict(config or {}))


class SweepCache:
    """The sweep's stored stage outputs in one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.root = workspace.root / "sweep"

    # --- chunks ----------------------------------------------------------------------------------

    def chunks(self, corpus: Corpus, fingerprint: str, spec: str) -> tuple[list[Passage], bool]:
        """The passages of `corpus` under chunk spec `spec` (`none` or `SIZE:OVERLAP`), and whether
        they came from the cache."""
        path = self.root / "chunks" / f"{content_key('chunks', FORMAT, fingerprint, spec)}.json"
        stored = self._read(path)
        if stored is not None:
            return [Passage(*row) for row in stored["passages"]], True
        from goldeval.corpus.chunking import parse_chunk_spec

        passages = list(corpus.passages(parse_chunk_spec(spec)))
        rows = [[p.id, p.doc_id, p.text, p.title, p.start, p.end] for p in passages]
        self._write(path, {"format": FORMAT, "corpus": fingerprint, "chunking": spec, "passages": rows})
        return passages, False

    # --- runs ------------------------------------------------------------------------------------

    def get_run(self, key: str) -> StoredRun | None:
        stored = self._read(self._run_path(key))
        if stored is None:
            return None
        try:
            return StoredRun.from_dict(stored)
        except (KeyError, TypeError, ValueError):
            print(f"goldeval: sweep cache entry {self._run_path(key)} is unreadable; searching again", file=sys.stderr)
            return None

    def put_run(self, key: str, run: StoredRun) -> None:
        self._write(self._run_path(key), run.to_dict())

    def _run_path(self, key: str) -> Path:
        return self.root / "runs" / f"{key}.json"

    # --- embedding time --------------------------------------------------------------------------

    def embedding_time(self, key: str) -> dict[str, Any] | None:
        return self._read(self.root / "embedding-time" / f"{key}.json")

    def put_embedding_time(self, key: str, record: Mapping[str, Any]) -> None:
        self._write(self.root / "embedding-time" / f"{key}.json", dict(record))

    # --- files -----------------------------------------------------------------------------------

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            print(f"goldeval: sweep cache file {path} is unreadable; computing it again", file=sys.stderr)
            return None
        return data if isinstance(data, dict) else None

    def _write(self, path: Path, data: Mapping[str, Any]) -> None:
        write_atomic(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def passages_texts(passages: Sequence[Passage]) -> list[str]:
    """What a dense model embeds for each passage (`goldeval.retrievers.dense.passage_text`)."""
    from goldeval.retrievers.dense import passage_text

    return [passage_text(p) for p in passages]
