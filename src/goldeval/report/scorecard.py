"""The Scorecard: everything one evaluation produced, as plain data.

Renderers (terminal, Markdown, JSON, HTML) read a Scorecard and compute nothing. `to_dict()` is the
stable JSON format documented in docs/results-json.md (schema version SCHEMA_VERSION); other tools,
`goldeval compare`, `goldeval serve` and `goldeval report` read it back with `Scorecard.from_dict`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.store.atomic import write_atomic

SCHEMA_VERSION = 1


@dataclass
class Hit:
    """One retrieved result: the passage id, its document, its score."""

    id: str
    score: float
    doc: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "doc": self.doc, "score": self.score}


@dataclass
class QuestionResult:
    """One retriever's outcome on one golden question."""

    id: str
    question: str
    expected: dict[str, int]
    """Expected ids (documents at doc level, chunks at chunk level) -> graded relevance."""
    off_topic: bool
    rank: int | None
    """1-based rank of the first correct result within the retrieved depth; None if absent or off-topic."""
    ranks: dict[str, int | None]
    """Each expected id -> its 1-based rank within the depth, or None: metrics at any k follow from it."""
    top: list[Hit]
    metrics: dict[str, float]
    """Metric name -> value; empty for off-topic questions, which are never averaged in."""
    tags: list[str] = field(default_factory=list)
    source: str = "hand"
    error: str | None = None
    diagnosis: dict[str, Any] | None = None
    """Filled by goldeval.stats.diagnosis: {"cause", "evidence", "suggestion"}."""

    @property
    def top1_score(self) -> float | None:
        return self.top[0].score if self.top else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "expected": self.expected,
            "off_topic": self.off_topic,
            "rank": self.rank,
            "ranks": self.ranks,
            "top": [h.to_dict() for h in self.top],
            "top1_score": self.top1_score,
            "metrics": self.metrics,
            "tags": self.tags,
            "source": self.source,
            "error": self.error,
            "diagnosis": self.diagnosis,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QuestionResult:
        return cls(
            id=data["id"],
            question=data.get("question", ""),
            expected=dict(data.get("expected", {})),
            off_topic=bool(data["off_topic"]),
            rank=data.get("rank"),
            ranks=dict(data.get("ranks", {})),
            top=[Hit(h["id"], float(h["score"]), h.get("doc", h["id"])) for h in data.get("top", [])],
            metrics={k: float(v) for k, v in data.get("metrics", {}).items()},
            tags=list(data.get("tags", [])),
            source=data.get("source", "hand"),
            error=data.get("error"),
            diagnosis=data.get("diagnosis"),
        )


@dataclass
class RetrieverResult:
    """One retriever's scorecard: aggregates over answerable questions, and every question."""

    name: str
    questions: list[QuestionResult]
    metrics: dict[str, float]
    """Mean over answerable questions (off-topic ones are counted apart, never averaged in as zeros)."""
    intervals: dict[str, list[float]] = field(default_factory=dict)
    """Metric name -> [low, high] confidence interval; filled by goldeval.stats."""
    seconds: float = 0.0

    @property
    def answerable(self) -> list[QuestionResult]:
        return [q for q in self.questions if not q.off_topic]

    @property
    def off_topic(self) -> list[QuestionResult]:
        return [q for q in self.questions if q.off_topic]

    @property
    def n_errors(self) -> int:
        return sum(1 for q in self.questions if q.error)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n_answerable": len(self.answerable),
            "n_off_topic": len(self.off_topic),
            "n_errors": self.n_errors,
            "metrics": self.metrics,
            "intervals": self.intervals,
            "seconds": round(self.seconds, 3),
            "questions": [q.to_dict() for q in self.questions],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetrieverResult:
        return cls(
            name=data["name"],
            questions=[QuestionResult.from_dict(q) for q in data["questions"]],
            metrics={k: float(v) for k, v in data["metrics"].items()},
            intervals={k: list(v) for k, v in data.get("intervals", {}).items()},
            seconds=float(data.get("seconds", 0.0)),
        )


@dataclass
class Scorecard:
    """The result of `goldeval.evaluate`: one RetrieverResult per retriever, plus context.

    `extras` holds what later stages attach (comparisons, off-topic separability, breakdowns by tag
    and source), each under its own key, so the format grows without breaking readers.
    """

    retrievers: list[RetrieverResult]
    metrics: list[str]
    k: list[int]
    depth: int
    level: str = "doc"
    golden: dict[str, Any] = field(default_factory=dict)
    corpus: dict[str, Any] = field(default_factory=dict)
    snippets: dict[str, dict[str, str]] = field(default_factory=dict)
    """Passage id -> {"doc", "title", "text"} (text cut short) for every id in any `top` list."""
    extras: dict[str, Any] = field(default_factory=dict)
    version: str = ""
    created: str = ""

    def retriever(self, name: str) -> RetrieverResult:
        for r in self.retrievers:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "goldeval_version": self.version,
            "created": self.created,
            "level": self.level,
            "k": self.k,
            "depth": self.depth,
            "metric_names": self.metrics,
            "golden": self.golden,
            "corpus": self.corpus,
            "retrievers": [r.to_dict() for r in self.retrievers],
            "snippets": self.snippets,
            **self.extras,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "<dict>") -> Scorecard:
        if not isinstance(data, dict) or "retrievers" not in data:
            raise InputError(
                "not a goldeval results file (no 'retrievers' list)",
                path=source,
                hint="write one with `goldeval eval ... --json results.json`",
            )
        if data.get("schema", SCHEMA_VERSION) > SCHEMA_VERSION:
            raise InputError(
                f"results schema {data['schema']} is newer than this goldeval understands ({SCHEMA_VERSION})",
                path=source,
                hint="upgrade goldeval",
            )
        known = {"schema", "goldeval_version", "created", "level", "k", "depth", "metric_names", "golden",
                 "corpus", "retrievers", "snippets"}
        return cls(
            retrievers=[RetrieverResult.from_dict(r) for r in data["retrievers"]],
            metrics=list(data.get("metric_names", [])),
            k=list(data.get("k", [])),
            depth=int(data.get("depth", 0)),
            level=data.get("level", "doc"),
            golden=dict(data.get("golden", {})),
            corpus=dict(data.get("corpus", {})),
            snippets=dict(data.get("snippets", {})),
            extras={k: v for k, v in data.items() if k not in known},
            version=data.get("goldeval_version", ""),
            created=data.get("created", ""),
        )

    def save(self, path: str | Path) -> None:
        """Write the JSON atomically: a crash never leaves a half-written results file."""
        write_json_atomic(Path(path), self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> Scorecard:
        path = Path(path)
        if not path.exists():
            raise InputError("results file not found", path=path, hint="check the path")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from None
        return cls.from_dict(data, source=str(path))


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON atomically: a crash never leaves a half-written results file."""
    write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
