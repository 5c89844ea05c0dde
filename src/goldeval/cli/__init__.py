"""The `goldeval` command line: a thin layer, one module per subcommand.

Each command's module (`goldeval.cli.NAME_cmd`) defines `register(subparsers)`, which adds its parser
(with `help=COMMANDS[NAME]`) and sets `func=run`; `run(args) -> int` returns the exit code (0 ok, 1 a gate
failed, 2 bad input, 3 ran with retriever errors; `cli.guard` maps exceptions and signals to codes,
docs/reliability.md lists them all). Machine output (JSON, TSV, trec_eval format) goes to stdout;
progress and diagnostics to stderr.

Only the command being run is imported (issue 22): `goldeval --help` lists COMMANDS without importing
any command module, so it starts in well under 0.3 s (`python -m bench cli`); `goldeval eval ...` imports
eval's module alone, and that module imports its heavy parts inside the command.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from goldeval import __version__
from goldeval.errors import EXIT_BAD_INPUT

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS = {
    "eval": "evaluate retrievers on a corpus and a golden set",
    "demo": "evaluate on a corpus built from the Python stdlib's own docs (no download)",
    "golden": "check, import, export, freeze or grow a golden set",
    "trec": "trec_eval-compatible evaluation of a TREC run against TREC qrels",
    "compare": "compare retrievers or saved evaluations on the same questions",
    "models": "list the offline embedding models and how to install the missing ones",
    "serve": "show the scorecard in the browser (a local web server)",
    "report": "write the scorecard page as one self-contained HTML file",
    "synth": "generate candidate questions from the corpus with a language model",
    "review": "review generated or log-suggested questions in the browser; accepted ones go into the golden set",
    "pool": "judge the unjudged passages of every retriever's top k, in the browser",
    "judge": "grade passages with a language model, and measure it against people's judgments",
    "history": "list recorded runs, show trends on a frozen golden set, tag baselines",
    "sweep": "evaluate every configuration of a grid of dials (chunking, model, fusion, rerank)",
    "pg": "list and drop what goldeval left in a PostgreSQL database",
    "docs": "read goldeval's documentation, installed with it (goldeval docs PAGE)",
}
"""Each command's one-line help, in the order `goldeval --help` lists them (the one home of these lines)."""

SUBCOMMANDS = list(COMMANDS)

_ALL = object()


def build_parser(only: str | None | object = _ALL) -> argparse.ArgumentParser:
    """The `goldeval` parser with every command (the default), or with only the command `only` fully
    registered and the others as one-line entries (what `main` does; None: no command imported)."""
    parser = argparse.ArgumentParser(
        prog="goldeval",
        description="Tell whether your retrieval is any good, and whether a change made it better or worse.",
        epilog="Exit codes: 0 ok, 1 the evaluation ran and a gate failed, 2 bad input or usage (or an output "
        "that cannot be written), 3 the evaluation ran but a retriever failed on some questions, 4 a bug in "
        "goldeval, 128+N stopped by signal N (`goldeval docs reliability`).",
    )
    parser.add_argument("--version", action="version", version=f"goldeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if only is _ALL or only == name:
            try:
                module = importlib.import_module(f"goldeval.cli.{name}_cmd")
            except ModuleNotFoundError as exc:
                if exc.name != f"goldeval.cli.{name}_cmd":
                    raise
                continue  # subcommand not built yet
            module.register(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    if only is not None:  # `goldeval --help` lists commands only: it imports no cli module
        from goldeval.cli.options import use_formatter

        use_formatter(parser)  # every option's default printed from its declaration (cli.options)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command `argv` names: its first word that is not an option (the top level takes no values)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=command_of(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    from goldeval.cli.guard import run_guarded

    return run_guarded(_command, args)  # errors, signals and bugs: an exit code and one line, no traceback


def _command(args: argparse.Namespace) -> int:
    """The command, with `--json -` making its JSON all of stdout (`cli.output`); stdout is back before the
    guard sees how it ended (a reader that went away is stdout's, not stderr's)."""
    from goldeval.cli.output import json_on_stdout
    from goldeval.memory import small_pages_only

    with json_on_stdout(args), small_pages_only():  # a command's arrays in ordinary pages (`goldeval.memory`)
        return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
