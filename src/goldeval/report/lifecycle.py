"""What the page shows about the golden set's life, prepared in Python so the page only looks it up.

The page computes nothing (issue 8), so every number it shows about leakage, the synthetic-vs-hand gap
and the run history's trend is computed or formatted here:

- `leakage_view`: the leakage figures of `statistics.leakage` (`goldeval.synth.leakage`, issue 10) with
  their labels, in `FIGURES` order, formatted as `goldeval synth` prints them
  (`goldeval.synth.summary.format_figure`), and the measured metric gap between the hand-written and
  the synthetic questions from `statistics.breakdown` (the two sets never pooled);
- `trend_view`: each retriever's trend on one frozen golden-set version
  (`goldeval.history.trend.trend_payload`, issue 11), with the chart's axis and every value formatted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldeval.errors import InputError

MAX_QUESTIONS = 200
"""Per-question leakage rows the page lists (the leakiest first)."""


@dataclass
class ResultsMeta:
    """What the fixes and the trend need to know about the served results."""

    headline: list[str] = field(default_factory=list)
    golden_version: int | None = None
    golden_path: str = ""
    passages: dict[str, set[str]] = field(default_factory=dict)
    """Question id -> every passage retrieved for it (top of any retriever, at the results' level)."""


def results_meta(payload: Mapping[str, Any]) -> ResultsMeta:
    """The headline, golden-set version and path of the first file, and every question's retrieved passages
    over all files, of a page payload (`goldeval.report.page.results_payload`)."""
    files = payload.get("files") or []
    if not files:
        return ResultsMeta()
    first = files[0]["data"]
    golden = first.get("golden") or {}
    version = golden.get("version", (first.get("identity") or {}).get("golden_version"))
    meta = ResultsMeta(list(first.get("headline") or []), version if isinstance(version, int) else None,
                       str(golden.get("path") or ""))
    for f in files:
        level = f["data"].get("level", "doc")
        for r in f["data"].get("retrievers", []):
            for q in r.get("questions", []):
                keys = meta.passages.setdefault(q["id"], set())
                keys.update(h["id"] if level == "chunk" else h.get("doc") or h["id"] for h in q.get("top", []))
    return meta


def leakage_view(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The page's leakage section for one scorecard dict, or None when it has no leakage figures."""
    from goldeval.synth.leakage import COPY_WORDS, FIGURES, LeakageReport
    from goldeval.synth.summary import LABELS, PERCENT, format_figure

    statistics = data.get("statistics") or {}
    leakage = statistics.get("leakage") or {}
    if not leakage.get("sets"):
        return None
    report = LeakageReport.from_dict(leakage)
    kinds = sorted(report.sets, key=lambda k: (k != "synthetic", k != "hand", k))
    gap = report.gap()
    rows = [{"figure": name, "label": LABELS[name], "percent": name in PERCENT,
             "values": {kind: format_figure(name, getattr(report.sets[kind], name)) for kind in kinds},
             "gap": format_figure(name, gap.get(name), signed=True) if gap else None}
            for name in FIGURES]
    return {
        "kinds": kinds, "counts": {kind: report.sets[kind].questions for kind in kinds},
        "gap_of": ["synthetic", "hand"] if gap else None, "rows": rows,
        "retriever": report.retriever, "depth": report.depth, "copy_words": COPY_WORDS,
        "unmeasured": len(report.unmeasured), "questions": _questions(report),
        "metric_gap": metric_gap(data),
    }


def _questions(report: Any) -> list[dict[str, Any]]:
    """Each measured question's figures as text, the leakiest first (copied most, then most borrowed)."""
    from goldeval.synth.summary import format_figure

    ordered = sorted(report.questions, key=lambda q: (q.kind != "synthetic", -(q.content_share or 0.0),
                                                      -q.longest_copy, q.question_id))
    return [{"id": q.question_id, "kind": q.kind, "share": format_figure("content_share", q.content_share),
             "longest_copy": str(q.longest_copy), "phrase": q.copied_phrase, "heading": q.repeats_heading,
             "rank": str(q.source_rank) if q.source_rank else f">{report.depth}"}
            for q in ordered[:MAX_QUESTIONS]]


def metric_gap(data: Mapping[str, Any]) -> dict[str, Any]:
    """Retriever -> the headline metrics on the hand-written and on the synthetic questions, each over its
    own questions (never pooled), and synthetic minus hand in points; `beyond_noise` when the stats stage
    found the synthetic questions higher beyond noise (`statistics.breakdown.warnings`, with its interval)."""
    statistics = data.get("statistics") or {}
    breakdown = statistics.get("breakdown") or {}
    warnings = {(w.get("retriever"), w.get("metric")): w for w in breakdown.get("warnings") or []
                if isinstance(w, Mapping)}
    out: dict[str, Any] = {}
    for name, entry in (breakdown.get("retrievers") or {}).items():
        by_source = (entry or {}).get("by_source") or {}
        hand, synthetic = by_source.get("hand"), by_source.get("synthetic")
        if not hand or not synthetic:
            continue
        rows = []
        for metric in data.get("headline") or []:
            h, s = hand["metrics"].get(metric), synthetic["metrics"].get(metric)
            if h is None or s is None:
                continue
            warning = warnings.get((name, metric))
            rows.append({"metric": metric, "hand": f"{h:.3f}", "synthetic": f"{s:.3f}",
                         "hand_ci": _interval(hand.get("intervals", {}).get(metric)),
                         "synthetic_ci": _interval(synthetic.get("intervals", {}).get(metric)),
                         "gap": _points(s - h), "beyond_noise": warning is not None,
                         "gap_ci": f"{warning['ci'][0] * 100:+.1f} to {_points(warning['ci'][1])}" if warning else None})
        out[name] = {"n_hand": hand.get("n"), "n_synthetic": synthetic.get("n"), "rows": rows}
    return out


def _points(diff: float) -> str:
    return f"{diff * 100:+.1f} pt"


def _interval(ci: Any) -> str | None:
    return f"{ci[0]:.3f} to {ci[1]:.3f}" if isinstance(ci, list) and len(ci) == 2 else None


MAX_VERSIONS = 20
"""Frozen golden-set versions whose trends a page can switch between (the newest ones)."""


def trend_view(workspace: str | Path, metrics: Sequence[str], *, version: int | None = None) -> dict[str, Any] | None:
    """The trend of each metric in `metrics` over the recorded runs of one frozen golden-set version: the
    asked `version` when runs exist on it, else the newest frozen one (`trend_payload`'s rule); and the
    same for every frozen version with runs (`by_version`, the newest `MAX_VERSIONS`), for the page's
    version picker. None when the workspace has no history; `{"error": ...}` when it cannot be read."""
    from goldeval.history.db import History

    history = History.of(workspace)
    if not history.path.is_file() or not metrics:
        return None
    try:
        runs = history.runs()
        if not runs:
            return None
        if version is not None and not any(r.golden_version == version for r in runs):
            version = None
        frozen = sorted({r.golden_version for r in runs if r.golden_version is not None}, reverse=True)
        by_version = {str(v): _trends(history, metrics, v) for v in frozen[:MAX_VERSIONS]}
        shown = version if version is not None else frozen[0] if frozen else None  # `trend_payload`'s choice
        trends = by_version.get(str(shown)) or _trends(history, metrics, version)
    except InputError as exc:
        return {"error": str(exc)}
    first = trends[next(iter(trends))]
    return {"metrics": list(trends), "trends": trends, "golden_version": first["golden_version"],
            "versions": [int(v) for v in by_version], "by_version": by_version, "history": str(history.path)}


def _trends(history: Any, metrics: Sequence[str], version: int | None) -> dict[str, dict[str, Any]]:
    from goldeval.history.trend import trend_payload

    return {m: _chart(trend_payload(history, metric=m, version=version)) for m in dict.fromkeys(metrics)}


def _chart(trend: dict[str, Any]) -> dict[str, Any]:
    """The trend with what the chart draws: run labels, each point's text, the axis and its ticks."""
    for run in trend["runs"]:
        run["label"] = f"run {run['id']}" + (f" ({', '.join(run['tags'])})" if run["tags"] else "")
        run["date"] = str(run["created"])[:16].replace("T", " ")
    values: list[float] = []
    for points in trend["retrievers"].values():
        for p in points:
            p["text"] = f"{p['value']:.3f}" + (f" ({p['low']:.3f} to {p['high']:.3f})" if p["low"] is not None
                                               and p["high"] is not None else "")
            values.extend(v for v in (p["value"], p["low"], p["high"]) if v is not None)
    trend["axis"] = _axis(values)
    return trend


def _axis(values: Sequence[float]) -> dict[str, Any]:
    """The y axis: the values' range widened to tenths (at least 0.2 wide), ticks every 0.1 or 0.2."""
    if not values:
        return {"low": 0.0, "high": 1.0, "ticks": [{"value": t / 5, "text": f"{t / 5:.1f}"} for t in range(6)]}
    low, high = math.floor(min(values) * 10) / 10, math.ceil(max(values) * 10) / 10
    if high - low < 0.2:  # widened downwards first: metrics end at 1
        low = round(max(0.0, min(low, high - 0.2)), 10)
        high = round(max(high, low + 0.2), 10)
    step = 0.1
    if high - low > 0.5:  # ticks every 0.2: the ends on fifths
        step, low, high = 0.2, math.floor(low * 5 + 1e-9) / 5, math.ceil(high * 5 - 1e-9) / 5
    count = int(round((high - low) / step))
    ticks = [round(low + i * step, 10) for i in range(count + 1)]
    return {"low": low, "high": high, "ticks": [{"value": t, "text": f"{t:.1f}"} for t in ticks]}
