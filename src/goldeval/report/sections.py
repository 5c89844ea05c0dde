"""Terminal rendering of the statistics sections: verdicts and counts by default, details on request.

Computes nothing: it formats what `goldeval.compare` stored in `Scorecard.statistics` (the comparison,
breakdown, off-topic separability and miss counts) and in each question's `diagnosis`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from goldeval.metrics.definitions import Metric
from goldeval.report.grid import UNMEASURED, GroupGrid, MetricGrid
from goldeval.report.layout import break_name, say
from goldeval.scorecard.model import Scorecard
from goldeval.scorecard.statistics import Comparison, MetricComparison
from goldeval.stats.diagnosis import CAUSES


def _say(console: Console, text: str, style: str | None = None) -> None:
    """A sentence wrapped at words for the console's width; its leading spaces are its indent."""
    stripped = text.lstrip(" ")
    say(console, stripped, style, indent=len(text) - len(stripped))


def render_stats(card: Scorecard, console: Console, *, details: bool = False) -> None:
    """All stats sections of a scorecard, short unless `details`."""
    stats = card.statistics
    if stats is None:
        return
    if stats.comparison:
        render_comparison(stats.comparison, console, metrics=card.headline, details=details)
    if stats.breakdown:
        render_breakdown(stats.breakdown, console, metrics=[str(m) for m in card.headline], details=details,
                         unmeasured=unmeasured_of(card))
    if stats.leakage:
        render_leakage(stats.leakage, console)
    if stats.off_topic:
        render_off_topic(stats.off_topic, console, details=details)
    if stats.diagnosis_counts:
        render_diagnosis(card, console)


def render_leakage(leakage: Mapping[str, Any], console: Console) -> None:
    """Synthetic questions beside hand-written ones: how much each borrows from its source passage."""
    from goldeval.synth.leakage import LeakageReport
    from goldeval.synth.summary import leakage_lines

    console.print("\n[bold]How much easier are the synthetic questions?[/bold] (leakage from their source "
                  "passages, beside the hand-written questions')")
    for line in leakage_lines(LeakageReport.from_dict(leakage)):
        _say(console, "  " + line)


def systems_table(cards: Sequence[Scorecard], systems: Sequence[str], metrics: Sequence[Metric],
                  questions: str) -> Group:
    """Metrics as rows, compared systems as columns: mean and interval, as stored in the scorecards,
    laid out for the width there is (`report.grid`); `questions` says on what (`Comparison.questions_text`)."""
    results = [r for card in cards for r in card.retrievers]
    title = Text(f"{len(systems)} systems on {questions}")
    return Group(title, MetricGrid(systems, results, metrics, counts=False, mark_best=False))


def render_comparison(comparison: Comparison, console: Console, *, metrics: Sequence[Metric],
                      details: bool = False) -> None:
    """Verdicts: the first headline metric for every pair, other headline metrics when the difference is
    real; with `details`, every metric in a table. Says how many pairs were left out as within noise."""
    results = comparison.results
    if not results:  # nothing compared (every metric unmeasurable for a pair, say): the notes say why
        for note in comparison.notes:
            _say(console, note, "dim")
        return
    compared = [m for m in metrics if any(r.metric == m for r in results)]  # an unmeasurable one is in none
    primary = compared[0] if compared else results[0].metric
    holm = " (Holm-corrected over the pairs)" if comparison.correction == "holm" else ""
    console.print("\n[bold]Comparison[/bold]" + holm)
    shown = [r for r in results if r.metric == primary or (r.metric in metrics and r.significant)]
    for r in shown:
        _say(console, "  " + r.verdict, "green" if r.significant else None)
    hidden = [r for r in results if r.metric in metrics and r.metric != primary and not r.significant]
    if hidden:
        on = ", ".join(str(m) for m in dict.fromkeys(r.metric for r in hidden))
        _say(console, f"  ({len(hidden)} more verdict(s) on {on} within noise, not shown)", "dim")
    detectable = next((r.detectable for r in results if r.metric == primary), None)
    if detectable:
        _say(console, "  " + detectable[0].upper() + detectable[1:] + ".", "dim")
    for note in comparison.notes:
        _say(console, "  " + note, "dim")
    if details:
        console.print(comparison_tables(results))
    else:
        _say(console, "  (--details: every metric, with intervals, tests and detectable differences)", "dim")


