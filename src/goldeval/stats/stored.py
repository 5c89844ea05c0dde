"""The statistics of an unchanged scorecard, kept in the workspace: `compare` is a pure function of the
scorecard, its settings, the passages and the golden set, so its output is stored under a key of all of
them and read back instead of resampling again (an unchanged `goldeval eval` re-runs in under a second).

The key holds the scorecard as its results JSON (less when and where it ran, how long retrievers
took and its notes: those change from run to run and no statistic reads them), every setting of
`compare`, the passages' fingerprint, the golden set's fingerprint, and the source of the code that
computes them (statistics, scorecard, leakage, metric names), so a change to any of them is a miss.
Kept under `<workspace>/stats/<key>.json`, written atomically; a file that does not read is a miss,
computed and written again. The sweep keeps its statistics (intervals over every configuration, each
tested against the best) here too: its merged scorecard through the same `stats_key`, and its own
fields through `read_kept_stats` / `write_kept_stats` (`goldeval.sweep.score`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from goldeval.corpus.model import Passage
from goldeval.fingerprint import fingerprint
from goldeval.golden.model import GoldenSet
from goldeval.runstore import source_digest
from goldeval.scorecard.io import scorecard_to_dict
from goldeval.scorecard.model import Scorecard
from goldeval.scorecard.statistics import Statistics
from goldeval.store.kept import read_kept, write_kept
from goldeval.store.workspace import Workspace

T = TypeVar("T")

FORMAT = 2
"""Part of the key; 2: kept files carry their checksum (`goldeval.store.kept`), so format 1 files are never read."""


def stats_key(card: Scorecard, settings: Mapping[str, Any], passages: Sequence[Passage] | None,
              golden: GoldenSet | None) -> str:  # fmt: skip
    """What `compare(card, **settings, passages=..., golden=...)` depends on, as one key."""
    from goldeval.evaluation import passages_fingerprint

    data = scorecard_to_dict(card)
    for changing in ("identity", "created", "notes"):  # when and where it ran, and what was read from a cache
        data.pop(changing, None)
    for r in data.get("retrievers", []):
        r.pop("seconds", None)
    return fingerprint(["stats", FORMAT, data, dict(settings), passages_fingerprint(passages) if passages else None,
                        golden.fingerprint() if golden is not None else None,
                        source_digest("stats", "scorecard", "synth/leakage.py", "words.py", "ids.py",
                                      "metrics/definitions.py")])


def read_stats(workspace: str | Path, key: str, card: Scorecard) -> bool:
    """Fill `card` with the statistics kept under `key`; False when none are (or they do not read)."""
    kept = read_kept_stats(workspace, key, lambda d: _parse(d, card))
    if kept is None:
        return False
    statistics, intervals, diagnosis = kept
    for r, shown, said in zip(card.retrievers, intervals, diagnosis, strict=True):
        r.intervals = shown
        for q in r.questions:
            q.diagnosis = said.get(q.id)
    card.statistics = statistics
    return True


def _parse(data: dict[str, Any], card: Scorecard) -> tuple[Statistics, list[dict[Any, tuple[float, float]]],
                                                          list[dict[str, Any]]]:  # fmt: skip
    """The kept statistics, and each retriever's intervals and diagnoses, read whole before `card` changes."""
    intervals = [{m: (float(v[0]), float(v[1])) for m in r.metrics if (v := data["intervals"][r.name].get(str(m)))}
                 for r in card.retrievers]
    diagnosis = [dict(data["diagnosis"][r.name]) for r in card.retrievers]
    return Statistics.from_dict(data["statistics"]), intervals, diagnosis


def write_stats(workspace: str | Path, key: str, card: Scorecard) -> None:
    """Keep the statistics `compare` filled into `card` (a warning when they cannot be: `store.kept`)."""
    if card.statistics is None:
        return
    data = {
        "statistics": card.statistics.to_dict(),
        "intervals": {r.name: {str(m): list(v) for m, v in r.intervals.items()} for r in card.retrievers},
        "diagnosis": {r.name: {q.id: q.diagnosis for q in r.questions if q.diagnosis is not None}
                      for r in card.retrievers},
    }
    write_kept_stats(workspace, key, data)


def read_kept_stats(workspace: str | Path, key: str, parse: Callable[[dict[str, Any]], T]) -> T | None:
    """The statistics kept under `key`, read by `parse` (whose ValueError/KeyError means they do not
    read), or None: the one place kept statistics are read."""
    def checked(data: dict[str, Any]) -> T:
        if data.get("format") != FORMAT:
            raise ValueError(f"kept statistics format {data.get('format')!r}, expected {FORMAT}")
        return parse(data)

    return read_kept(_path(workspace, key), "kept statistics file", "computing them again", checked)


def write_kept_stats(workspace: str | Path, key: str, data: Mapping[str, Any]) -> None:
    """Keep `data` (statistics computed for `key`) with the format they are read back by."""
    write_kept(_path(workspace, key), {"format": FORMAT, **data}, "the statistics were not kept for next time")


def _path(workspace: str | Path, key: str) -> Path:
    return Workspace.at(workspace).root / "stats" / f"{key}.json"
