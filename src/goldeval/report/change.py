"""The comparison of a candidate run with its baseline, as a short pull-request comment.

It leads with what changed (each paired retriever on the lead metric: before -> after, the difference
and whether it is beyond noise), then the flipped questions, then what the reader must know (shared
questions across golden-set versions, configuration changes, unpaired retrievers); every other metric
is folded away. Computes nothing: it formats the `ChangeReport` of `goldeval.stats.change.compare_results`.
"""

from __future__ import annotations

from goldeval.scorecard.statistics import MetricComparison
from goldeval.stats.change import ChangeReport
from goldeval.textsafe import md_code, md_text

MAX_FLIPS = 10
"""Questions listed per direction and retriever; the rest are counted."""


def outcome(r: MetricComparison) -> str:
    if not r.significant:
        return "within noise"
    return "better beyond noise" if r.diff > 0 else "worse beyond noise"


def headline_lines(report: ChangeReport, *, markdown: bool) -> list[str]:
    """One line per paired retriever: `bm25: hit@5 0.800 -> 0.850, +5.0 points (95% CI ...): within noise`."""
    conf = round(report.comparison.confidence * 100)
    shown: list[MetricComparison] = []
    for lead in report.comparison.for_metric(report.metric):  # one per pair: its lead line, then what else moved
        shown.append(lead)
        shown += [r for r in report.comparison.results if r.a == lead.a and r.b == lead.b and r.significant
                  and r.metric in report.others and r.metric != report.metric]
    lines = []
    for r in shown:
        name = r.a.split("/", 1)[-1] if r.a.split("/", 1)[-1] == r.b.split("/", 1)[-1] else f"{r.a} vs {r.b}"
        result = outcome(r)
        if markdown and r.significant:
            result = f"**{result}**"
        text = (f"{md_code(name) if markdown else name}: {r.metric} {r.mean_b:.3f} -> {r.mean_a:.3f}, "
                f"{r.diff * 100:+.1f} points ({conf}% CI {r.ci[0] * 100:+.1f} to {r.ci[1] * 100:+.1f}, "
                f"{r.wins} better / {r.losses} worse of {r.n}): {result}")
        lines.append(f"- {text}" if markdown else text)
    return lines


def flip_lines(report: ChangeReport, *, markdown: bool) -> list[str]:
    lines = []
    for f in report.flips:
        name = f.candidate.split("/", 1)[-1]
        verbs = ("now finds", "now misses") if f.metric.name == "hit" else (f"better on {f.metric} for", f"worse on {f.metric} for")
        for verb, questions in zip(verbs, (f.found, f.lost), strict=True):
            if not questions:
                continue
            shown = [f"{q.id} “{_short(q.question)}”" for q in questions[:MAX_FLIPS]]
            shown = [md_text(line) for line in shown] if markdown else shown
            more = f" and {len(questions) - MAX_FLIPS} more" if len(questions) > MAX_FLIPS else ""
            head = md_code(name) if markdown else name
            lines.append(f"{'- ' if markdown else ''}{head} {verb} {len(questions)}: {'; '.join(shown)}{more}")
    return lines


def context_lines(report: ChangeReport) -> list[str]:
    lines = []
    if report.questions_changed and report.shared is not None:
        lines.append(report.shared.describe()[0].upper() + report.shared.describe()[1:] + ".")
    for system, changes in report.config.items():
        if changes:
            lines.append(f"{system.split('/', 1)[-1]} configuration: " + "; ".join(changes[:6])
                         + (f" and {len(changes) - 6} more" if len(changes) > 6 else ""))
    lines.extend(report.comparison.notes)
    return lines


def change_markdown(report: ChangeReport) -> str:
    """The PR comment: what changed, flipped questions, context; every metric folded."""
    lines = [f"### goldeval: {md_text(report.candidate)} vs {md_text(report.baseline)}", "", "**What changed**", "",
             *headline_lines(report, markdown=True)]
    flips = flip_lines(report, markdown=True)
    if flips:
        lines += ["", f"**Flipped questions** ({report.metric})", "", *flips]
    elif report.flips:
        lines += ["", f"_No question flipped on {report.metric}._"]
    lines += ["", *(f"_{md_text(line)}_" for line in context_lines(report))]
    rows = [f"| {r.metric} | {md_code(r.a, table=True)} vs {md_code(r.b, table=True)} | {r.mean_b:.3f} -> {r.mean_a:.3f} | {r.diff * 100:+.1f} | "
            f"{r.ci[0] * 100:+.1f} to {r.ci[1] * 100:+.1f} | {r.p_adjusted:.3g} | {outcome(r)} |"
            for r in report.comparison.results]
    lines += ["", "<details><summary>Every metric</summary>", "",
              *(f"- {md_text(r.verdict)}" for r in report.comparison.results), "",
              "| metric | pair | before -> after | diff (points) | CI (points) | p adj. | |",
              "| --- | --- | ---: | ---: | ---: | ---: | --- |", *rows, "", "</details>"]
    return "\n".join(lines).rstrip() + "\n"


def change_text(report: ChangeReport) -> list[str]:
    """The same, as plain lines for the terminal (before the full comparison)."""
    return [*headline_lines(report, markdown=False), *flip_lines(report, markdown=False), *context_lines(report)]


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
