"""Terminal rendering of the statistics sections: verdicts and counts by default, details on request.

Computes nothing: it formats what `goldeval.compare` stored in `Scorecard.statistics` (the comparison,
breakdown, off-topic separability and miss counts) and in each question's `diagnosis`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import Scorecard
from goldeval.scorecard.statistics import Comparison, MetricComparison
from goldeval.stats.diagnosis import CAUSES


def _say(console: Console, text: str, style: str | None = None) -> None:
    console.print(escape(text), style=style, highlight=False, soft_wrap=True)


def render_stats(card: Scorecard, console: Console, *, details: bool = False) -> None:
    """All stats sections of a scorecard, short unless `details`."""
    stats = card.statistics
    if stats is None:
        return
    if stats.comparison:
        render_comparison(stats.comparison, console, metrics=card.headline, details=details)
    if stats.breakdown:
        render_breakdown(stats.breakdown, console, metrics=[str(m) for m in card.headline], details=details)
    if stats.off_topic:
        render_off_topic(stats.off_topic, console, details=details)
    if stats.diagnosis_counts:
        render_diagnosis_counts(stats.diagnosis_counts, console)


def systems_table(cards: Sequence[Scorecard], systems: Sequence[str], metrics: Sequence[Metric], n: int) -> Table:
    """Metrics as rows, compared systems as columns: mean and interval, as stored in the scorecards."""
    table = Table(title=f"{len(systems)} systems on {n} answerable questions", title_justify="left",
                  show_edge=False, pad_edge=False)
    table.add_column("metric", style="bold")
    results = [r for card in cards for r in card.retrievers]
    for name in systems:
        table.add_column(escape(name), justify="right")
    for metric in metrics:
        cells = []
        for r in results:
            value, ci = r.metrics.get(metric), r.intervals.get(metric)
            cell = "-" if value is None else f"{value:.3f}"
            cells.append(cell + (f" [dim]({ci[0]:.2f}–{ci[1]:.2f})[/dim]" if ci and value is not None else ""))
        table.add_row(str(metric), *cells)
    return table


def render_comparison(comparison: Comparison, console: Console, *, metrics: Sequence[Metric],
                      details: bool = False) -> None:
    """Verdicts: the first headline metric for every pair, other headline metrics when the difference is
    real; with `details`, every metric in a table. Says how many pairs were left out as within noise."""
    results = comparison.results
    if not results:
        return
    primary = metrics[0] if metrics else results[0].metric
    holm = " (Holm-corrected over the pairs)" if comparison.correction == "holm" else ""
    console.print("\n[bold]Comparison[/bold]" + holm)
    shown = [r for r in results if r.metric == primary or (r.metric in metrics and r.significant)]
    for r in shown:
        _say(console, "  " + r.verdict, "green" if r.significant else None)
    hidden = sum(1 for r in results if r.metric in metrics and r.metric != primary and not r.significant)
    if hidden:
        _say(console, f"  ({hidden} more verdict(s) on {', '.join(str(m) for m in metrics[1:])} within noise, "
                      "not shown)", "dim")
    detectable = next((r.detectable for r in results if r.metric == primary), None)
    if detectable:
        _say(console, "  " + detectable[0].upper() + detectable[1:] + ".", "dim")
    for note in comparison.notes:
        _say(console, "  " + note, "dim")
    if details:
        console.print(comparison_table(results))
    else:
        _say(console, "  (--details: every metric, with intervals, tests and detectable differences)", "dim")


def comparison_table(results: Sequence[MetricComparison]) -> Table:
    """Every metric and pair: better/worse/tied in questions, the difference in points with its interval,
    the test, raw and adjusted p, the minimum detectable difference and the questions needed."""
    table = Table(show_edge=False, pad_edge=False, box=None)
    for name in ("metric", "a vs b", "+/-/=", "diff [CI] (points)", "test", "p (adj.)", "MDD", "need"):
        table.add_column(name, justify="left" if name in ("metric", "a vs b", "test") else "right")
    for r in results:
        table.add_row(
            str(r.metric), escape(f"{r.a} vs {r.b}"), f"{r.wins}/{r.losses}/{r.ties}",
            f"{r.diff * 100:+.1f} [{r.ci[0] * 100:+.0f}, {r.ci[1] * 100:+.0f}]",
            "McNemar" if "McNemar" in r.test else "random.",
            f"{r.p:.2g}" + (f" ({r.p_adjusted:.2g})" if r.p_adjusted != r.p else ""),
            "-" if r.mdd is None else f"{r.mdd * 100:.0f}",
            "-" if r.questions_needed is None else str(r.questions_needed),
        )
    return table


def render_breakdown(breakdown: Mapping[str, Any], console: Console, *, metrics: Sequence[str],
                     details: bool = False) -> None:
    """Hand-written and synthetic side by side when both exist, the warnings always; tags with `details`."""
    retrievers = breakdown.get("retrievers", {})
    if breakdown.get("mixed_sources"):
        console.print("\n[bold]Hand-written vs synthetic questions[/bold] (never pooled into one number)")
        console.print(source_table(retrievers, metrics))
    for warning in breakdown.get("warnings", []):
        _say(console, "  warning: " + warning["text"], "yellow")
    if details and any(r.get("by_tag") for r in retrievers.values()):
        for metric in metrics:
            console.print(f"\n[bold]By tag: {escape(metric)}[/bold]")
            console.print(tag_table(retrievers, metric))


def _value(group: Mapping[str, Any], metric: str) -> str:
    value, ci = group["metrics"].get(metric), group["intervals"].get(metric)
    return "-" if value is None else f"{value:.3f} [dim]({ci[0]:.2f}–{ci[1]:.2f})[/dim]"


def source_table(retrievers: Mapping[str, Any], metrics: Sequence[str]) -> Table:
    """Rows: retriever and metric; columns: the sources (hand, synthetic, ...) with their sizes."""
    sources = list(dict.fromkeys(s for r in retrievers.values() for s in r.get("by_source", {})))
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("retriever", style="bold")
    table.add_column("metric")
    for source in sources:
        n = next((r["by_source"][source]["n"] for r in retrievers.values() if source in r.get("by_source", {})), 0)
        table.add_column(f"{escape(source)} ({n})", justify="right")
    for name, groups in retrievers.items():
        for i, metric in enumerate(metrics):
            by_source = groups.get("by_source", {})
            table.add_row(escape(name) if i == 0 else "", metric,
                          *(_value(by_source[s], metric) if s in by_source else "-" for s in sources))
    return table


def tag_table(retrievers: Mapping[str, Any], metric: str) -> Table:
    """Rows: tags with their sizes; columns: retrievers (as the headline table)."""
    tags = list(dict.fromkeys(t for r in retrievers.values() for t in r.get("by_tag", {})))
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("tag", style="bold")
    table.add_column("n", justify="right")
    for name in retrievers:
        table.add_column(escape(name), justify="right")
    for tag in tags:
        n = next((r["by_tag"][tag]["n"] for r in retrievers.values() if tag in r.get("by_tag", {})), 0)
        table.add_row(escape(tag), str(n), *(_value(r["by_tag"][tag], metric) if tag in r.get("by_tag", {}) else "-"
                                             for r in retrievers.values()))
    return table


def render_off_topic(report: Mapping[str, Any], console: Console, *, details: bool = False) -> None:
    """One verdict per retriever, the off-topic question that scored highest, and the note on scores."""
    retrievers = report.get("retrievers", {})
    if not any(s.get("n_off_topic") for s in retrievers.values()):
        advice = next((s["verdict"] for s in retrievers.values() if s.get("verdict")), None)
        if advice:  # the same advice for every retriever: once
            console.print()
            _say(console, advice[0].upper() + advice[1:] + ".", "dim")
        return
    console.print("\n[bold]Can a score threshold catch off-topic questions?[/bold]")
    for name, s in retrievers.items():
        _say(console, f"  {name}: {s['verdict']}")
        high = s.get("highest")
        if high:
            _say(console, f"    highest off-topic: {high['question_id']} ({high['score']:.4g}) "
                          f"{high['question']!r}, caught by {high['passage']}", "dim")
        if details and s.get("answerable") and s.get("off_topic"):
            a, o = s["answerable"], s["off_topic"]
            _say(console, f"    top-1 score answerable {a['min']:.4g} / {a['median']:.4g} / {a['max']:.4g} "
                          f"(min / median / max), off-topic {o['min']:.4g} / {o['median']:.4g} / {o['max']:.4g}",
                 "dim")
    _say(console, "  " + report.get("note", ""), "dim")


def render_diagnosis_counts(counts: Mapping[str, Mapping[str, int]], console: Console) -> None:
    """One line per retriever: its misses counted by cause."""
    lines = []
    for name, by_cause in counts.items():
        total = sum(by_cause.values())
        if not total:
            lines.append(f"  {name}: no misses")
            continue
        parts = [f"{n} {CAUSES[c][0] if c in CAUSES else c}" for c, n in sorted(by_cause.items(), key=lambda x: -x[1]) if n]
        lines.append(f"  {name}: {total} miss(es): " + ", ".join(parts))
    console.print("\n[bold]Why the misses missed[/bold] (--misses shows each with its evidence)")
    for line in lines:
        _say(console, line)
