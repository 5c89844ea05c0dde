"""Runs kept by content: a retriever's ranked results for every question, stored under a key made of
everything those results depend on, so an unchanged evaluation or sweep cell is read, not searched.

A base run (bm25, dense:MODEL, hybrid of them) depends on the passages (their fingerprint, so chunking
is in it), the retriever's resolved options (`declared_options`: defaults, `--option`s and the spec's
own values, its parts' too), the identity of what computes it (the embedding model's key, which covers
its weights and package versions; bm25s' version; the source of goldeval's retrieval code, so editing
it invalidates every stored run), the question texts and the depth. A reranked run depends on its base
run's content instead of the passages' (the base may itself be a fusion of stored runs), plus the
reranker's identity.

`goldeval eval` keeps its runs in `<workspace>/runs/`, the sweep in `<workspace>/sweep/runs/` (its
runs carry costs and latencies that an evaluation does not measure). Every file is written atomically
(`goldeval.store.atomic`): a crash or two processes at once leave the old file or the new one, and a
file that does not parse is a miss, searched and written again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from goldeval.fingerprint import Fingerprinter, fingerprint
from goldeval.retrievers.base import declared_options, spec_prefix
from goldeval.retrievers.options import split_spec
from goldeval.run import Hits, Run
from goldeval.store.kept import read_kept, write_kept
from goldeval.store.workspace import Workspace

FORMAT = 2
"""Bumped when the stored layout changes, so old files are misses rather than misreads (2: every kept file
carries its checksum, `goldeval.store.kept`; a file of format 1 is never looked up, so never called damaged)."""
CACHEABLE = frozenset({"bm25", "dense", "hybrid", "rerank"})
"""Retriever kinds whose results depend only on what the key holds. A function, a service, a run file or
an adapter answers from outside goldeval (it may change without the key changing): never stored."""
REMOTE_BACKENDS = frozenset({"pgvector"})
"""Index backends whose searches are the point of the evaluation (a database): searched every time."""


def questions_fingerprint(questions: Mapping[str, str]) -> str:
    """The questions searched (id -> text): part of every stored run's key."""
    return fingerprint([sorted(questions.items())])


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
    warnings: list[str] = field(default_factory=list)
    """What building and searching warned about (`textsafe.recording`), said again when the run is read."""

    def run(self) -> Run:
        return Run(self.spec, {q: list(h) for q, h in self.results.items()}, dict(self.errors))

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "spec": self.spec, "depth": self.depth,
                "results": {q: [[pid, score] for pid, score in hits] for q, hits in self.results.items()},
                "errors": self.errors, "config": self.config, "cost": self.cost, "latency_ms": self.latency_ms,
                "machine": self.machine, "warnings": self.warnings}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StoredRun:
        if data.get("format") != FORMAT:
            raise ValueError(f"stored run format {data.get('format')!r}, expected {FORMAT}")
        results = {str(q): [(str(pid), float(score)) for pid, score in hits] for q, hits in data["results"].items()}
        return cls(str(data["spec"]), int(data["depth"]), results, dict(data.get("errors") or {}),
                   dict(data.get("config") or {}), dict(data.get("cost") or {}),
                   {str(q): float(ms) for q, ms in (data.get("latency_ms") or {}).items()}, dict(data.get("machine") or {}),
                   [str(w) for w in data.get("warnings") or []])

    @classmethod
    def from_run(cls, run: Run, *, spec: str, depth: int, config: Mapping[str, Any] | None = None) -> StoredRun:
        return cls(spec, depth, {q: list(h) for q, h in run.results.items()}, dict(run.errors), dict(config or {}))


