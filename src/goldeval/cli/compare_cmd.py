"""`goldeval compare`: are the differences between retrievers real, or within noise?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from goldeval.errors import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_OK, InputError
from goldeval.store.workspace import default_workspace
from goldeval.textsafe import safe_console, warn

if TYPE_CHECKING:
    from goldeval.history.changes import Shared
    from goldeval.metrics.definitions import Metric
    from goldeval.report.change import ChangeReport
    from goldeval.scorecard.model import Scorecard
    from goldeval.scorecard.statistics import Comparison

EPILOG = """\
examples:
  goldeval compare results.json                    the retrievers inside one evaluation
  goldeval compare baseline.json candidate.json    each retriever with its namesake in the baseline
  goldeval compare base.json new.json --json cmp.json --markdown comment.md
  goldeval compare frozen.json new.json --fail-if-worse hit@5    CI gate: exit 1 if new is worse beyond noise
  goldeval compare @baseline @last                 runs from the history (`goldeval history`)
  goldeval compare @last~1 @last                   the run before the newest one, and the newest

Across files, retrievers are paired by name (baseline/bm25 vs candidate/bm25), never with each other
inside one file. Runs on different golden-set versions are compared on the questions they share
unchanged; the output says how many and what changed. With several files the Markdown comment leads
with what changed and lists the flipped questions.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "compare",
        help="compare retrievers or saved evaluations on the same questions",
        description="Per metric: wins, losses and ties counted in questions, the difference with a paired "
        "bootstrap interval, a paired test (exact McNemar for hit@k and precision@1, paired randomization "
        "otherwise), Holm's correction for more than two systems, the minimum detectable difference, and a "
        "verdict. Exit 0 ok, 1 a --fail-if-worse gate failed, 2 bad input.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", nargs="+", metavar="RESULTS.json|@RUN",
                        help="results written by `goldeval eval --json`, or history references (@last, @last~1, "
                        "@12, @NAME); one file compares its retrievers, several compare each with the first")
    parser.add_argument("--workspace", metavar="DIR", type=Path, default=default_workspace(),
                        help="the workspace whose run history @references read (default: $GOLDEVAL_WORKSPACE, else .goldeval)")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME",
                        help="metric(s) to compare (repeatable; default: every metric of the results)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and randomization (default: 0)")
    parser.add_argument("--resamples", type=int, default=10_000,
                        help="bootstrap resamples and randomization rounds (default: 10000)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence level (default: 0.95)")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the comparison as JSON to OUT")
    parser.add_argument("--markdown", metavar="OUT", type=Path, help="write the comparison as Markdown (a PR comment)")
    parser.add_argument("--details", action="store_true", help="print every metric, not only the verdicts")
    parser.add_argument("--fail-if-worse", metavar="METRIC",
                        help="exit 1 if a candidate is worse than its baseline on METRIC beyond noise. Several files: "
                        "each retriever of a later file against the retriever of the same name in the first file "
                        "(a single retriever against a single one whatever its name); one file: every retriever "
                        "against the first. Holm's correction over the gated pairs only")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from goldeval.metrics.definitions import headline_metrics, parse_metric
    from goldeval.report.markdown import comparison_markdown
    from goldeval.report.sections import render_comparison, systems_table
    from goldeval.stats.annotate import check_settings, fill_intervals
    from goldeval.stats.compare import compare_scorecards, system_names

    check_settings(resamples=args.resamples, confidence=args.confidence, power=0.8)
    from goldeval.store.atomic import check_writable

    for out, flag in ((args.json, "--json"), (args.markdown, "--markdown")):
        if out is not None:  # an output that cannot be written fails now, not after the resampling (issue 9)
            check_writable(out, what=f"{flag} output")
    cards, labels = _load(args.results, args.workspace)
    n_systems = sum(len(c.retrievers) for c in cards)
    if n_systems < 2:
        raise InputError("this results file holds only one retriever: nothing to compare it with",
                         path=args.results[0], hint="pass a second results file, or evaluate several --retriever")
    cards, shared = _on_shared_questions(cards)
    metrics = [parse_metric(m) for m in args.metric] or None
    gated = parse_metric(args.fail_if_worse) if args.fail_if_worse else None
    if gated is not None and metrics is not None and gated not in metrics:
        metrics.append(gated)
    planned = _plan_gate(gated, cards, labels) if gated is not None else ([], [])
    comparison = compare_scorecards(cards, labels=labels, metrics=metrics, seed=args.seed,
                                    resamples=args.resamples, confidence=args.confidence)
    for system, n_err in comparison.n_errors.items():
        if n_err:
            warn(f"{system}: the retriever errored on {n_err} of {comparison.n_questions} "
                 "compared questions, which score 0: its numbers and comparisons understate it")
    shown = [m for m in (metrics or cards[0].headline or headline_metrics(comparison.metrics, cards[0].k))
             if m in comparison.metrics]
    data = comparison.to_dict()
    data["files"] = [str(p) for p in args.results]
    change = _change_report(cards, labels, comparison, shown, shared) if len(cards) > 1 else None
    if shared is not None:
        data["shared"] = {"questions": shared.qids, "of": shared.totals, "versions": shared.versions,
                          "added": shared.changes.added, "removed": shared.changes.removed,
                          "relabelled": shared.changes.changed}
    _write(args, data, comparison_markdown(comparison, metrics=shown) if change is None else None, change)
    for card in cards:
        if any(not r.intervals for r in card.retrievers):
            fill_intervals(card, seed=args.seed, resamples=args.resamples, confidence=args.confidence)
    console = safe_console()  # names, ids and questions from the files are cleaned (issue 9)
    if change is not None:
        from goldeval.report.change import change_text

        for line in change_text(change):
            console.print(line, highlight=False, markup=False)
        console.print()
    every = [s for systems in system_names(cards, labels) for s in systems]  # unpaired ones too: one column each
    console.print(systems_table(cards, every, shown, comparison.n_questions))
    render_comparison(comparison, console, metrics=shown, details=args.details)
    if gated is not None:
        return _gate(comparison, planned, gated)
    return EXIT_OK


