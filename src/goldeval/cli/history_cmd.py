"""`goldeval history`: the recorded runs, each retriever's trend on one frozen golden set, named baselines."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import InputError
from goldeval.limits import number_type
from goldeval.store.workspace import default_workspace
from goldeval.textsafe import safe_console

EPILOG = """\
examples:
  goldeval history                                 the recorded runs, newest first
  goldeval history trend                           each retriever's headline metric over the runs of the
                                                   newest frozen golden-set version, with intervals
  goldeval history trend --golden-version 3 --metric mrr --json trend.json
  goldeval history tag @last baseline              name a run; then: goldeval compare @baseline @last
  goldeval history export @baseline --out baseline.json

Every `goldeval eval` records its run in WORKSPACE/history.sqlite (`goldeval eval --no-history`, or GOLDEVAL_NO_HISTORY=1, to skip).
References: @last, @last~N (the N-th run before the newest), @ID (a run id), @NAME (a tag).
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "history",
        help=COMMANDS["history"],
        description="Every evaluation is recorded (run identity, metrics, per-question ranks) in an SQLite "
        "database in the workspace. List the runs, show each retriever's trend over the runs of one frozen "
        "golden-set version with confidence intervals, name a run as a baseline, or export one as results "
        "JSON. Exit 0 ok, 2 bad input.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    flags.add(parser, "workspace", more="here: the one holding history.sqlite", default=default_workspace())
    flags.add(parser, "limit", more="runs")
    flags.add(parser, "json", more="the runs listed", nargs="?", const=flags.BARE_JSON)
    parser.set_defaults(func=run_list)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    flags.add(common, "workspace", more="here: the one holding history.sqlite", default=argparse.SUPPRESS)

    trend = actions.add_parser("trend", parents=[common], help="each retriever's metric over the runs of one frozen golden-set version")
    flags.renamed(trend, flags.shown(trend.add_argument("--golden-version", type=number_type("version"), metavar="N",
                                                        help="the frozen golden-set version"), "the newest with runs"),
                  "--version")
    flags.add(trend, "metric", more="here: the one followed", action="store", default=None,
              shown="the newest run's first headline metric")
    flags.add(trend, "json", more="the trend (for a page's trend view)")
    trend.set_defaults(func=run_trend)

    tag = actions.add_parser("tag", parents=[common], help="name a run, e.g. as the baseline CI compares against")
    tag.add_argument("run", metavar="RUN", help="a run id or reference (12, @12, @last, @last~1, @NAME)")
    tag.add_argument("name", metavar="NAME", help="the name; `compare @NAME` then reads that run")
    tag.set_defaults(func=run_tag)

    export = actions.add_parser("export", parents=[common], help="write a recorded run as results JSON")
    export.add_argument("run", metavar="RUN", help="a run id or reference")
    flags.add(export, "out", more="the results JSON", required=True)
    export.set_defaults(func=run_export)


def _history(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from goldeval.history.db import History

    workspace = getattr(args, "workspace", None) or default_workspace()
    return History.of(workspace)


def _ref(text: str) -> str:
    return text if text.startswith("@") else f"@{text}"


def run_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from goldeval.history.db import describe

    history = _history(args)
    rows = history.runs(limit=args.limit)
    if args.json is not None:
        text = json.dumps([describe(r) for r in rows], indent=1)
        if flags.bare_json(args.json):  # the old stdout form, for one release
            print(text)
            return 0
        from goldeval.cli.output import write_json

        write_json(args.json, text + "\n")  # a file, or `--json -`: stdout
    table = Table(title=f"runs in {history.path}", title_justify="left", show_edge=False, pad_edge=False)
    for column in ("run", "created", "golden set", "version", "corpus", "retrievers", "tags"):
        table.add_column(column)
    for r in rows:
        table.add_row(str(r.id), r.created, Path(r.golden_path).name or "-",
                      "-" if r.golden_version is None else str(r.golden_version), r.corpus_fingerprint[:10] or "-",
                      ", ".join(r.retrievers), ", ".join(r.tags))
    safe_console().print(table)
    if not rows:
        print("goldeval: no run recorded yet: every `goldeval eval` records one", file=sys.stderr)
    return 0


def run_trend(args: argparse.Namespace) -> int:
    from rich.markup import escape
    from rich.table import Table

    from goldeval.cli.output import write_json
    from goldeval.history.trend import trend_payload
    from goldeval.scorecard.io import dumps_strict

    history = _history(args)
    metric = args.metric or _default_metric(history)
    data = trend_payload(history, metric=metric, version=args.golden_version)
    if args.json:
        write_json(args.json, dumps_strict(data))  # a file, or `--json -`: stdout
    version = "unfrozen" if data["golden_version"] is None else f"version {data['golden_version']}"
    table = Table(title=f"{metric} over {len(data['runs'])} run(s) on golden set {version}", title_justify="left",
                  show_edge=False, pad_edge=False)
    table.add_column("run")
    table.add_column("created")
    names = list(data["retrievers"])
    for name in names:
        table.add_column(escape(name), justify="right")
    cells = {(p["run"], name): p for name, points in data["retrievers"].items() for p in points}
    for run in data["runs"]:
        label = str(run["id"]) + (f" ({', '.join(run['tags'])})" if run["tags"] else "")
        table.add_row(label, run["created"], *[_cell(cells.get((run["id"], n))) for n in names])
    console = safe_console()
    console.print(table)
    for name, points in data["retrievers"].items():
        if len(points) > 1:
            first, last = points[0], points[-1]
            console.print(f"{escape(name)}: {first['value']:.3f} (run {first['run']}) -> {last['value']:.3f} "
                          f"(run {last['run']}), {(last['value'] - first['value']) * 100:+.1f} points"
                          + _overlap(first, last), highlight=False)
    for note in data["notes"]:
        console.print(f"note: {note}", style="dim", highlight=False)
    return 0


def _default_metric(history) -> str:  # type: ignore[no-untyped-def]
    rows = history.runs(limit=1)
    if not rows:
        raise InputError("no run recorded yet", hint="every `goldeval eval` records its run; evaluate first")
    card = history.scorecard(rows[0].id)
    return str(card.headline[0]) if card.headline else str(card.metrics[0])


def _cell(point: dict | None) -> str:  # type: ignore[type-arg]
    if point is None:
        return "-"
    text = f"{point['value']:.3f}"
    if point["low"] is not None and point["high"] is not None:
        text += f" [dim]({point['low']:.2f}–{point['high']:.2f})[/dim]"
    return text


def _overlap(first: dict, last: dict) -> str:  # type: ignore[type-arg]
    """Whether the two intervals overlap: a rough reading only (`goldeval compare @A @B` runs the paired test)."""
    if None in (first["low"], first["high"], last["low"], last["high"]):
        return ""
    apart = last["low"] > first["high"] or last["high"] < first["low"]
    return ("; the intervals do not overlap" if apart else
            f"; the intervals overlap (paired test: goldeval compare @{first['run']} @{last['run']})")


def run_tag(args: argparse.Namespace) -> int:
    run_id = _history(args).tag(_ref(args.run), args.name)
    print(f"goldeval: run {run_id} is now @{args.name}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    history = _history(args)
    run_id = history.resolve(_ref(args.run))
    history.scorecard(run_id).save(args.out)
    print(f"goldeval: wrote run {run_id} to {args.out}", file=sys.stderr)
    return 0
