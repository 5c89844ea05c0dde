"""`goldeval report`: the scorecard page as one self-contained HTML file (works offline, from disk)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "report",
        help=COMMANDS["report"],
        description="Write the same page as `goldeval serve` into one HTML file: its CSS, JavaScript and "
        "the results are inlined, so it opens from disk with no server and no network (no CDN, no "
        "external fonts or scripts). Several results files can be compared in the page. "
        "Exit 0 ok, 2 bad input.",
        epilog="example:\n  goldeval eval --corpus docs/ --golden golden.jsonl --json results.json\n"
        "  goldeval report results.json --html scorecard.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", metavar="RESULTS.json", type=Path, nargs="+", help="results written by `goldeval eval --json`")
    flags.add(parser, "html", more="the scorecard page", required=True)
    flags.shown(parser.add_argument("--title", metavar="TEXT", help="the page title"), "goldeval scorecard")
    parser.add_argument("--history", action="store_true",
                        help="include the trend of the workspace's run history (each retriever on one frozen golden-set version)")
    flags.add(parser, "judges")
    flags.add(parser, "workspace", more="here: its run history, with --history")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from goldeval.report.html import write_html_report
    from goldeval.store.atomic import check_writable

    check_writable(args.html, what="--html output")  # before the results are read and rendered
    history = None
    if args.history:
        from goldeval.store.workspace import default_workspace

        history = args.workspace or default_workspace()
    judges = read_judges(args.judges) if args.judges else None
    out = write_html_report(args.results, args.html, title=args.title, history=history, judges=judges)
    size = out.stat().st_size
    print(f"goldeval: wrote {out} ({size / 1024:,.0f} KB, self-contained; open it in a browser)", file=sys.stderr)
    return 0


def read_judges(path: Path) -> dict[str, object]:
    """The JSON `goldeval judge --json` wrote, or one InputError naming the file (the report's and serve's
    Judges tab)."""
    from goldeval.corpus.files import json_value, read_input_text
    from goldeval.errors import InputError

    hint = "pass the file `goldeval judge ... --json OUT` wrote"
    data = json_value(read_input_text(path, "judges file"), path=path, line=None, what="judges file", hint=hint)
    if not isinstance(data, dict) or not {"calibration", "labels", "calls"} <= data.keys():
        raise InputError("this is not a judges file: it lacks `calibration`, `labels` or `calls`", path=path, hint=hint)
    return data