def comparison_tables(results: Sequence[MetricComparison]) -> Group:
    """Every metric and pair, one table per pair under its names (the pair column would not fit 80
    columns): better/worse/tied in questions, the difference in points with its interval, the test,
    raw and adjusted p, the minimum detectable difference and the questions needed."""
    parts: list[Text | Table] = []
    for pair in dict.fromkeys((r.a, r.b) for r in results):
        parts.append(Text(f"\n{pair[0]} vs {pair[1]}", style="bold"))
        table = Table(show_edge=False, pad_edge=False, box=None)
        for name in ("metric", "+/-/=", "diff [CI] (points)", "test", "p (adj.)", "MDD", "need"):
            table.add_column(name, justify="left" if name in ("metric", "test") else "right", no_wrap=True)
        for r in results:
            if (r.a, r.b) != pair:
                continue
            table.add_row(
                str(r.metric), f"{r.wins}/{r.losses}/{r.ties}",
                f"{r.diff * 100:+.1f} [{r.ci[0] * 100:+.0f}, {r.ci[1] * 100:+.0f}]",
                "McNemar" if "McNemar" in r.test else "random.",
                f"{r.p:.2g}" + (f" ({r.p_adjusted:.2g})" if r.p_adjusted != r.p else ""),
                "-" if r.mdd is None else f"{r.mdd * 100:.0f}",
                _needed(r.questions_needed),
            )
        parts.append(table)
    return Group(*parts)


def _needed(n: int | None) -> str:
    """Questions needed to detect the difference; beyond 100,000 the exact count means nothing."""
    return "-" if n is None else str(n) if n <= 100_000 else ">100k"


def unmeasured_of(card: Scorecard) -> dict[str, list[str]]:
    """Retriever -> the metrics past the list it cut short (`RetrieverResult.unmeasurable`), as named in
    the breakdown: shown `n/a` in its tables as in the headline's."""
    return {r.name: [str(m) for m in r.unmeasurable] for r in card.retrievers}


def render_breakdown(breakdown: Mapping[str, Any], console: Console, *, metrics: Sequence[str],
                     details: bool = False, unmeasured: Mapping[str, Sequence[str]] | None = None) -> None:
    """Hand-written and synthetic side by side when both exist, the warnings always; tags with `details`."""
    retrievers = breakdown.get("retrievers", {})
    if breakdown.get("mixed_sources"):
        console.print("\n[bold]Hand-written vs synthetic questions[/bold] (never pooled into one number)")
        console.print(source_table(retrievers, metrics, unmeasured or {}))
        if _too_small(retrievers, "by_source"):
            _say(console, "  A group without an interval is too small for one.", "dim")
    for warning in breakdown.get("warnings", []):
        _say(console, "  warning: " + warning["text"], "yellow")
    if details and any(r.get("by_tag") for r in retrievers.values()):
        for metric in metrics:
            console.print(f"\n[bold]By tag: {escape(metric)}[/bold]")
            console.print(tag_table(retrievers, metric, unmeasured or {}))


def _value(group: Mapping[str, Any], metric: str) -> str:
    """The value with its interval; a group too small for an interval has none (issue 13)."""
    value, ci = group["metrics"].get(metric), group.get("intervals", {}).get(metric)
    if value is None:
        return "-"
    return f"{value:.3f}" + (f" [dim]({ci[0]:.2f}–{ci[1]:.2f})[/dim]" if ci else "")


def _too_small(retrievers: Mapping[str, Any], key: str) -> bool:
    return any(not g.get("intervals") for r in retrievers.values() for g in r.get(key, {}).values())


