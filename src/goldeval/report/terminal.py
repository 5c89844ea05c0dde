"""The scorecard in the terminal: a retrievers x metrics table, and every miss on request.

Computes nothing: it formats what the Scorecard holds.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from goldeval.metrics.definitions import Metric, default_metrics
from goldeval.scorecard.model import QuestionResult, RetrieverResult, Scorecard


def table_metrics(card: Scorecard) -> list[Metric]:
    """The rows of the scorecard table (terminal and Markdown): the headline metrics first, then hit at
    every k, nDCG and recall at the largest k, precision@1, MAP, and any metric asked for by name."""
    top = max(card.k) if card.k else 10
    wanted = [*card.headline, *(Metric("hit", k) for k in card.k), Metric("mrr"), Metric("ndcg", top),
              Metric("recall", top), Metric("precision", 1), Metric("map")]
    defaults = set(default_metrics(tuple(card.k))) if card.k else set()
    asked = [m for m in card.metrics if m not in defaults]  # --metric extras, e.g. recall@100
    return [m for m in dict.fromkeys(wanted + asked) if m in card.metrics]


def render_table(card: Scorecard, console: Console) -> None:
    """Metrics as rows, retrievers as columns: fits a laptop terminal with intervals beside values."""
    if not card.retrievers:
        console.print("goldeval: no retrievers were evaluated", style="bold red")
        return
    columns = table_metrics(card)
    console.print(f"[bold]{escape(_title(card))}[/bold]", highlight=False)
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("metric", style="bold")
    for r in card.retrievers:
        table.add_column(escape(r.name), justify="right")
    first = card.retrievers[0] if card.retrievers else None
    if first is not None:
        table.add_row("questions", *[f"{len(r.answerable)}" for r in card.retrievers], style="dim")
    for m in columns:
        best = max(r.metrics.get(m, 0.0) for r in card.retrievers)
        table.add_row(str(m), *[_cell(r, m, bold=len(card.retrievers) > 1 and r.metrics.get(m) == best)
                           for r in card.retrievers])
    console.print(table)
    notes = [_errors_line(r) for r in card.retrievers if r.n_errors]
    if first is not None and first.off_topic:
        notes.append(f"{len(first.off_topic)} off-topic question(s) (no expected answer) are counted apart, "
                     "never averaged in as zeros.")
    if any(r.intervals for r in card.retrievers):
        notes.append("(low–high): 95% bootstrap interval over the answerable questions; best value in green.")
    from goldeval.report.judged import judged_lines

    notes.extend(judged_lines(card))  # judged@k, metric ranges, label fixes since the last version
    for line in notes:
        console.print(line, style="dim", highlight=False)


def _title(card: Scorecard) -> str:
    golden = Path(card.golden.get("path") or "golden set").name
    corpus = card.corpus.get("name") or card.corpus.get("path") or ""
    where = f" on {corpus}" if corpus else ""
    return f"goldeval scorecard: {golden}{where} ({card.level} level, top {card.depth} retrieved)"


def _cell(r: RetrieverResult, metric: Metric, *, bold: bool) -> str:
    value = r.metrics.get(metric)
    if value is None:
        return "-"
    text = f"{value:.3f}"
    if bold:
        text = f"[bold green]{text}[/bold green]"
    interval = r.intervals.get(metric)
    if interval:
        text += f" [dim]({interval[0]:.2f}–{interval[1]:.2f})[/dim]"
    return text


def _errors_line(r: RetrieverResult) -> str:
    ids = ", ".join(q.id for q in r.questions if q.error)
    return f"{r.name}: {r.n_errors} question(s) failed and score 0: {ids} (see the warnings above)"


def miss_line(q: QuestionResult, k: int, depth: int) -> str:
    """`miss h05 (rank 14): question  expected a, b  got x (0.721)`; rank >depth when never retrieved."""
    where = f"rank {q.rank}" if q.rank is not None else f"rank >{depth}"
    if q.error:
        where = "error"
    expected = ", ".join(q.expected) or "(nothing)"
    got = f"{q.top[0].id} ({q.top[0].score:.3g})" if q.top else "(nothing)"
    text = f"miss {q.id} ({where}): {q.question}  expected {expected}  got {got}"
    if q.error:
        text += f"  error: {q.error}"
    elif q.diagnosis:
        text += f"\n    {q.diagnosis['label']}: {q.diagnosis['evidence']} -> {q.diagnosis['suggestion']}"
    return text


def misses(r: RetrieverResult, k: int) -> list[QuestionResult]:
    """Answerable questions with no expected answer in the top k."""
    return [q for q in r.answerable if q.rank is None or q.rank > k]


def render_misses(card: Scorecard, console: Console) -> None:
    k = headline_k(card)
    for r in card.retrievers:
        missed = misses(r, k)
        console.print(f"\n[bold]{escape(r.name)}[/bold]: {len(missed)} miss(es) at k={k} of {len(r.answerable)} answerable")
        for q in missed:
            console.print(escape(miss_line(q, k, card.depth)), highlight=False, soft_wrap=True)


def headline_k(card: Scorecard) -> int:
    """The cut-off misses are counted at: the headline metrics' k (one rule for every view)."""
    return next((m.k for m in card.headline if m.k is not None), max(card.k) if card.k else 10)


def render(card: Scorecard, *, show_misses: bool = False, console: Console | None = None,
           details: bool = False) -> None:
    console = console or Console()
    render_table(card, console)
    # stats sections
    from goldeval.report.sections import render_stats

    render_stats(card, console, details=details)
    if show_misses:
        render_misses(card, console)
