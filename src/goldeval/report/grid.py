"""Metrics as rows, retrievers as columns, laid out when printed for the width there is.

Intervals sit beside the values when everything fits, under them when not, and the columns are split
into several tables when even that is too wide; names break only at their own separators
(`hybrid:bm25+` / `dense:minilm`), never mid-word, and nothing is cut with an ellipsis (issue 13).
Computes nothing: it formats the values and intervals a RetrieverResult holds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions
from rich.markup import escape
from rich.table import Table

from goldeval.metrics.definitions import Metric
from goldeval.report.layout import break_name, column_groups, name_width, table_width
from goldeval.scorecard.model import RetrieverResult

VALUE_WIDTH = 5
"""`0.812`"""
INTERVAL_WIDTH = 11
"""`(0.71–0.90)` or `(no spread)`"""
NO_SPREAD = "(no spread)"
"""An interval of zero width: every question scored the same, so resampling them shows nothing."""


@dataclass(frozen=True)
class Layout:
    stacked: bool
    """The interval under the value rather than beside it."""
    widths: list[int]
    groups: list[list[int]]


def plan(names: Sequence[str], first: int, total: int, *, intervals: bool) -> Layout:
    """The widest layout that fits `total` columns: intervals inline, then stacked, then split."""
    for stacked in (False, True):
        cell = VALUE_WIDTH if not intervals else max(VALUE_WIDTH, INTERVAL_WIDTH) if stacked else (
            VALUE_WIDTH + 1 + INTERVAL_WIDTH)
        widths = [max(cell, name_width(n)) for n in names]
        if table_width([first, *widths]) <= total or stacked:
            spare = total - table_width([first, *widths])
            for i in sorted(range(len(names)), key=lambda i: len(names[i]) - widths[i]):  # whole names first
                grow = min(max(len(names[i]) - widths[i], 0), max(spare, 0))
                widths[i] += grow
                spare -= grow
            return Layout(stacked, widths, column_groups(first, widths, total))
    raise AssertionError("unreachable")


class MetricGrid:
    """A rich renderable: `console.print(MetricGrid(names, results, metrics))`."""

    def __init__(self, names: Sequence[str], results: Sequence[RetrieverResult], metrics: Sequence[Metric], *,
                 counts: bool = True, mark_best: bool = True, synthetic: bool = False) -> None:
        """`synthetic`: the values of the synthetic questions beside the headline (`RetrieverResult.synthetic`)
        instead of the headline's."""
        self.names, self.results, self.metrics = list(names), list(results), list(metrics)
        self.counts, self.mark_best, self.synthetic = counts, mark_best, synthetic

    def _values(self, r: RetrieverResult) -> dict[Metric, float]:
        return r.synthetic.metrics if self.synthetic else r.metrics

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Table]:
        first = max(len("questions"), *(len(str(m)) for m in self.metrics)) if self.metrics else len("questions")
        intervals = not self.synthetic and any(r.intervals for r in self.results)
        layout = plan(self.names, first, options.max_width, intervals=intervals)
        for group in layout.groups:
            yield self._table(group, layout, first)

    def _table(self, group: list[int], layout: Layout, first: int) -> Table:
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("metric", style="bold", no_wrap=True, min_width=first)
        for i in group:
            table.add_column(escape(break_name(self.names[i], layout.widths[i])), justify="right", no_wrap=True,
                             min_width=layout.widths[i])
        if self.counts:
            sizes = [r.synthetic.n if self.synthetic else r.n_headline for r in self.results]
            table.add_row("questions", *[f"{sizes[i]}" for i in group], style="dim")
        several = self.mark_best and len(self.results) > 1
        for m in self.metrics:
            best = max((self._values(r).get(m, 0.0) for r in self.results if m not in r.unmeasurable), default=0.0)
            table.add_row(str(m), *[cell(self.results[i], m, bold=several and self._values(self.results[i]).get(m) == best,
                                         stacked=layout.stacked, synthetic=self.synthetic) for i in group])
        return table


def cell(r: RetrieverResult, metric: Metric, *, bold: bool = False, stacked: bool = False,
         synthetic: bool = False) -> str:
    """`0.812 (0.71–0.90)` in rich markup; `-` when the metric was not computed; `n/a` when its cut-off is
    past what the retriever returned (`goldeval.scorecard.depth`). `synthetic`: the value of the synthetic
    questions beside the headline (no interval)."""
    if metric in r.unmeasurable:
        return UNMEASURED
    if synthetic:
        return format_cell(r.synthetic.metrics.get(metric), None, bold=bold, stacked=stacked)
    return format_cell(r.metrics.get(metric), r.intervals.get(metric), bold=bold, stacked=stacked)


UNMEASURED = "n/a"
"""A metric whose cut-off is past the results the retriever returned (`goldeval.scorecard.depth`)."""


def format_cell(value: float | None, interval: Sequence[float] | None, *, bold: bool = False,
                stacked: bool = False) -> str:
    if value is None:
        return "-"
    text = f"[bold green]{value:.3f}[/bold green]" if bold else f"{value:.3f}"
    if interval:
        shown = NO_SPREAD if no_spread(interval) else f"({interval[0]:.2f}–{interval[1]:.2f})"
        text += ("\n" if stacked else " ") + f"[dim]{shown}[/dim]"
    return text


class GroupGrid:
    """Groups (tags) as rows with their sizes, retrievers as columns, laid out as `MetricGrid` is."""

    def __init__(self, head: str, names: Sequence[str], labels: Sequence[str], sizes: Sequence[int],
                 values: Sequence[Sequence[tuple[float | None, Sequence[float] | None]]],
                 unmeasurable: Sequence[str] = ()) -> None:
        """`values[row][column]`: the value and its interval (None when the group had none); the columns
        named in `unmeasurable` cut their lists short of the metric and show `n/a`, as the headline does."""
        self.head, self.names, self.labels, self.sizes = head, list(names), list(labels), list(sizes)
        self.values = [list(row) for row in values]
        self.unmeasurable = set(unmeasurable)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Table]:
        label_width = max([len(self.head), *(len(label) for label in self.labels)])
        size_width = max([1, *(len(str(n)) for n in self.sizes)])
        first = label_width + size_width + 3  # the label and size columns, as one for the plan
        intervals = any(ci for row in self.values for _, ci in row)
        layout = plan(self.names, first, options.max_width, intervals=intervals)
        for group in layout.groups:
            table = Table(show_edge=False, pad_edge=False)
            table.add_column(escape(self.head), style="bold", no_wrap=True, min_width=label_width)
            table.add_column("n", justify="right", no_wrap=True)
            for i in group:
                table.add_column(escape(break_name(self.names[i], layout.widths[i])), justify="right", no_wrap=True,
                                 min_width=layout.widths[i])
            for label, size, row in zip(self.labels, self.sizes, self.values, strict=True):
                table.add_row(escape(label), str(size), *[UNMEASURED if self.names[i] in self.unmeasurable else
                                                          format_cell(*row[i], stacked=layout.stacked) for i in group])
            yield table


def no_spread(interval: Sequence[float]) -> bool:
    """Whether an interval is a single point at the printed precision (`1.00–1.00`)."""
    return interval[1] - interval[0] < 5e-4
