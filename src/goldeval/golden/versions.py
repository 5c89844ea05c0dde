"""Frozen versions of a golden set: a number and a content hash, kept in a sidecar file.

`goldeval golden freeze golden.jsonl` appends one line to `golden.versions.jsonl` beside the set:

    {"version": 3, "fingerprint": "<sha256>", "at": "2026-11-30T05:40:00+00:00", "by": "ana",
     "n_questions": 58, "n_judgments": 71, "questions": {"q01": "<digest>", ...}, "digests": 2, "note": ""}

The fingerprint is `GoldenSet.fingerprint()` (ids, texts, intents, judged grades), so loading a set whose
content equals a frozen version gives it that version number (`GoldenSet.version`), which every run then
records in its identity; any edit (a question added, a label fixed, a pooled judgment) leaves the set
unversioned until it is frozen again, as version n + 1. Freezing an unchanged set makes no new version.
Per-question digests let two versions name what changed between them (`changes_between`). They are
`goldeval.fingerprint` digests (`"digests": 2`); a line without `digests` was written before that and
holds digests of `json.dumps`' default spacing, which `question_digests(..., digest_format=1)` still
computes, so a set frozen by an older goldeval is compared with its next version correctly.
A sidecar, not a header line: rewriting the set (pooling, label fixes) never loses its history.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from goldeval.corpus.files import read_json_lines
from goldeval.errors import InputError
from goldeval.fingerprint import fingerprint as content_fingerprint
from goldeval.fingerprint import text_fingerprint
from goldeval.golden.model import GoldenSet, Question
from goldeval.store.transaction import transaction

T = TypeVar("T")

DIGEST_FORMAT = 2
"""The question digests written now: `goldeval.fingerprint` of canonical JSON."""


@dataclass(frozen=True)
class Version:
    """One frozen version of a golden set."""

    version: int
    fingerprint: str
    at: str
    by: str = ""
    n_questions: int = 0
    n_judgments: int = 0
    questions: Mapping[str, str] = field(default_factory=dict)
    """Question id -> digest of its text, intent and judged grades."""
    note: str = ""
    digest_format: int = DIGEST_FORMAT
    """How `questions` was digested: 2, `goldeval.fingerprint`; 1, before it (read, never written)."""

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "fingerprint": self.fingerprint, "at": self.at, "by": self.by,
                "n_questions": self.n_questions, "n_judgments": self.n_judgments,
                "questions": dict(self.questions), "digests": self.digest_format, "note": self.note}


@dataclass(frozen=True)
class Changes:
    """What differs between two versions of a golden set, by question id."""

    added: list[str]
    removed: list[str]
    changed: list[str]
    """Same id, another text, intent or relevant documents (grades): relabelled."""
    judged: list[str] = field(default_factory=list)
    """Same labels, other judged-not-relevant documents (a pool judged more of its results)."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.judged)

    def describe(self) -> str:
        """E.g. `2 added (q13, q14), 1 relabelled (h05)`; `no question changed`."""
        parts = [f"{len(ids)} {what} ({_few(ids)})" for what, ids in
                 (("added", self.added), ("removed", self.removed), ("relabelled", self.changed),
                  ("judged further", self.judged)) if ids]
        return ", ".join(parts) or "no question changed"


def sidecar_path(golden_path: str | Path, suffix: str = "versions") -> Path:
    """`golden.jsonl` -> `golden.versions.jsonl` (and `golden.changes.jsonl` with suffix `changes`)."""
    path = Path(golden_path)
    return path.with_name(f"{path.stem}.{suffix}.jsonl")


def lock_path(golden_path: str | Path) -> Path:
    """The lock every writer of a golden set and its sidecars holds (`.golden.jsonl.lock`)."""
    path = Path(golden_path)
    return path.with_name(f".{path.name}.lock")


def label_digest(labels: Any, judged: Any, *, digest_format: int = DIGEST_FORMAT) -> str:
    """`LLLLLLLL.JJJJJJJJ`: a digest of a question's labels (text, intent, relevant grades) and one of
    its judged-not-relevant documents, so a relabelled question is told from one judged further.
    `digest_format=1` reproduces the digests of version lines written before `"digests": 2`."""
    def part(value: Any) -> str:
        if digest_format == 1:  # json.dumps' default spacing, as those lines were digested
            return text_fingerprint(json.dumps(value, ensure_ascii=False), length=8)
        return content_fingerprint(value, length=8)

    return f"{part(labels)}.{part(judged)}"


def question_digest(golden: GoldenSet, q: Question, *, digest_format: int = DIGEST_FORMAT) -> str:
    """The digest of what a question asks and what answers it (`label_digest`)."""
    grades = golden.grades(q.id)
    return label_digest([q.question, q.intent, sorted((d, g) for d, g in grades.items() if g > 0)],
                        sorted(d for d, g in grades.items() if g <= 0), digest_format=digest_format)


