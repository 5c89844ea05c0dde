"""The changelog of a golden set: every judgment and label fix, with who, when and why.

`golden.changes.jsonl` sits beside `golden.jsonl`, one change a line:

    {"at": "2026-11-30T05:40:00+00:00", "by": "ana", "action": "also_answers", "question": "h05",
     "doc": "git/git-commit.md", "grade": 1, "before": null, "reason": "commit --amend answers it",
     "pool": "pool-20261130-3f2a", "version": 3}

Actions: `judged` (a pooled passage judged), the label fixes `also_answers` (a retrieved passage answers
a question it missed), `not_covered` (relabelled off-topic: a content gap) and `wrong_expected` (an
expected document does not answer), `added` (a question: an incident, or a candidate accepted in
`goldeval review`), `removed` (an accepted candidate taken back) and `edited` (an accepted question's text
or expected documents changed in review). `version` is the latest frozen version when the change was made,
so a scorecard can say "5 labels fixed since version 3".

`append_changes` is the one writer: the pool, the page's label fixes, `golden add` and `goldeval review`
all record through it, in the transaction of the change itself (`goldeval.store.transaction`: one lock,
all files or none, the changelog renamed last), and it stamps each change with that version.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from goldeval.golden.versions import lock_path, read_sidecar, read_versions, sidecar_path
from goldeval.store.transaction import Transaction, transaction

ACTIONS = ("judged", "also_answers", "not_covered", "wrong_expected", "added", "removed", "edited")
FIXES = ("also_answers", "not_covered", "wrong_expected")
"""The actions that correct a label (the others add one)."""


@dataclass(frozen=True)
class Change:
    """One line of the changelog."""

    at: str
    by: str
    action: str
    question: str
    doc: str | None = None
    grade: int | None = None
    before: Any = None
    """The grade (or intent) before the change; None when there was none."""
    reason: str = ""
    pool: str = ""
    version: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def changelog_path(golden_path: str | Path) -> Path:
    return sidecar_path(golden_path, "changes")


def read_changes(golden_path: str | Path) -> list[Change]:
    """Every change recorded for the set at `golden_path`, oldest first ([] without a changelog)."""
    return read_sidecar(changelog_path(golden_path), _change, what="changelog",
                        writer="goldeval (pool, serve --golden, golden add, review)")


def _change(data: Any) -> Change:
    return Change(**{k: v for k, v in data.items() if k in Change.__dataclass_fields__})


def append_changes(golden_path: str | Path, changes: list[Change], *, tx: Transaction | None = None) -> None:
    """Add changes at the end of the changelog, staged in `tx` (the transaction of the change they record,
    renamed after its other files), or in a transaction of their own under the set's lock. The file is
    read under the lock and only added to: its earlier lines stay as they are. A change without a
    `version` is stamped with the latest frozen one."""
    if not changes:
        return
    if tx is None:
        with transaction(lock_path(golden_path)) as own:
            append_changes(golden_path, changes, tx=own)
        return
    latest = latest_version(golden_path)
    changes = [c if c.version is not None else replace(c, version=latest) for c in changes]
    path = changelog_path(golden_path)
    before = tx.read(path) or ""
    if before and not before.endswith("\n"):
        before += "\n"
    tx.write(path, before + "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in changes), last=True)


def latest_version(golden_path: str | Path) -> int | None:
    versions = read_versions(golden_path)
    return versions[-1].version if versions else None


def changes_summary(golden_path: str | Path, current_version: int | None) -> dict[str, Any]:
    """What changed since the last version before this set's content: {} without a changelog.

    For a set edited since its last freeze (`current_version` None), the changes made since that
    freeze; for a set that is frozen version n, the changes that went into n (since n - 1).
    Keys: `since_version`, `fixed` (label fixes), `judged`, `added`, `frozen` (whether they are in a
    frozen version yet), `text` ("5 labels fixed since version 3").
    """
    changes = read_changes(golden_path)
    if not changes:
        return {}
    latest = latest_version(golden_path)
    if current_version is not None:
        base: int | None = current_version - 1 if current_version > 1 else None
        chosen = [c for c in changes if c.version == base]
    else:
        base = latest
        chosen = [c for c in changes if c.version == latest]
    counts = Counter("fixed" if c.action in FIXES else c.action for c in chosen)
    since = f"since version {base}" if base is not None else "since it was first written"
    parts = [f"{counts['fixed']} label{'s' if counts['fixed'] != 1 else ''} fixed"]
    for key, noun in (("judged", "pooled judgment"), ("added", "question"), ("removed", "question"),
                      ("edited", "question")):
        if counts[key]:
            parts.append(f"{counts[key]} {noun}{'s' if counts[key] != 1 else ''}" + ("" if key == "judged" else f" {key}"))
    text = ", ".join(parts) + f" {since}" + ("" if current_version is not None else " (not frozen yet)")
    return {"since_version": base, "fixed": counts["fixed"], "judged": counts["judged"], "added": counts["added"],
            "removed": counts["removed"], "edited": counts["edited"], "frozen": current_version is not None,
            "text": text}


def golden_changes(path: str | Path, current_version: int | None) -> dict[str, Any]:
    """`{"changes": changes_summary(...)}` for a scorecard's `golden` block, or {} when the set has no
    changelog (or no file)."""
    if not path or not changelog_path(path).is_file():
        return {}
    summary = changes_summary(path, current_version)
    return {"changes": summary} if summary else {}
