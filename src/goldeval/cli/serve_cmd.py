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
    from goldeval.scorecard import Scorecard
    from goldeval.web.live import ResultsFiles
    from goldeval.web.pool import PoolStore

EPILOG = """\
examples:
  goldeval serve results.json                       the page for saved results (it follows re-runs)
  goldeval serve before.json after.json             compare two result files
  goldeval serve --corpus docs/ --golden golden.jsonl --retriever bm25 --retriever dense:minilm
                                                   evaluate first, then serve
  goldeval serve results.json --golden golden.jsonl fix labels from a miss's details (written into
                                                   golden.jsonl and golden.changes.jsonl, with a reason),
                                                   and judge the unjudged top 10 at /pool
  goldeval serve results.json --golden golden.jsonl --candidates synth.jsonl
                                                   and review generated questions at /review
  goldeval serve results.json --judges judges.json  with a Judges tab (what `goldeval judge` found)
The page shows the trend of the workspace's run history (--workspace) when it has one.
One server, one port: the scorecard at /, pooled judging at /pool and the review at /review (the pages
it has data for; `goldeval pool` and `goldeval review` start the same server at their page). It binds
127.0.0.1 (this machine only) unless --host says otherwise; it serves the pages and their data, nothing
else. Stop it with Ctrl+C.
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
    parser.add_argument("--candidates", metavar="FILE", type=Path,
                        help="also review these candidate questions at /review (see `goldeval review`); accepted "
                        "ones go into --golden")
    flags.add(parser, "judges")
    parser.set_defaults(func=run)


def payload_from_args(args: argparse.Namespace, cards: list[Scorecard] | None = None) -> dict[str, object] | ResultsFiles:
    """What the page shows: the given results files (re-read when they change, so an open page follows
    re-runs of `goldeval eval --json`), or the payload of a fresh evaluation with eval's options. The
    scorecards shown (those the files held, or the fresh one) are appended to `cards` when given."""
    from goldeval.report.page import results_payload
    from goldeval.web.live import ResultsFiles

    if args.results:
        if args.corpus is not None:
            raise InputError(
                "give either results files or --corpus/--golden to evaluate, not both",
                hint="goldeval serve results.json [--golden golden.jsonl, to fix labels]   or   "
                "goldeval serve --corpus docs/ --golden golden.jsonl",
            )
        source = ResultsFiles(args.results, extra=_judges_of(args))
        if cards is not None:  # the scorecards it read: the pool is made from them, not from a second read
            cards.extend(source.cards)
        return source
    if args.golden is None:
        raise InputError(
            "nothing to serve: no results file and no golden set",
            hint="goldeval serve results.json   or   goldeval serve --corpus docs/ --golden golden.jsonl",
        )
    from goldeval.cli.eval_cmd import run_eval

    card = run_eval(args)
    if cards is not None:
        cards.append(card)
    if args.json:
        from goldeval.cli.output import save_json

        save_json(args.json, card.save)  # a file, or `--json -`: stdout (the serving line goes to stderr then)
    return {**results_payload([card.to_dict()], names=[Path(args.golden).name]), **_judges_of(args)}


def _judges_of(args: argparse.Namespace) -> dict[str, object]:
    """`--judges FILE`: the Judges tab's data (`goldeval judge --json`), read once at start."""
    if args.judges is None:
        return {}
    from goldeval.cli.report_cmd import read_judges

    return {"judges": read_judges(args.judges)}


def fixes_golden(golden: Path | None) -> Path | None:
    """The golden-set file label fixes from the page are written into: `--golden` when it is JSONL.
    Fixes rewrite the set as JSONL (`goldeval.judging.edits`), so another format is left as it is."""
    if golden is not None and golden.suffix.lower() != ".jsonl":
        print(f"goldeval: note: {golden} is not a JSONL golden set: label fixes from the page are off "
              "(write it as JSONL with `goldeval golden import`, or fix labels by hand)", file=sys.stderr)
        return None
    return golden


def pool_store(args: argparse.Namespace, golden: Path, cards: list[Scorecard]) -> PoolStore | None:
    """The /pool page's data: the unjudged passages of the top POOL_K of `cards` (the scorecards the page
    shows, read once by `payload_from_args`), judged into `golden` (the JSONL set label fixes go into);
    None when every one is judged."""
    from goldeval.cli.pool_cmd import POOL_K, make_pool
    from goldeval.judging.edits import GoldenFile
    from goldeval.web.pool import PoolStore

    labels = [Path(args.golden).name]
    if args.results:
        labels = [path.name for path in args.results]
        labels = labels if len(set(labels)) == len(labels) else [str(path) for path in args.results]
    file = GoldenFile(golden, judge=args.by)
    pool = make_pool(cards, labels, file.load(), k=POOL_K, corpus=None if args.results else args.corpus)
    return PoolStore(pool, file) if pool.items else None


def run(args: argparse.Namespace) -> int:
    from goldeval.web.app import make_server
    from goldeval.web.handler import is_loopback

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a port number", value=args.port, hint="use 1-65535, or 0 for a free port")
    if args.candidates is not None and args.golden is None:
        raise InputError("--candidates needs --golden, the golden set accepted questions are written into",
                         hint="goldeval serve results.json --golden golden.jsonl --candidates synth.jsonl")
    cards: list[Scorecard] = []
    payload = payload_from_args(args, cards)
    golden = fixes_golden(args.golden)
    pool = pool_store(args, golden, cards) if golden is not None else None
    review = None
    if args.candidates is not None:
        from goldeval.cli.review_cmd import default_reviewer
        from goldeval.synth.review import ReviewSession

        review = ReviewSession(args.candidates, args.golden, reviewer=args.by or default_reviewer())
    server = make_server(payload, pool=pool, review=review, host=args.host, port=args.port, quiet=True,
                         workspace=args.workspace, golden=golden, judge=args.by)
    if not is_loopback(args.host):
        what = "read these results" + (" and change the golden set" if golden or review else "")
        print(f"goldeval: warning: serving on {args.host}: anyone who can reach this machine can {what}",
              file=sys.stderr)
    if golden is not None:
        print(f"goldeval: label fixes from the page are written into {golden} (and its changelog)", file=sys.stderr)
    others = "".join(f", {name} at {server.page_url(name)}" for name in server.pages if name != "scorecard")
    print(f"goldeval: serving the scorecard at {server.url}{others}  (Ctrl+C to stop)", flush=True)
    from goldeval.cli.serving import serve_until_interrupted

    return serve_until_interrupted(server, open_browser=args.open)