def question_digests(golden: GoldenSet, *, digest_format: int = DIGEST_FORMAT) -> dict[str, str]:
    """Question id -> `question_digest`, in `digest_format` (that of the version compared with)."""
    return {q.id: question_digest(golden, q, digest_format=digest_format) for q in golden}


def read_versions(golden_path: str | Path) -> list[Version]:
    """The frozen versions of the set at `golden_path`, oldest first; [] when it was never frozen."""
    return read_sidecar(sidecar_path(golden_path), _version, what="versions",
                        writer="`goldeval golden freeze`")


def _version(data: Mapping[str, Any]) -> Version:
    return Version(int(data["version"]), str(data["fingerprint"]), str(data.get("at", "")),
                   str(data.get("by", "")), int(data.get("n_questions", 0)),
                   int(data.get("n_judgments", 0)), dict(data.get("questions") or {}), str(data.get("note", "")),
                   int(data.get("digests", 1)))


def read_sidecar(path: Path, parse: Callable[[Mapping[str, Any]], T], *, what: str, writer: str) -> list[T]:
    """Every record of a JSONL sidecar goldeval writes (versions, changelog), oldest first; [] without the
    file. A line that does not parse is one error naming the file and the line."""
    if not path.exists():
        return []
    out = []
    fix = f"this file is written by {writer}; restore it from version control"
    for lineno, data in read_json_lines(path, what, hint=fix):
        try:
            out.append(parse(data))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"bad {what} line: {exc}", path=path, line=lineno, value=str(data)[:120],
                             hint=fix) from None
    return out


def frozen_version(golden: GoldenSet) -> int | None:
    """The number of the frozen version whose content equals `golden`, or None (never frozen, or
    edited since)."""
    if not golden.path:
        return None
    versions = versions_by_fingerprint(golden.path)
    return versions.get(golden.fingerprint()) if versions else None  # never frozen: no fingerprint to make


def version_of(golden_path: str | Path, fingerprint: str) -> int | None:
    """The frozen version of the set at `golden_path` whose content has this fingerprint (the newest,
    should the content come back), or None. The one rule that attaches content to a version: by what it
    holds, never by when it was frozen, so a run made before its set was frozen belongs to that version."""
    return versions_by_fingerprint(golden_path).get(fingerprint)


def versions_by_fingerprint(golden_path: str | Path) -> dict[str, int]:
    """Fingerprint -> the newest frozen version with that content, for the set at `golden_path`."""
    return {v.fingerprint: v.version for v in read_versions(golden_path)}


def freeze(golden: GoldenSet, *, by: str = "", note: str = "", now: str | None = None) -> tuple[Version, bool]:
    """Stamp `golden` (loaded from its file) as a new version; (the version, whether it is new).

    An unchanged set keeps its latest version: freezing twice makes no version 4 equal to version 3.
    """
    if not golden.path or not Path(golden.path).is_file():
        raise InputError("only a golden-set file can be frozen", path=golden.path or None,
                         hint="freeze the JSONL file the set was loaded from")
    with transaction(lock_path(golden.path)) as tx:  # re-read under the lock; Ctrl+C waits for the write
        versions = read_versions(golden.path)
        fingerprint = golden.fingerprint()
        if versions and versions[-1].fingerprint == fingerprint:
            return versions[-1], False
        version = Version(
            version=(versions[-1].version + 1) if versions else 1, fingerprint=fingerprint,
            at=now or datetime.now(UTC).isoformat(timespec="seconds"), by=by, n_questions=len(golden),
            n_judgments=len(golden.qrels), questions=question_digests(golden), note=note,
        )
        earlier = tx.read(sidecar_path(golden.path)) or ""  # earlier lines kept as written, unknown fields too
        if earlier and not earlier.endswith("\n"):
            earlier += "\n"
        tx.write(sidecar_path(golden.path), earlier + json.dumps(version.to_dict(), ensure_ascii=False) + "\n")
    golden.version = version.version
    return version, True


def changes_between(old: Mapping[str, str], new: Mapping[str, str]) -> Changes:
    """Question digests (`label_digest`) of two versions -> what was added, removed, relabelled and
    judged further."""
    both = set(old) & set(new)
    return Changes(
        added=sorted(set(new) - set(old)),
        removed=sorted(set(old) - set(new)),
        changed=sorted(q for q in both if labels_of(old[q]) != labels_of(new[q])),
        judged=sorted(q for q in both if labels_of(old[q]) == labels_of(new[q]) and old[q] != new[q]),
    )


def labels_of(digest: str) -> str:
    """The labels part of a `label_digest`."""
    return digest.split(".", 1)[0]


def _few(ids: list[str], limit: int = 5) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
