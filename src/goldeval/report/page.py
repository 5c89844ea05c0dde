"""What the page reads: its static files (package data) and the results payload as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldeval.errors import InputError
from goldeval.textsafe import redact

if TYPE_CHECKING:
    from goldeval.scorecard.model import Scorecard

SCRIPTS = ("dom.js", "data.js", "metrics.js", "plot.js", "questions.js", "panels.js", "side.js", "lifecycle.js",
           "fixes.js", "judges.js", "export.js", "app.js")
"""The page's scripts, in the order index.html loads them (helpers, lookups, views, then the app)."""
STATIC_FILES = ("index.html", "style.css", *SCRIPTS)


def static_text(name: str) -> str:
    """The text of one of the page's files shipped as package data (`STATIC_FILES`)."""
    if name not in STATIC_FILES:
        raise KeyError(name)
    return resources.files("goldeval.report").joinpath("static", name).read_text(encoding="utf-8")


def results_payload(
    sources: Sequence[str | Path | Mapping[str, Any] | Scorecard], names: Sequence[str] | None = None
) -> dict[str, Any]:
    """The JSON the page reads: `{"files": [{"name": ..., "data": <scorecard dict>}, ...], "differences": ...}`.

    Each source is a results file path (read and checked with `Scorecard.load`), a scorecard dict
    (`Scorecard.to_dict()`) or a `Scorecard` already loaded (one read of a file serves the page and the pool);
    all go through `Scorecard` so the page always sees the documented keys.
    Several sources are several result files: the page can compare retrievers across them.
    `differences["i|j"]` is B − A for the page's runs i (A) and j (B), numbered file by file in retriever
    order (`goldeval.scorecard.curves.differences`): the Compare tab shows them, computing nothing.
    """
    from goldeval.scorecard.curves import differences
    from goldeval.scorecard.model import Scorecard

    if not sources:
        raise InputError("no results to show", hint="pass RESULTS.json, or --corpus and --golden to run an evaluation")
    if names is not None and len(names) != len(sources):
        raise ValueError("names must match sources one to one")
    files: list[dict[str, Any]] = []
    cards: list[Scorecard] = []
    for i, source in enumerate(sources):
        if isinstance(source, Scorecard):
            card, default = source, f"results {i + 1}"
        elif isinstance(source, Mapping):
            card = Scorecard.from_dict(dict(source))
            default = f"results {i + 1}"
        else:
            card = Scorecard.load(source)
            default = Path(source).name
        files.append({"name": names[i] if names else default, "data": page_dict(card)})
        cards.append(card)
    seen: dict[str, int] = {}
    for f in files:
        name = str(f["name"])
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            f["name"] = f"{name} ({seen[name]})"
    runs = [r for card in cards for r in card.retrievers]
    return {"files": files, "differences": {f"{i}|{j}": differences(a, b) for i, a in enumerate(runs)
                                            for j, b in enumerate(runs) if i != j}}


def page_dict(card: Scorecard) -> dict[str, Any]:
    """`card.to_dict()`, completed where an older file lacks what the page looks up (the page computes
    nothing itself, issue 8):
    - the off-topic ROC table of each retriever with its denominators (goldset 0.1 wrote the threshold
      and AUC, not every cut), recomputed by `goldeval.stats.offtopic` from the stored top-1 scores of
      the headline's questions (a file that pooled its synthetic ones keeps its own threshold and verdict);
    - the `k` of each miss diagnosis (goldset 0.1 diagnosed at the largest computed k and did not say so);
    - `views`: what the page shows prepared in Python (`goldeval.report.lifecycle`): the leakage figures
      with their labels and the synthetic-vs-hand metric gap, formatted; how many results came back and
      what that leaves unmeasured, the question's words in each snippet, and what each API model used and
      cost (`goldeval.report.page_views`).
    """
    from goldeval.report.lifecycle import leakage_view
    from goldeval.report.page_views import api_view, returned_view, words_view
    from goldeval.stats.offtopic import separability

    data = card.to_dict()
    off_topic = (data.get("statistics") or {}).get("off_topic") or {}
    by_name = {r.name: r for r in card.retrievers}
    for name, entry in (off_topic.get("retrievers") or {}).items():
        if not isinstance(entry, dict) or entry.get("auc") is None or name not in by_name:
            continue
        if "n_answerable" not in (entry.get("roc") or {}):
            entry["roc"] = separability(by_name[name]).get("roc")
    largest = max(card.k) if card.k else None
    for r in data["retrievers"]:
        for q in r["questions"]:
            if isinstance(q.get("diagnosis"), dict) and q["diagnosis"].get("k") is None:
                q["diagnosis"]["k"] = largest
    leakage = leakage_view(data)
    data["views"] = {"leakage": leakage} if leakage else {}
    data["views"].update(returned=returned_view(card), words=words_view(card), api=api_view(card))
    return data


def payload_json(payload: Mapping[str, Any]) -> str:
    """JSON that a browser's `JSON.parse` accepts: NaN and infinities (which Python's json writes
    but JavaScript rejects) become null."""
    return redact(json.dumps(_finite(payload), ensure_ascii=False, allow_nan=False, separators=(",", ":")))


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
