"""The `goldeval` command line: a thin layer, one module per subcommand.

Each module in SUBCOMMANDS defines `register(subparsers)`, which adds its parser and sets
`func=run`; `run(args) -> int` returns the exit code (0 ok, 1 a gate failed, 2 bad input, 3 ran with
retriever errors; `cli.guard` maps exceptions and signals to codes, docs/reliability.md lists them all).
Machine output (JSON, TSV, trec_eval format) goes to stdout; progress and diagnostics to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from goldeval import __version__
from goldeval.errors import EXIT_BAD_INPUT

__all__ = ["build_parser", "main"]

SUBCOMMANDS = ["eval", "demo", "golden", "trec", "compare", "models", "serve", "report", "synth", "review", "pool",
               "history", "sweep", "pg"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="goldeval",
        description="Tell whether your retrieval is any good, and whether a change made it better or worse.",
        epilog="Exit codes: 0 ok, 1 the evaluation ran and a gate failed, 2 bad input or usage (or an output "
        "that cannot be written), 3 the evaluation ran but a retriever failed on some questions, 4 a bug in "
        "goldeval, 128+N stopped by signal N (docs/reliability.md).",
    )
    parser.add_argument("--version", action="version", version=f"goldeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"goldeval.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"goldeval.cli.{name}_cmd":
                raise
            continue  # subcommand not built yet
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    from goldeval.cli.guard import run_guarded

    return run_guarded(args.func, args)  # errors, signals and bugs: an exit code and one line, no traceback


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
