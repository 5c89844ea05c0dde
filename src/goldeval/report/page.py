"""What the page reads: its static files (package data) and the results payload as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from goldeval.errors import InputError

STATIC_FILES = ("index.html", "app.js", "style.css")


def static_text(name: str) -> str:
    """The text of one of the page's files shipped as package data (index.html, app.js, style.css)."""
    if name not in STATIC_FILES:
        raise KeyError(name)
    return resources.files("goldeval.report").joinpath("static", name).read_text(encoding="utf-8")


def results_payload(
    sources: Sequence[str | Path | Mapping[str, Any]], names: Sequence[str] | None = None
) -> dict[str, Any]:
    """The JSON the page reads: `{"files": [{"name": ..., "data": <scorecard dict>}, ...]}`.

    Each source is a results file path (read and checked with `Scorecard.load`) or a scorecard dict
    (`Scorecard.to_dict()`); both go through `Scorecard` so the page always sees the documented keys.
    Several sources are several result files: the page can compare retrievers across them.
    """
    from goldeval.scorecard.model import Scorecard

    if not sources:
        raise InputError("no results to show", hint="pass RESULTS.json, or --corpus and --golden to run an evaluation")
    if names is not None and len(names) != len(sources):
        raise ValueError("names must match sources one to one")
    files: list[dict[str, Any]] = []
    for i, source in enumerate(sources):
        if isinstance(source, Mapping):
            data = Scorecard.from_dict(dict(source)).to_dict()
            default = f"results {i + 1}"
        else:
            data = Scorecard.load(source).to_dict()
            default = Path(source).name
        files.append({"name": names[i] if names else default, "data": data})
    seen: dict[str, int] = {}
    for f in files:
        name = str(f["name"])
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            f["name"] = f"{name} ({seen[name]})"
    return {"files": files}


def payload_json(payload: Mapping[str, Any]) -> str:
    """JSON that a browser's `JSON.parse` accepts: NaN and infinities (which Python's json writes
    but JavaScript rejects) become null."""
    return json.dumps(_finite(payload), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