def _write(args: argparse.Namespace, data: dict[str, object], markdown: str | None, change: ChangeReport | None) -> None:
    """The JSON and the Markdown comment (`change_markdown` across files, the comparison alone in one)."""
    from goldeval.report.change import change_markdown
    from goldeval.scorecard.io import dumps_strict
    from goldeval.store.atomic import write_atomic

    if args.json:
        write_atomic(args.json, dumps_strict(data))
        print(f"goldeval: wrote {args.json}", file=sys.stderr)
    if args.markdown:
        write_atomic(args.markdown, change_markdown(change) if change is not None else markdown or "")
        print(f"goldeval: wrote {args.markdown}", file=sys.stderr)


def _load(refs: list[str], workspace: Path) -> tuple[list[Scorecard], list[str]]:
    """Scorecards from files and history references, with a distinct label each."""
    from goldeval.history.db import load_results

    loaded = [load_results(ref, workspace) for ref in refs]
    labels = [label for _, label in loaded]
    if len(set(labels)) < len(labels):
        labels = list(refs)
    return [card for card, _ in loaded], labels


def _on_shared_questions(cards: list[Scorecard]) -> tuple[list[Scorecard], Shared | None]:
    """Cards of different golden sets, cut to the questions they share unchanged (said on stderr)."""
    from goldeval.history.changes import restrict, same_golden, shared_questions

    if len(cards) < 2 or same_golden(cards):
        return cards, None
    shared = shared_questions(cards)
    answerable = {q.id for q in cards[0].retrievers[0].answerable}
    if not answerable & set(shared.qids):
        raise InputError("these runs share no answerable question unchanged: nothing to compare",
                         value=shared.changes.describe(), hint="compare runs on the same golden set or close versions")
    print(f"goldeval: {shared.describe()}", file=sys.stderr)
    from goldeval.metrics.definitions import Metric

    drop = [Metric("bpref")] if shared.changes.judged else []  # other judged-not-relevant passages: bpref moves
    return [restrict(card, shared.qids, drop=drop) for card in cards], shared


