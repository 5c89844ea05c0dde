"""Each retriever's trend over the runs of one frozen golden-set version, with intervals.

Numbers are comparable only on one golden set: a trend keeps the runs whose golden set is one frozen
version (the same `golden_version` and fingerprint), so a metric moves because retrieval changed, not
because the questions did. `trend_payload` is plain JSON (`goldeval history trend --json OUT`), the
data behind the terminal table and for a page's trend view.
"""

from __future__ import annotations

from typing import Any

from goldeval.errors import InputError
from goldeval.history.db import History, RunRow


def pick_version(runs: list[RunRow], version: int | None) -> tuple[int | None, str, list[RunRow]]:
    """(version, golden fingerprint, its runs oldest first): the asked version, else the newest frozen
    version that has runs, else (no run on a frozen set) the golden set of the newest run, unversioned."""
    if not runs:
        raise InputError("no run recorded yet", hint="every `goldeval eval` records its run; evaluate first")
    if version is not None:
        chosen = [r for r in runs if r.golden_version == version]
        if not chosen:
            have = sorted({r.golden_version for r in runs if r.golden_version is not None})
            raise InputError(f"no run on golden-set version {version}", value=version,
                             hint=("runs exist on version(s) " + ", ".join(map(str, have))) if have else
                             "freeze the golden set (`goldeval golden freeze G`), then evaluate")
        fingerprint = chosen[0].golden_fingerprint  # runs are newest first: the newest run's set
    else:
        frozen = [r for r in runs if r.golden_version is not None]
        newest = frozen[0] if frozen else runs[0]
        version, fingerprint = newest.golden_version, newest.golden_fingerprint
    same = [r for r in runs if r.golden_fingerprint == fingerprint and r.golden_version == version]
    return version, fingerprint, list(reversed(same))


def trend_payload(history: History, *, metric: str, version: int | None = None) -> dict[str, Any]:
    """{"golden_version", "golden_fingerprint", "metric", "runs": [{id, created, tags, corpus}],
    "retrievers": {name: [{"run", "value", "low", "high"}, ...]}, "notes": [...]}."""
    runs = history.runs()
    chosen_version, fingerprint, chosen = pick_version(runs, version)
    rows = history.metric_rows([r.id for r in chosen], metric)
    retrievers: dict[str, list[dict[str, Any]]] = {}
    for run_id, name, value, low, high in rows:
        retrievers.setdefault(name, []).append({"run": run_id, "value": value, "low": low, "high": high})
    notes = []
    if chosen_version is None:
        notes.append("the golden set of these runs is not frozen: freeze it (`goldeval golden freeze G`) so later "
                     "runs stay comparable")
    other = len(runs) - len(chosen)
    if other:
        notes.append(f"{other} run(s) on other golden-set versions are not in this trend")
    corpora = {r.corpus_fingerprint for r in chosen}
    if len(corpora) > 1:
        notes.append(f"the corpus changed across these runs ({len(corpora)} different corpora)")
    if not rows:
        notes.append(f"no run recorded {metric}")
    return {
        "golden_version": chosen_version, "golden_fingerprint": fingerprint, "metric": metric,
        "runs": [{"id": r.id, "created": r.created, "tags": r.tags, "corpus": r.corpus_fingerprint[:12]}
                 for r in chosen],
        "retrievers": retrievers, "notes": notes,
    }