def source_table(retrievers: Mapping[str, Any], metrics: Sequence[str],
                 unmeasured: Mapping[str, Sequence[str]] | None = None) -> Table:
    """Rows: retriever and metric; columns: the sources (hand, synthetic, ...) with their sizes; `n/a` where
    the metric is past the list the retriever cut short (`unmeasured`)."""
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
            gone = metric in (unmeasured or {}).get(name, ())
            table.add_row(escape(break_name(name, 32)) if i == 0 else "", metric,
                          *(UNMEASURED if gone else _value(by_source[s], metric) if s in by_source else "-"
                            for s in sources))
    return table


def tag_table(retrievers: Mapping[str, Any], metric: str,
              unmeasured: Mapping[str, Sequence[str]] | None = None) -> GroupGrid:
    """Rows: tags with their sizes; columns: retrievers (as the headline table), laid out for the width; a
    retriever that cut its lists short of `metric` shows `n/a` (`unmeasured_of`)."""
    tags = list(dict.fromkeys(t for r in retrievers.values() for t in r.get("by_tag", {})))
    sizes = [next((r["by_tag"][tag]["n"] for r in retrievers.values() if tag in r.get("by_tag", {})), 0) for tag in tags]
    values = [[_pair(r.get("by_tag", {}).get(tag), metric) for r in retrievers.values()] for tag in tags]
    gone = [name for name in retrievers if metric in (unmeasured or {}).get(name, ())]
    return GroupGrid("tag", list(retrievers), tags, sizes, values, gone)


def _pair(group: Mapping[str, Any] | None, metric: str) -> tuple[float | None, Any]:
    if not group:
        return None, None
    return group["metrics"].get(metric), group.get("intervals", {}).get(metric)


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


def render_diagnosis(card: Scorecard, console: Console) -> None:
    """Misses counted by cause per retriever, the advice once per cause, the questions every retriever
    missed and the hub documents (issue 13: the same advice used to be printed once per miss)."""
    stats = card.statistics
    if stats is None:
        return
    k = card.headline_k
    console.print(f"\n[bold]Why the misses missed at k={k}[/bold] (--misses lists each with its evidence)",
                  highlight=False)
    for name, by_cause in stats.diagnosis_counts.items():
        beside = stats.diagnosis_beside.get(name)
        aside = f" (beside the headline, synthetic questions: {misses_text(beside)})" if beside and any(beside.values()) else ""
        _say(console, f"  {name}: {misses_text(by_cause)}{aside}")
    seen = [c for c in CAUSES if any(by.get(c) for by in stats.diagnosis_counts.values())]
    if seen:
        _say(console, "  What to do, by cause:")
    for cause in seen:
        _say(console, f"    {CAUSES[cause][0]}: {CAUSES[cause][1]}", "dim")
    if stats.missed_by_all:
        _say(console, f"  Missed by every retriever ({len(stats.missed_by_all)}): {', '.join(stats.missed_by_all)}")
    for name, hubs in stats.hubs.items():
        for hub in hubs:
            _say(console, f"  Hub under {name}: {hub_sentence(hub)}", "yellow")


def misses_text(by_cause: Mapping[str, int]) -> str:
    """`6 miss(es): 4 hub document outranked, 2 cut short`, or `no misses`."""
    total = sum(by_cause.values())
    parts = [f"{n} {CAUSES[c][0] if c in CAUSES else c}" for c, n in sorted(by_cause.items(), key=lambda x: -x[1]) if n]
    return f"{total} miss(es): " + ", ".join(parts) if total else "no misses"


def hub_sentence(hub: Mapping[str, Any], limit: int = 12) -> str:
    """`pydoc-topics comes first for 12 of 140 questions it does not answer: q1, q2, ...`"""
    ids = list(hub["questions"])
    shown = ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
    return f"{hub['doc']} comes first for {hub['wrong']} of {hub['searched']} questions it does not answer: {shown}"
