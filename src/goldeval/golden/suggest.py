"""Questions from production: the frequent searches of a log that the golden set does not cover yet.

`suggest` reads a search log (JSONL: `query`, optionally `time`, `clicks`, `feedback`; or one query a
line), then
1. masks personal data and secrets (`goldeval.golden.masking`) before anything else sees a query;
2. normalises (Unicode NFKC, spaces) and merges exact repeats (case and end punctuation ignored);
3. drops near-duplicates by embedding (cosine >= `duplicate`, the more frequent wording kept);
4. clusters the rest (each query joins the closest cluster centroid within `cluster`, most frequent
   first) and counts each cluster's searches;
5. measures coverage: the cosine between a cluster's centroid and the nearest golden-set question;
6. proposes the clusters searched at least `min_count` times whose coverage is below `covered`.
Proposals are candidates for a person to label (expected documents, or off-topic), never questions
of the set by themselves. The embedding function is passed in (`goldeval golden suggest` uses an
offline encoder of the `dense` extra), so this module needs no model.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from goldeval.corpus.files import check_input_file, json_value
from goldeval.errors import InputError
from goldeval.fingerprint import text_fingerprint
from goldeval.golden.masking import mask
from goldeval.golden.model import GoldenSet

Encode = Callable[[list[str]], np.ndarray]
"""Texts -> L2-normalised rows (queries)."""

QUERY_FIELDS = ("query", "q", "question", "text", "search", "search_query")
NEGATIVE = {"-1", "down", "thumbs_down", "negative", "bad", "unhelpful", "no"}


@dataclass
class Query:
    """One distinct (masked, normalised) query of the log, with how often it was searched."""

    text: str
    count: int = 0
    first: str = ""
    last: str = ""
    clicks: int = 0
    negative: int = 0
    variants: Counter[str] = field(default_factory=Counter)


@dataclass
class Cluster:
    """Queries that ask the same thing, the most searched wording first."""

    queries: list[Query]
    centroid: np.ndarray
    coverage: float = 0.0
    nearest: str = ""
    """The golden question closest to it."""

    @property
    def count(self) -> int:
        return sum(q.count for q in self.queries)

    @property
    def text(self) -> str:
        """The wording searched most often (the first of equals, most searched query first)."""
        counts: Counter[str] = Counter()
        for q in self.queries:
            counts.update(q.variants)
        return counts.most_common(1)[0][0]

    def record(self, log: str, created: str) -> dict[str, Any]:
        """A candidate record (golden-set fields plus provenance `log`) for a person to label."""
        variants = [v for q in self.queries for v, _ in q.variants.most_common()]
        digest = text_fingerprint(self.text.casefold(), length=10)
        return {
            "id": f"log-{digest}", "question": self.text, "expected": [], "intent": "answerable",
            "provenance": {
                "kind": "log", "log": log, "count": self.count, "variants": variants[:8],
                "first_seen": min((q.first for q in self.queries if q.first), default=""),
                "last_seen": max((q.last for q in self.queries if q.last), default=""),
                "clicks": sum(q.clicks for q in self.queries), "negative_feedback": sum(q.negative for q in self.queries),
                "coverage": round(self.coverage, 3), "nearest_question": self.nearest,
                "created": created, "status": "unreviewed",
            },
        }


@dataclass
class Suggestions:
    clusters: list[Cluster]
    """Every cluster, most searched first."""
    proposed: list[Cluster]
    n_lines: int
    n_distinct: int
    masked: Counter[str]


def read_log(path: str | Path) -> tuple[list[Query], int, Counter[str]]:
    """Distinct masked queries of a log (exact repeats merged), the number of searches, what was masked."""
    path = Path(path)
    check_input_file(path, "search log")
    distinct: dict[str, Query] = {}
    masked: Counter[str] = Counter()
    n = 0
    for lineno, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        text, record = _query(line, path, lineno)
        if not text:
            continue
        text, kinds = mask(normalise(text))
        masked.update(kinds)
        n += 1
        q = distinct.setdefault(dedupe_key(text), Query(text))
        q.count += 1
        q.variants[text] += 1
        when = str(record.get("time") or record.get("timestamp") or record.get("ts") or "")
        q.first = min(q.first, when) if q.first and when else (q.first or when)
        q.last = max(q.last, when)
        clicks = record.get("clicks")
        q.clicks += len(clicks) if isinstance(clicks, list) else int(clicks) if isinstance(clicks, int) else 0
        q.negative += int(str(record.get("feedback", "")).strip().lower() in NEGATIVE)
    return list(distinct.values()), n, masked


def _query(line: str, path: Path, lineno: int) -> tuple[str, dict[str, Any]]:
    if not line.lstrip().startswith("{"):
        return line.strip(), {}
    record = json_value(line, path=path, line=lineno, what="search log", shown=lambda text: mask(text[:80])[0],
                        hint="one JSON object a line, e.g. {\"query\": \"reset my password\", \"time\": \"...\"}")
    if not isinstance(record, dict):
        raise InputError(f"expected a JSON object, got {type(record).__name__}", path=path, line=lineno,
                         hint="one JSON object a line, e.g. {\"query\": \"reset my password\"}")
    for key in QUERY_FIELDS:
        if isinstance(record.get(key), str):
            return record[key], record
    raise InputError("no query text in this line", path=path, line=lineno, value=sorted(record),
                     hint="name the field `query` (also read: " + ", ".join(QUERY_FIELDS[1:]) + ")")


def normalise(text: str) -> str:
    """NFKC, spaces collapsed, surrounding quotes and spaces dropped: the wording a person reads."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", " ", text).strip().strip("\"'`").strip()


