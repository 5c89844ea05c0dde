"""The leakage report as plain text lines: generated beside hand-written, and the gap between them.

The same lines `goldeval synth` prints; a terminal or page renderer can use them as they are, or read
`LeakageReport.to_dict()` and lay the figures out its own way.
"""

from __future__ import annotations

from goldeval.synth.leakage import COPY_WORDS, FIGURES, LeakageReport

LABELS = {
    "content_share": "question words found in the passage",
    "longest_copy": "longest phrase copied (words, mean)",
    "copies": f"questions copying {COPY_WORDS}+ words",
    "repeats_heading": "questions repeating a title/heading",
    "hit_at_1": "BM25 ranks the passage 1st",
    "hit_at_5": "BM25 ranks the passage in the top 5",
    "mrr": "BM25 MRR of the passage",
}
PERCENT = {"content_share", "copies", "repeats_heading", "hit_at_1", "hit_at_5"}


def leakage_lines(report: LeakageReport, kind: str = "synthetic", baseline: str = "hand") -> list[str]:
    """A small table: one row a figure, columns for `kind`, `baseline` and their difference."""
    a, b = report.sets.get(kind), report.sets.get(baseline)
    if a is None:
        return [f"leakage: no {kind} questions to measure"]
    head = f"{'leakage':42} {kind:>10}"
    if b is not None:
        head += f" {baseline:>10} {'gap':>8}"
    lines = [head, f"{'questions':42} {a.questions:>10}" + (f" {b.questions:>10}" if b else "")]
    gap = report.gap(kind, baseline)
    for name in FIGURES:
        row = f"{LABELS[name]:42} {format_figure(name, getattr(a, name)):>10}"
        if b is not None:
            row += f" {format_figure(name, getattr(b, name)):>10} {format_figure(name, gap.get(name), signed=True):>8}"
        lines.append(row)
    if b is None:
        lines.append(f"(no {baseline}-written questions to compare with: give --golden with your own questions)")
    if report.unmeasured:
        lines.append(f"({len(report.unmeasured)} question(s) not measured: none of their expected ids is in the corpus)")
    return lines


def format_figure(name: str, value: float | None, *, signed: bool = False) -> str:
    """A figure as the table prints it: a percentage for the shares in `PERCENT` (a gap in points when
    `signed`), two decimals otherwise, `-` when missing (the page shows the same text)."""
    if value is None:
        return "-"
    sign = "+" if signed and value > 0 else ""
    if name in PERCENT:
        return f"{sign}{value * 100:.0f}{' pt' if signed else '%'}"
    return f"{sign}{value:.2f}"
