"""A sweep in the terminal: one row per configuration, best first, then what the numbers say.

Computes nothing: every value, interval, verdict and front comes from the SweepResult
(`goldeval.sweep.analysis` computed them). Labels are printed as text, never read as markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from goldeval.sweep.cost import Cost
from goldeval.sweep.model import CellResult, SweepResult
from goldeval.textsafe import safe_console

AXIS_NAMES = {"latency_p50_ms": "p50 latency", "latency_p95_ms": "p95 latency", "index_seconds": "index time",
              "embedding_seconds": "embedding time", "index_bytes": "index size", "api_dollars": "API cost"}


def render_sweep(result: SweepResult, console: Console | None = None, *, limit: int | None = None) -> None:
    """Print the configurations table (the first `limit` rows when given) and the summary under it.

    The full table (every headline metric, every cost) when the console is wide enough; else the
    primary metric, the standing against the best and the p50 latency, the configuration wrapping.
    """
    console = console or safe_console()  # specs and dial values come from the user's grid
    rows = result.cells if limit is None else result.cells[:limit]
    full = console.width >= _full_width(result, rows)
    console.print(_table(result, rows, full=full))
    if not full:
        console.print("(a narrow terminal: --json or --html OUT show every metric and cost)", style="dim")
    if limit is not None and len(result.cells) > limit:
        console.print(f"... and {len(result.cells) - limit} more (the JSON and the HTML view have every one)")
    for line in summary_lines(result):
        console.print(escape(line), highlight=False)  # wrapped at spaces to the width


def _full_width(result: SweepResult, rows: list[CellResult]) -> int:
    label = max((len(c.label) for c in rows), default=10)
    widths = [3, label, 19, *(6 for _ in result.headline[1:]), 20, 7, 7, 7, 7, 9, 5]
    return sum(widths) + 3 * (len(widths) - 1)


def _table(result: SweepResult, rows: list[CellResult], *, full: bool) -> Table:
    primary = result.primary
    others = list(result.headline[1:]) if full else []
    table = Table(title=f"goldeval sweep: {len(result.cells)} configurations, ranked by {primary}",
                  title_justify="left", header_style="bold", show_edge=False, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("configuration", ratio=1)
    table.add_column(f"{primary} (CI)" if full else str(primary), justify="right", no_wrap=True)
    for metric in others:
        table.add_column(str(metric), justify="right", no_wrap=True)
    table.add_column("vs best", no_wrap=True)
    for name in ("p50 ms", "p95 ms", "index s", "embed s", "size") if full else ("p50 ms",):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("front", justify="center", no_wrap=True)
    for rank, cell in enumerate(rows, start=1):
        costs = _costs(cell.cost) if full else _costs(cell.cost)[:1]
        table.add_row(str(rank), escape(cell.label), _with_ci(cell, primary) if full else _value(cell.metrics.get(primary)),
                      *(_value(cell.metrics.get(m)) for m in others), escape(_vs_best(cell)), *costs,
                      "*" if cell.pareto else "")
    return table


def summary_lines(result: SweepResult) -> list[str]:
    """The sentences under the table: the best, how many are within noise, the fronts, the cache."""
    if not result.cells:
        return []
    best = result.cells[0]
    primary = result.primary
    lines = [f"best on {primary}: {best.label} ({_with_ci(best, primary)})"]
    n_tests = int(result.statistics.get("n_tests", 0))
    if n_tests:
        within = int(result.statistics.get("within_noise", 0))
        lines.append(f"{within} of the other {n_tests} configuration(s) are within noise of it (each tested against "
                     f"the best on the same questions, Holm's correction over the {n_tests} tests); "
                     f"{n_tests - within} are worse beyond noise")
    for axis in ("latency_p50_ms", "index_seconds"):
        front = result.pareto.get(axis) or []
        if front:
            steps = " -> ".join(f"{label} ({_axis_value(result.cell(label).cost, axis)}, "
                                f"{_value(result.cell(label).metrics.get(primary))})" for label in front)
            lines.append(f"Pareto front, {primary} against {AXIS_NAMES[axis]}: {steps}")
    lines.append(_cache_line(result))
    return lines


def _cache_line(result: SweepResult) -> str:
    runs = result.stages.get("runs", {})
    embedded = result.stages.get("embeddings", {}).get("texts_embedded", 0)
    wall = result.stages.get("wall_seconds", {})
    cached, computed = runs.get("cached", 0), runs.get("computed", 0)
    if not computed and not embedded:
        head = f"served from the cache: all {cached} stored run(s), nothing searched or embedded"
    else:
        head = (f"computed {computed} run(s) ({runs.get('questions_searched', 0)} questions searched) and embedded "
                f"{embedded} text(s); {cached} run(s) came from the cache")
    timing = ", ".join(f"{stage} {seconds:.1f}s" for stage, seconds in wall.items() if stage != "stages")
    return f"{head}{'; ' + timing if timing else ''}"


def _with_ci(cell: CellResult, metric: object) -> str:
    value = cell.metrics.get(metric)  # type: ignore[call-overload]
    ci = cell.intervals.get(metric)  # type: ignore[call-overload]
    return _value(value) + (f" ({ci[0]:.3f}-{ci[1]:.3f})" if ci else "")


def _vs_best(cell: CellResult) -> str:
    if cell.vs_best is None:
        return "best"
    v = cell.vs_best
    return (f"within noise ({v.diff * 100:+.1f})" if v.within_noise else f"worse: {v.diff * 100:+.1f} pts")


def _costs(cost: Cost) -> list[str]:
    return [_number(cost.latency_p50_ms, 1), _number(cost.latency_p95_ms, 1), _number(cost.index_seconds, 2),
            ("~" if cost.embedding_estimated else "") + _number(cost.embedding_seconds, 1), _size(cost.index_bytes)]


def _axis_value(cost: Cost, axis: str) -> str:
    value = cost.value(axis)
    if axis == "index_bytes":
        return _size(cost.index_bytes)
    unit = " ms" if axis.endswith("_ms") else " s"
    return _number(value, 1 if unit == " ms" else 2) + unit


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"
