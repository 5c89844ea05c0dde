"""A sweep file: what to evaluate (corpus, golden set, cut-offs) and the grid, in TOML.

    corpus = "data/cranfield"        # paths are relative to the sweep file
    golden = "data/cranfield"
    k = [1, 5, 10]
    headline = "ndcg@10"

    [grid]
    chunking = ["none", "600:100"]
    retriever = ["hybrid"]
    model = ["minilm-l3", "wordllama"]
    fusion = ["norm"]
    weight = [0.3, 0.5, 0.7]

    [options]                        # retriever options for every retriever that declares them
    k1 = 1.2

The CLI's flags override the file's values (docs/sweep.md).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from goldeval.corpus.files import read_toml
from goldeval.errors import InputError
from goldeval.limits import SETTINGS_FILE_BYTES, check_int, check_number
from goldeval.sweep.grid import Grid, grid_from_mapping

SETTINGS = ("corpus", "golden", "k", "depth", "headline", "level", "metrics", "seed", "resamples", "confidence")


@dataclass(frozen=True)
class Settings:
    """What every cell is evaluated on and how it is scored; the grid says what varies."""

    corpus: Path | None = None
    golden: Path | None = None
    k: tuple[int, ...] = (1, 5, 10)
    depth: int = 100
    headline: str | None = None
    level: str = "doc"
    metrics: tuple[str, ...] = ()
    """Extra metrics beyond the defaults (e.g. `recall@100`)."""
    options: dict[str, object] = field(default_factory=dict)
    """Shared retriever options (`--option KEY=VALUE`); a spec's own values win."""
    seed: int = 0
    resamples: int = 10_000
    confidence: float = 0.95


@dataclass(frozen=True)
class SweepFile:
    path: Path
    settings: Settings
    grid: Grid


def load_sweep_file(path: str | Path) -> SweepFile:
    """Read and check a sweep TOML file; a bad key or value names the file and the fix."""
    path = Path(path)
    data = read_toml(path, "sweep file", hint="`goldeval docs sweep` shows a sweep file", max_bytes=SETTINGS_FILE_BYTES)
    known = (*SETTINGS, "grid", "options")
    unknown = [key for key in data if key not in known]
    if unknown:
        near = difflib.get_close_matches(unknown[0], known, n=1)
        raise InputError(f"unknown key {unknown[0]!r}" + (f"; did you mean {near[0]!r}?" if near else ""),
                         path=path, value=unknown[0], hint="keys: " + ", ".join(known))
    grid = data.get("grid", {})
    options = data.get("options", {})
    if not isinstance(grid, dict) or not isinstance(options, dict):
        raise InputError("[grid] and [options] must be tables", path=path, hint="write them as [grid] and [options]")
    settings = settings_from_mapping({k: v for k, v in data.items() if k in SETTINGS}, base=path.parent, where=str(path))
    return SweepFile(path, replace(settings, options=dict(options)), grid_from_mapping(grid, where=f"{path}: [grid]"))


def settings_from_mapping(data: dict[str, Any], *, base: Path, where: str, into: Settings | None = None) -> Settings:
    """Settings from a mapping (the file's top level, or the CLI's flags), checked; paths relative to `base`."""
    out = into or Settings()
    changes: dict[str, Any] = {}
    for key in ("corpus", "golden"):
        if data.get(key) is not None:
            given = Path(str(data[key])).expanduser()
            changes[key] = Path(os.path.normpath(given if given.is_absolute() else base / given))
    if data.get("k") is not None:
        changes["k"] = _ks(data["k"], where)
    for key in ("depth", "seed", "resamples"):  # the bounds of goldeval.limits, as the flags have
        if data.get(key) is not None:
            changes[key] = check_int(key, data[key], what=f"{where}: {key}")
    if data.get("confidence") is not None:
        changes["confidence"] = float(check_number("confidence", data["confidence"], what=f"{where}: confidence"))
    if data.get("headline") is not None:
        changes["headline"] = str(data["headline"])
    if data.get("level") is not None:
        if data["level"] not in ("doc", "chunk"):
            raise InputError(f"{where}: level must be doc or chunk, not {data['level']!r}", value=data["level"],
                             hint="level = \"doc\"")
        changes["level"] = data["level"]
    if data.get("metrics") is not None:
        metrics = data["metrics"]
        changes["metrics"] = tuple(str(m) for m in (metrics if isinstance(metrics, (list, tuple)) else [metrics]))
    return replace(out, **changes)


def _ks(value: object, where: str) -> tuple[int, ...]:
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [value]
    try:
        ks = sorted({int(str(k).strip()) for k in items if str(k).strip()})
    except ValueError:
        raise InputError(f"{where}: cannot read k {value!r}", value=value, hint="a list of positive integers, e.g. [1, 5, 10]") from None
    if not ks or ks[0] < 1:
        raise InputError(f"{where}: k needs positive integers, got {value!r}", value=value, hint="e.g. k = [1, 5, 10]")
    return tuple(check_int("k", k, what=f"{where}: k") for k in ks)
