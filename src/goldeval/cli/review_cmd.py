"""`goldeval review`: accept, edit or reject generated questions in the browser; write accepted ones."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import InputError

EPILOG = """\
keys on the page:
  j / k or arrows   next / previous question
  a / r / u         accept / reject / undo the verdict (accept and reject move on)
  e                 edit the question (Enter saves, Esc cancels)
  1-9               toggle another possible answer as an expected document

examples:
  goldeval review synth.jsonl --golden golden.jsonl
  goldeval review synth.jsonl --golden golden.jsonl --by ana --port 0 --open
  goldeval review candidates.jsonl --golden golden.jsonl --corpus docs/   expected ids checked
Every action is saved at once: the candidates file keeps every question with its history (rejected
and edited ones too); the golden set gets exactly the accepted ones, with provenance and who reviewed
them, beside its own questions (left as they are). Stop the server with Ctrl+C.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "review",
        help=COMMANDS["review"],
        description="Serve a local page that shows one candidate question at a time: a generated one with its "
        "source passage (the question's words highlighted) and other passages that may also answer it; one "
        "suggested from a search log (`goldeval golden suggest`) with how often and how it was searched, its "
        "feedback and the closest golden question (add the documents that answer it before accepting). Accept, "
        "edit, reject, add expected documents, keyboard first. Only accepted questions are written into "
        "--golden (atomically). Exit 0 ok (after Ctrl+C), 2 bad input.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("candidates", metavar="FILE", type=Path, help="candidates written by `goldeval synth --out` or `goldeval golden suggest`")
    flags.add(parser, "golden", more="accepted questions are written into it (created if missing; its own lines are kept)",
              required=True)
    flags.add(parser, "corpus", more="here: expected documents it does not have are refused (naming the nearest one it has)")
    flags.add(parser, "by", more="here: who reviews, recorded on every action", old=("--reviewer",))
    flags.add(parser, "host")
    flags.add(parser, "port", default=8766)
    flags.add(parser, "open")
    parser.set_defaults(func=run)


def default_reviewer() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER", "") or "reviewer"


def run(args: argparse.Namespace) -> int:
    from goldeval.synth.review import ReviewSession
    from goldeval.web.app import make_server
    from goldeval.web.handler import is_loopback

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a port number", value=args.port, hint="use 1-65535, or 0 for a free port")
    ids = None
    if args.corpus is not None:
        from goldeval.corpus import load_corpus

        ids = set(load_corpus(args.corpus).documents)
    session = ReviewSession(args.candidates, args.golden, reviewer=args.by or default_reviewer(), corpus=ids)
    server = make_server(review=session, host=args.host, port=args.port, name="review")
    if not is_loopback(args.host):
        print(f"goldeval: warning: serving on {args.host}: anyone who can reach this machine can see and change "
              "these questions", file=sys.stderr)
    if ids is None:
        print("goldeval: note: expected documents are not checked against a corpus (pass --corpus PATH)",
              file=sys.stderr)
    counts = session.payload()["counts"]
    print(f"goldeval: reviewing {len(session.records)} question(s) ({counts['unreviewed']} unreviewed) at "
          f"{server.page_url('review')}  (Ctrl+C to stop); accepted ones go into {args.golden}", flush=True)
    from goldeval.cli.serving import serve_until_interrupted

    return serve_until_interrupted(server, open_browser=args.open, url=server.page_url("review"))