def dedupe_key(text: str) -> str:
    """Exact-repeat key: case folded, trailing punctuation dropped."""
    return re.sub(r"[\s?!.,;:]+$", "", text.casefold())


def suggest(log: str | Path, golden: GoldenSet, encode: Encode, *, duplicate: float = 0.9, cluster: float = 0.7,
            covered: float = 0.75, min_count: int = 2, limit: int = 20) -> Suggestions:
    """Frequent clusters of the log the golden set does not cover (see the module docstring)."""
    queries, n_lines, masked = read_log(log)
    queries.sort(key=lambda q: (-q.count, q.text))
    vectors = encode([q.text for q in queries]) if queries else np.zeros((0, 1), dtype=np.float32)
    kept, kept_vectors = _drop_near_duplicates(queries, vectors, duplicate)
    clusters = _clusters(kept, kept_vectors, cluster)
    answerable = [q for q in golden if not q.off_topic]
    if clusters and answerable:
        golden_vectors = encode([q.question for q in answerable])
        sims = np.vstack([c.centroid for c in clusters]) @ golden_vectors.T
        for c, row in zip(clusters, sims, strict=True):
            best = int(np.argmax(row))
            c.coverage, c.nearest = float(row[best]), answerable[best].id
    clusters.sort(key=lambda c: (-c.count, c.text))
    proposed = [c for c in clusters if c.count >= min_count and c.coverage < covered][:limit]
    return Suggestions(clusters, proposed, n_lines, len(queries), masked)


def _drop_near_duplicates(queries: Sequence[Query], vectors: np.ndarray, threshold: float) -> tuple[list[Query], np.ndarray]:
    """Merge each query into a more frequent one at cosine >= threshold (queries sorted by count)."""
    kept: list[int] = []
    for i, q in enumerate(queries):
        if kept:
            sims = vectors[kept] @ vectors[i]
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                keeper = queries[kept[j]]
                keeper.count += q.count
                keeper.clicks += q.clicks
                keeper.negative += q.negative
                keeper.variants.update(q.variants)
                keeper.first = min(x for x in (keeper.first, q.first) if x) if (keeper.first or q.first) else ""
                keeper.last = max(keeper.last, q.last)
                continue
        kept.append(i)
    return [queries[i] for i in kept], vectors[kept] if kept else vectors[:0]


def _clusters(queries: Sequence[Query], vectors: np.ndarray, threshold: float) -> list[Cluster]:
    """Leader clustering, most searched first: join the closest centroid within `threshold`, else start one."""
    clusters: list[Cluster] = []
    sums: list[np.ndarray] = []
    for q, v in zip(queries, vectors, strict=True):
        if clusters:
            sims = np.array([c.centroid @ v for c in clusters])
            j = int(np.argmax(sims))
            if sims[j] >= threshold:
                clusters[j].queries.append(q)
                sums[j] = sums[j] + v * q.count
                clusters[j].centroid = sums[j] / max(float(np.linalg.norm(sums[j])), 1e-12)
                continue
        clusters.append(Cluster([q], v.copy()))
        sums.append(v * q.count)
    return clusters
