"""`goldeval compare`: are the differences between retrievers real, or within noise?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.cli.output import check_json_out, write_json
from goldeval.errors import EXIT_OK
from goldeval.store.workspace import default_workspace
from goldeval.textsafe import safe_console, warn

if TYPE_CHECKING:
    from goldeval.scorecard.model import Scorecard
    from goldeval.stats.change import ChangeReport

EPILOG = """\
examples:
  goldeval compare results.json                    the retrievers inside one evaluation
  goldeval compare baseline.json candidate.json    each retriever with its namesake in the baseline
  goldeval compare base.json new.json --json cmp.json --markdown comment.md
  goldeval compare frozen.json new.json --fail-if-worse hit@5    CI gate: exit 1 if new is worse beyond noise
  goldeval compare @baseline @last                 runs from the history (`goldeval history`)
  goldeval compare @last~1 @last                   the run before the newest one, and the newest

Across files, retrievers are paired by name (baseline/bm25 vs candidate/bm25), never with each other
inside one file. Runs are compared on the questions they share unchanged: a question only in one run,
or relabelled, is left out and named (stderr, the JSON's "shared", the comment). With several files
the Markdown comment leads with what changed and lists the flipped questions. The same comparison and
gate from Python: goldeval.compare_results(baseline, candidate, gate="hit@5"), which
goldeval.testing.assert_no_regression calls too.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "compare",
        help=COMMANDS["compare"],
        description="Per metric: wins, losses and ties counted in questions, the difference with a paired "
        "bootstrap interval, a paired test (exact McNemar for hit@k and precision@1, paired randomization "
        "otherwise), Holm's correction for more than two systems, the minimum detectable difference, and a "
        "verdict. Exit 0 ok, 1 a --fail-if-worse gate failed, 2 bad input (or a gate over a retriever that "
        "errored: it cannot be trusted).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", nargs="+", metavar="RESULTS.json|@RUN",
                        help="results written by `goldeval eval --json`, or history references (@last, @last~1, "
                        "@12, @NAME); one file compares its retrievers, several compare each with the first")
    flags.add(parser, "workspace", more="here: the run history @references read", default=default_workspace())
    flags.add(parser, "metric", more="here: the metrics compared (repeatable)", shown="every metric of the results")
    flags.add(parser, "seed", more="of the bootstrap and randomization")
    flags.add(parser, "resamples")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence level")
    flags.add(parser, "json", more="the comparison")
    flags.add(parser, "markdown", more="the comparison")
    flags.add(parser, "details")
    parser.add_argument("--fail-if-worse", metavar="METRIC",
                        help="exit 1 if a candidate is worse than its baseline on METRIC beyond noise. Several files: "
                        "each retriever of a later file against the retriever of the same name in the first file "
                        "(a single retriever against a single one whatever its name); one file: every retriever "
                        "against the first. Holm's correction over the gated pairs only")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compare, print, write; with --fail-if-worse the verdict of `goldeval.compare_results` is the exit code."""
    from goldeval.report.markdown import comparison_markdown
    from goldeval.report.sections import render_comparison, systems_table
    from goldeval.stats.annotate import check_settings, fill_intervals
    from goldeval.stats.change import compare_cards
    from goldeval.stats.compare import system_names
    from goldeval.store.atomic import check_writable

    check_settings(resamples=args.resamples, confidence=args.confidence, power=0.8)
    # an output that cannot be written fails now, not after the resampling (issue 9)
    check_json_out(args.json)
    if args.markdown is not None:
        check_writable(args.markdown, what="--markdown output")
    cards, labels = _load(args.results, args.workspace)
    report = compare_cards(cards, labels, gate=args.fail_if_worse, metrics=args.metric or None, seed=args.seed,
                           resamples=args.resamples, confidence=args.confidence)
    comparison, shown, cards = report.comparison, report.others, report.scorecards
    if report.questions_changed and report.shared is not None:
        print(f"goldeval: {report.shared.describe()}", file=sys.stderr)
    for system, n_err in comparison.n_errors.items():
        if n_err:
            warn(f"{system}: the retriever errored on {n_err} of {comparison.n_questions} "
                 "compared questions, which score 0: its numbers and comparisons understate it")
    data = report.to_dict()
    data["files"] = [str(p) for p in args.results]
    several = len(cards) > 1
    _write(args, data, None if several else comparison_markdown(comparison, metrics=shown), report if several else None)
    for card in cards:
        if any(not r.intervals for r in card.retrievers):
            fill_intervals(card, seed=args.seed, resamples=args.resamples, confidence=args.confidence)
    console = safe_console()  # names, ids and questions from the files are cleaned (issue 9)
    if several:
        from goldeval.report.change import change_text

        for line in change_text(report):
            console.print(line, highlight=False, markup=False)
        console.print()
    every = [s for systems in system_names(cards, labels) for s in systems]  # unpaired ones too: one column each
    console.print(systems_table(cards, every, shown, comparison.questions_text()))
    render_comparison(comparison, console, metrics=shown, details=args.details)
    if report.gate is None:
        return EXIT_OK
    for note in report.gate.notes:
        print(f"goldeval: gate: {note}", file=sys.stderr)
    for line in report.gate.reason.splitlines():
        print(f"goldeval: {line}", file=sys.stderr)
    return report.gate.exit_code


def _write(args: argparse.Namespace, data: dict[str, object], markdown: str | None, change: ChangeReport | None) -> None:
    """The JSON and the Markdown comment (`change_markdown` across files, the comparison alone in one)."""
    from goldeval.report.change import change_markdown
    from goldeval.scorecard.io import dumps_strict
    from goldeval.store.atomic import write_atomic

    if args.json:
        write_json(args.json, dumps_strict(data))  # a file, or `--json -`: stdout
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
