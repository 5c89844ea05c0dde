"""Markdown for a pull-request comment: the headline table with intervals, verdicts, counts, details folded.

Computes nothing: it formats a Scorecard (after `goldeval.compare`) or a `Comparison`. Every name, id, tag,
question and generated sentence goes in through `textsafe.md_code` or `md_text`, so a tag such as
`</details><h1>` or an id with a backtick cannot break the comment (issue 9). Details sit in `<details>` blocks, which GitHub
and GitLab render folded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldeval.metrics.definitions import Metric
from goldeval.report.grid import UNMEASURED
from goldeval.report.sections import misses_text, unmeasured_of
from goldeval.report.terminal import api_lines, headline_line, synthetic_title, table_metrics, title_lines
from goldeval.scorecard.model import RetrieverResult, Scorecard
from goldeval.scorecard.statistics import Comparison
from goldeval.stats.diagnosis import CAUSES
from goldeval.textsafe import md_code, md_text


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], right_from: int = 1) -> list[str]:
    align = ["---" if i < right_from else "---:" for i in range(len(header))]
    return [_row(header), "| " + " | ".join(align) + " |", *(_row(r) for r in rows)]


def value_cell(r: RetrieverResult, metric: Metric, *, synthetic: bool = False) -> str:
    """`0.812 (0.71–0.90)`; `-` when not computed; `n/a` past what the retriever returned
    (`goldeval.scorecard.depth`), in the headline table and beside it alike. `synthetic`: the synthetic
    questions' value (no interval)."""
    if metric in r.unmeasurable:
        return UNMEASURED
    value = (r.synthetic.metrics if synthetic else r.metrics).get(metric)
    ci = None if synthetic else r.intervals.get(metric)
    return "-" if value is None else f"{value:.3f}" + (f" ({ci[0]:.2f}–{ci[1]:.2f})" if ci else "")


def scorecard_markdown(card: Scorecard, *, title: str = "goldeval scorecard") -> str:
    """The whole scorecard as Markdown."""
    lines = [f"### {title}", ""]
    long = [f"_{line}_" for line in title_lines(card)[1:]]  # how long documents were ranked, per retriever
    lines += [*long, ""] if long else []
    columns = table_metrics(card)
    rows = []
    for r in card.retrievers:
        cells: list[object] = [md_code(r.name), f"{len(r.headline_questions)} + {len(r.off_topic)} off-topic"]
        cells += [value_cell(r, m) for m in columns]
        rows.append(cells)
    lines += _table(["retriever", "questions", *(str(m) for m in columns)], rows, right_from=2)
    if (line := headline_line(card)) is not None:
        lines += ["", f"_{line}_"]
    if (beside := synthetic_title(card)) is not None:  # always, not only when they score higher (issue 18)
        synthetic = [[md_code(r.name), str(r.synthetic.n), *(value_cell(r, m, synthetic=True) for m in card.headline)]
                     for r in card.retrievers]
        lines += ["", f"**{beside}**", "", *_table(["retriever", "questions", *(str(m) for m in card.headline)],
                                                  synthetic, right_from=1)]
    from goldeval.report.judged import judged_lines

    judged = [f"_{line}_" for line in judged_lines(card, markdown=True)]  # judged@k, ranges, label fixes
    lines += ["", *judged] if judged else []  # a blank line: right under a table, it would be a table row
    cost = [f"_{md_text(line)}_" for line in api_lines(card)]  # what each API model used and cost, as the terminal
    lines += ["", *cost] if cost else []
    stats = card.statistics
    if stats is not None and any(r.intervals for r in card.retrievers):
        lines += ["", f"_(low–high): {round(stats.confidence * 100)}% {stats.method}, "
                      f"{stats.resamples} resamples, seed {stats.seed}._"]
    small = [r for r in card.retrievers if r.headline_questions and not r.intervals]
    if stats is not None and stats.min_questions and small:
        lines += ["", f"_No intervals: {len(small[0].headline_questions)} headline question(s) are too few for one "
                      f"(goldeval gives intervals from {stats.min_questions})._"]
    if stats is not None:
        if stats.comparison:
            lines += ["", *comparison_lines(stats.comparison, metrics=card.headline)]
        lines += breakdown_lines(stats.breakdown, [str(m) for m in card.headline], unmeasured_of(card))
        lines += off_topic_lines(stats.off_topic)
    lines += diagnosis_lines(card)
    return "\n".join(lines).rstrip() + "\n"


def comparison_markdown(comparison: Comparison, *, title: str = "goldeval compare",
                        metrics: Sequence[Metric] | None = None) -> str:
    """A comparison alone (what `goldeval compare --markdown` writes)."""
    chosen = list(metrics) if metrics else list(comparison.metrics)[:3]
    return "\n".join([f"### {title}", "", *comparison_lines(comparison, metrics=chosen)]).rstrip() + "\n"


