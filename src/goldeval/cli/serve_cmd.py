"""`goldeval serve`: the live scorecard in the browser, from saved results or a fresh evaluation."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.cli.eval_cmd import add_eval_arguments
from goldeval.errors import InputError

if TYPE_CHECKING:
    from goldeval.web.live import ResultsFiles

EPILOG = """\
examples:
  goldeval serve results.json                       the page for saved results (it follows re-runs)
  goldeval serve before.json after.json             compare two result files
  goldeval serve --corpus docs/ --golden golden.jsonl --retriever bm25 --retriever dense:minilm
                                                   evaluate first, then serve
  goldeval serve results.json --golden golden.jsonl fix labels from a miss's details (written into
                                                   golden.jsonl and golden.changes.jsonl, with a reason)
The page shows the trend of the workspace's run history (--workspace) when it has one.
The server binds 127.0.0.1 (this machine only) unless --host says otherwise; it serves the page and
the loaded results, nothing else. Stop it with Ctrl+C.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "serve",
        help=COMMANDS["serve"],
        description="Start a local web server with the live scorecard: metric bars with intervals, a k "
        "control, every question with what ranked and why it missed, comparisons and off-topic "
        "thresholds. Give saved results files, or the same options as `goldeval eval` to evaluate first. "
        "Exit 0 ok (after Ctrl+C), 2 bad input.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", metavar="RESULTS.json", type=Path, nargs="*", help="results written by `goldeval eval --json`")
    add_eval_arguments(parser)
    flags.add(parser, "json", more="when evaluating, the results")
    flags.add(parser, "host")
    flags.add(parser, "port", default=8765)
    flags.add(parser, "open")
    flags.add(parser, "by", more="here: who fixes labels from the page", old=("--judge",))
    parser.set_defaults(func=run)


def payload_from_args(args: argparse.Namespace) -> dict[str, object] | ResultsFiles:
    """What the page shows: the given results files (re-read when they change, so an open page follows
    re-runs of `goldeval eval --json`), or the payload of a fresh evaluation with eval's options."""
    from goldeval.report.page import results_payload
    from goldeval.web.live import ResultsFiles

    if args.results:
        if args.corpus is not None:
            raise InputError(
                "give either results files or --corpus/--golden to evaluate, not both",
                hint="goldeval serve results.json [--golden golden.jsonl, to fix labels]   or   "
                "goldeval serve --corpus docs/ --golden golden.jsonl",
            )
        return ResultsFiles(args.results)
    if args.golden is None:
        raise InputError(
            "nothing to serve: no results file and no golden set",
            hint="goldeval serve results.json   or   goldeval serve --corpus docs/ --golden golden.jsonl",
        )
    from goldeval.cli.eval_cmd import run_eval

    card = run_eval(args)
    if args.json:
        card.save(args.json)
        print(f"goldeval: wrote {args.json}", file=sys.stderr)
    return results_payload([card.to_dict()], names=[Path(args.golden).name])


def fixes_golden(golden: Path | None) -> Path | None:
    """The golden-set file label fixes from the page are written into: `--golden` when it is JSONL.
    Fixes rewrite the set as JSONL (`goldeval.judging.edits`), so another format is left as it is."""
    if golden is not None and golden.suffix.lower() != ".jsonl":
        print(f"goldeval: note: {golden} is not a JSONL golden set: label fixes from the page are off "
              "(write it as JSONL with `goldeval golden import`, or fix labels by hand)", file=sys.stderr)
        return None
    return golden


def run(args: argparse.Namespace) -> int:
    from goldeval.web.handler import is_loopback
    from goldeval.web.server import make_server

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a port number", value=args.port, hint="use 1-65535, or 0 for a free port")
    payload = payload_from_args(args)
    golden = fixes_golden(args.golden)
    server = make_server(payload, host=args.host, port=args.port, quiet=True, workspace=args.workspace,
                         golden=golden, judge=args.by)
    if not is_loopback(args.host):
        what = "read these results" + (" and change the golden set" if golden else "")
        print(f"goldeval: warning: serving on {args.host}: anyone who can reach this machine can {what}",
              file=sys.stderr)
    if golden is not None:
        print(f"goldeval: label fixes from the page are written into {golden} (and its changelog)", file=sys.stderr)
    print(f"goldeval: serving the scorecard at {server.url}  (Ctrl+C to stop)", flush=True)
    from goldeval.cli.serving import serve_until_interrupted

    return serve_until_interrupted(server, open_browser=args.open)