class RunStore:
    """Stored runs in one folder, a JSON file per key."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    @classmethod
    def for_eval(cls, workspace: Workspace) -> RunStore:
        return cls(workspace.root / "runs")

    def get(self, key: str) -> StoredRun | None:
        path = self.path(key)
        return read_kept(path, "stored run", "searching again", StoredRun.from_dict)

    def put(self, key: str, run: StoredRun) -> None:
        """Keep `run`; one that cannot be written is a warning (`store.kept`), never a failed evaluation."""
        write_kept(self.path(key), run.to_dict(), f"{run.spec}: the run was not kept for next time")

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"


def cacheable(spec: str, options: Mapping[str, object]) -> bool:
    """Whether `spec`'s results depend only on its key: goldeval's own retrievers over local indexes."""
    declared = declared_options(spec, options)
    if not declared or any(spec_prefix(d.spec) not in CACHEABLE for d in declared):
        return False
    if any(str(d.values.get("backend", "")) in REMOTE_BACKENDS for d in declared):
        return False
    if spec_prefix(spec) == "rerank":
        from goldeval.retrievers.rerank import parse

        reranker = parse(spec[len("rerank:"):])[1]
        return reranker.startswith(("dense:", "ce:", "hf:")) or Path(reranker).expanduser().is_dir()
    return True


def run_key(spec: str, *, passages: str, questions: str, depth: int, options: Mapping[str, object],
            base: str | None = None) -> str:
    """The stored-run key of `spec` searched to `depth`; `base` is the content key of a rerank's base run."""
    declared = declared_options(spec, options)
    values = [[d.spec, dict(d.values)] for d in declared]
    identity = [_identity(d.spec, d.values) for d in declared]
    return fingerprint(["run", FORMAT, spec, values, identity, passages, questions, depth, base])


def run_content(run: StoredRun) -> str:
    """A key for a run's results themselves (a fused base run has no simpler identity)."""
    return fingerprint(["results", run.depth, sorted(run.results.items()), sorted(run.errors.items())])


def _identity(spec: str, values: Mapping[str, object]) -> dict[str, Any]:
    prefix = spec_prefix(spec)
    out: dict[str, Any] = {"code": code_digest()}
    if prefix == "bm25":
        out["bm25s"] = _version("bm25s")
    elif prefix == "dense":
        from goldeval.retrievers.dense import precision_value

        rest = spec[len("dense:"):]
        out["model"] = model_key(split_spec(rest)[0], precision_value(values, rest))  # precision=auto: the one it chose
    elif prefix == "rerank":
        from goldeval.retrievers.rerank import parse

        reranker = parse(spec[len("rerank:"):])[1]
        out["reranker"] = (model_key(reranker[len("dense:"):]) if reranker.startswith("dense:")
                           else _hub(reranker) if reranker.startswith("hf:")
                           else _folder(Path(reranker.removeprefix("ce:")).expanduser())
                           if reranker.startswith("ce:") or Path(reranker).expanduser().is_dir() else reranker)
    return out


def _hub(name: str) -> object:
    """A hub cross-encoder's identity: the repo and the commit its name resolves to now."""
    from goldeval.retrievers.encoders.hub import resolve

    return resolve(name).identity()


def _folder(folder: Path) -> object:
    """A cross-encoder folder's identity: its path, and the size and time of its weight files (retrained
    in place, it is another model)."""
    from goldeval.retrievers.encoders.st import folder_identity

    return folder_identity(folder) if folder.is_dir() else str(folder.resolve())


def model_key(model: str, precision: str | None = None) -> str:
    """The embedding cache's key of a model in `precision` (None: its default; auto: the variant it resolves
    to on this machine). No weights are loaded to learn it."""
    from goldeval.retrievers.encoders.registry import shared_encoder

    return str(shared_encoder(model, precision=precision).key)


def code_digest() -> str:
    """sha256 of goldeval's retrieval code (every module of `goldeval.retrievers`, the Run and the ranking
    rule): a change to any of it, an encoder's pooling say, makes every stored run a miss."""
    return source_digest("retrievers", "run.py", "ranking.py")


@cache
def source_digest(*parts: str) -> str:
    """sha256 of the source of goldeval's modules and packages named by `parts` (paths in the package)."""
    package = Path(__file__).resolve().parent
    files: list[Path] = []
    for part in parts:
        files += sorted((package / part).rglob("*.py")) if (package / part).is_dir() else [package / part]
    digest = Fingerprinter()
    for path in files:
        digest.record(path.relative_to(package).as_posix(), path.read_bytes())
    return digest.hexdigest(length=16)


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None