def comparison_lines(comparison: Comparison, *, metrics: Sequence[Metric]) -> list[str]:
    results = comparison.results
    if not results:  # nothing compared (every metric unmeasurable for a pair, say): the notes say why
        return [f"_{md_text(note)}_" for note in comparison.notes]
    holm = " Holm-corrected over the pairs of each metric." if comparison.correction == "holm" else ""
    lines = [f"**Comparison** over {comparison.questions_text()}.{holm}", ""]
    for r in results:
        if r.metric in metrics:
            lines.append(f"- **{md_text(r.verdict)}**" if r.significant else f"- {md_text(r.verdict)}")
    first = next((r for r in results if r.metric in metrics), None)
    if first:
        lines += ["", f"_{first.detectable[0].upper()}{first.detectable[1:]}._"]
    lines += [f"_{md_text(note)}_" for note in comparison.notes]
    rows = [[str(r.metric), f"{md_code(r.a)} vs {md_code(r.b)}", f"{r.wins}/{r.losses}/{r.ties}",
             f"{r.diff * 100:+.1f}", f"{r.ci[0] * 100:+.1f} to {r.ci[1] * 100:+.1f}", r.test,
             f"{r.p:.3g}", f"{r.p_adjusted:.3g}",
             "-" if r.mdd is None else f"{r.mdd * 100:.1f}",
             "-" if r.questions_needed is None else r.questions_needed] for r in results]
    header = ["metric", "a vs b", "better/worse/tied", "diff (points)", "CI (points)", "test", "p", "p adj.",
              "MDD (points)", "questions needed"]
    return [*lines, "", "<details><summary>Every metric</summary>", "", *_table(header, rows, right_from=2),
            "", "</details>"]


def breakdown_lines(breakdown: Mapping[str, Any] | None, metrics: Sequence[str],
                    unmeasured: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The synthetic-vs-hand warnings, then the by-source and by-tag tables folded (`n/a` as in the headline
    table for a metric past the list a retriever cut short: `unmeasured`)."""
    if not breakdown:
        return []
    lines: list[str] = []
    for warning in breakdown.get("warnings", []):
        lines += ["", f"> **Warning:** {md_text(warning['text'])}"]
    for key, title in (("by_source", "By source (hand-written and synthetic never pooled)"), ("by_tag", "By tag")):
        rows = []
        for name, groups in breakdown.get("retrievers", {}).items():
            for group, data in groups.get(key, {}).items():
                gone = (unmeasured or {}).get(name, ())
                rows.append([md_code(name), md_text(group), data["n"],
                             *(UNMEASURED if m in gone else _value(data, m) for m in metrics if m in data["metrics"])])
        if rows and (key == "by_tag" or breakdown.get("mixed_sources")):
            shown = [m for m in metrics if m in breakdown.get("metrics", metrics)]
            lines += ["", f"<details><summary>{title}</summary>", "",
                      *_table(["retriever", key.removeprefix("by_"), "n", *shown], rows, right_from=2),
                      "", "</details>"]
    return lines


def _value(group: Mapping[str, Any], metric: str) -> str:
    """A group's value with its interval; a group too small for an interval has none."""
    ci = group.get("intervals", {}).get(metric)
    return f"{group['metrics'][metric]:.3f}" + (f" ({ci[0]:.2f}–{ci[1]:.2f})" if ci else "")


def off_topic_lines(report: Mapping[str, Any] | None) -> list[str]:
    if not report:
        return []
    if not any(s.get("n_off_topic") for s in report.get("retrievers", {}).values()):
        advice = next((s["verdict"] for s in report.get("retrievers", {}).values() if s.get("verdict")), None)
        return ["", f"_{advice[0].upper() + advice[1:]}._"] if advice else []  # the same for every retriever: once
    lines = ["", "**Can a score threshold catch off-topic questions?**", ""]
    for name, s in report["retrievers"].items():
        lines.append(f"- {md_code(name)}: {md_text(s['verdict'])}")
        high = s.get("highest")
        if high:
            lines.append(f"  - highest-scoring off-topic question: {md_text(high['question_id'])} "
                         f"“{md_text(high['question'])}” ({high['score']:.4g}), caught by {md_code(high['passage'])}")
    lines += ["", f"_{report.get('note', '')}_"]
    return lines


def diagnosis_lines(card: Scorecard) -> list[str]:
    """Misses by cause per retriever, the advice once per cause, the questions every retriever missed,
    the hub documents, then every miss grouped by cause (folded)."""
    stats = card.statistics
    if stats is None or not stats.diagnosis_counts:
        return []
    counts = stats.diagnosis_counts
    causes = [c for c in CAUSES if any(by.get(c) for by in counts.values())]
    lines = ["", f"**Why the misses missed** at k={card.headline_k}", ""]
    if not causes:
        return [*lines, "No misses."]
    rows = [[md_code(name), sum(by.values()), *(by.get(c, 0) for c in causes)] for name, by in counts.items()]
    lines += _table(["retriever", "misses", *(CAUSES[c][0] for c in causes)], rows)
    beside = [f"{md_code(name)}: {misses_text(by)}" for name, by in stats.diagnosis_beside.items() if any(by.values())]
    if beside:  # never pooled into the counts above (goldeval.golden.model.headline_split)
        lines += ["", "_Beside the headline, the synthetic questions:_ " + "; ".join(beside)]
    lines += ["", *(f"- **{CAUSES[c][0]}**: {CAUSES[c][1]}" for c in causes)]
    if stats.missed_by_all:
        lines += ["", f"Missed by every retriever ({len(stats.missed_by_all)}): "
                      + ", ".join(md_text(q) for q in stats.missed_by_all)]
    for name, hubs in stats.hubs.items():
        for hub in hubs:
            lines += ["", f"> **Hub document under {md_code(name)}:** {md_code(hub['doc'])} comes first for "
                          f"{hub['wrong']} of {hub['searched']} questions it does not answer: "
                          + ", ".join(md_text(q) for q in hub["questions"])]
    details = []
    for r in card.retrievers:
        for cause in causes:
            group = [q for q in r.questions if q.diagnosis and q.diagnosis["cause"] == cause]
            if group:
                details.append(f"- {md_code(r.name)}, {CAUSES[cause][0]} ({len(group)}):")
                details += [f"  - {md_text(q.id)}: {md_text(q.diagnosis['evidence'])}" for q in group if q.diagnosis]
    if details:
        lines += ["", "<details><summary>Every miss with its evidence</summary>", "", *details, "",
                  "</details>"]
    return lines