def _change_report(cards: list[Scorecard], labels: list[str], comparison: Comparison, shown: list[Metric],
                   shared: Shared | None) -> ChangeReport:
    """What the comment leads with: the lead metric, flipped questions on a hit metric, configuration changes."""
    from goldeval.history.changes import config_changes, flipped
    from goldeval.report.change import ChangeReport
    from goldeval.stats.compare import pair_systems, system_names

    pairs = [(a, b) for a, b in pair_systems(cards, labels)[0] if a in comparison.systems]
    names = system_names(cards, labels)
    hits = [m for m in [*shown, *comparison.metrics] if m.name == "hit"]
    metric = hits[0] if hits else shown[0]
    configs = {s: r.config for card, systems in zip(cards, names, strict=True)
               for r, s in zip(card.retrievers, systems, strict=True)}
    return ChangeReport(
        comparison, labels[0], ", ".join(labels[1:]), metric,
        flips=flipped(cards, names, pairs, hits[0]) if hits else [], shared=shared,
        config={a: config_changes(configs[b], configs[a]) for a, b in pairs}, others=list(shown),
    )


def _plan_gate(metric: Metric, cards: list[Scorecard], labels: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The gated pairs, checked before minutes of resampling: the metric exists and something is gated."""
    from goldeval.stats.compare import gate_pairs

    available = [m for m in cards[0].metrics if all(m in card.metrics for card in cards)]
    if metric not in available:
        raise InputError(f"--fail-if-worse {metric}: not a metric of "
                         + ("these results" if len(cards) > 1 else "this results file"),
                         value=str(metric), hint="available: " + ", ".join(str(m) for m in available))
    pairs, notes = gate_pairs(cards, labels)
    if not pairs:
        raise InputError(f"--fail-if-worse {metric}: no retriever of the later files has a baseline of the same "
                         "name in the first file, so nothing can be gated", value=str(metric),
                         hint="evaluate the candidate with the baseline's retriever names; " + "; ".join(notes))
    return pairs, notes


def _gate(comparison: Comparison, planned: tuple[list[tuple[str, str]], list[str]], metric: Metric) -> int:
    from goldeval.stats.compare import format_p, gate

    pairs, notes = planned
    for note in notes:
        print(f"goldeval: gate: {note}", file=sys.stderr)
    errored = [s for s in dict.fromkeys(s for pair in pairs for s in pair) if comparison.n_errors.get(s)]
    if errored:
        print("goldeval: gate cannot be trusted: the retriever errored on some questions of "
              + ", ".join(f"{s} ({comparison.n_errors[s]})" for s in errored)
              + "; fix the errors and evaluate again", file=sys.stderr)
        return EXIT_BAD_INPUT
    checks = gate(comparison, pairs, metric)
    holm_note = f" after Holm over {len(checks)} gated pairs" if len(checks) > 1 else ""
    for c in (c for c in checks if c.worse):
        r = c.result
        print(f"goldeval: gate failed: {r.a} is worse than {r.b} on {metric} beyond noise "
              f"({r.diff * 100:+.1f} points, {format_p(c.p_adjusted)}{holm_note})", file=sys.stderr)
    if any(c.worse for c in checks):
        return EXIT_GATE_FAILED
    gated = ", ".join(f"{a} vs {b}" for a, b in pairs)
    print(f"goldeval: gate passed: nothing is worse than its baseline on {metric} beyond noise ({gated})",
          file=sys.stderr)
    return EXIT_OK
