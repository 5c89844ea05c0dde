"""The one vocabulary of command-line options (issue 22): every flag that more than one command takes is
declared here once (its spelling, what it means, its type and default) and added to parsers from here.

- `add(parser, NAME, more=..., old=(...), **variant)` adds `OPTIONS[NAME]`; `more` appends what the flag
  does in this command to the one meaning (`"<meaning>; <more>"`), and `variant` may change only the
  default (`default`, `shown`), how many values it takes (`action`, `nargs`, `metavar`: a sweep's dial takes
  a list of the values eval takes one of) and `required`, never the spelling, the dest, the type or the choices.
- `old` spellings keep working for one release: each prints one line on stderr naming the new spelling
  (`Renamed`), and is hidden from `--help`. CHANGELOG.md lists them. A flag a command no longer uses is
  taken the same way for one release, with one line saying why it does nothing (`Unused`).
- Defaults are printed by the parser (`HelpFormatter`), from the declaration: no help text writes its
  own "(default: ...)"; an option whose parser default is not the value used (an environment variable, a
  value resolved later) says it in words (`shown`).

`tests/test_cli_options.py` walks every parser and fails when one flag name has two meanings or one
meaning two spellings. This module is imported by `goldeval --help`: it imports nothing heavy.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["OPTIONS", "HelpFormatter", "Option", "RawHelpFormatter", "Renamed", "add", "bare_json", "renamed", "shown",
           "use_formatter"]

BARE_JSON = object()
"""What `--json` holds when given without OUT where it once printed to stdout (`models`, `history`); not a
string, which argparse would read as a path."""


@dataclass(frozen=True)
class Option:
    """One shared flag: its spelling, its one meaning (the help), and how argparse reads it.

    `kind` names the type: "path", "int", or a `goldeval.limits.NUMBERS` name (bounds checked there);
    `shown` is the default in words when the parser's default is not what is used."""

    flag: str
    help: str
    kind: str | None = None
    metavar: str | None = None
    action: str | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None
    shown: str | None = None

    @property
    def dest(self) -> str:
        """The namespace attribute: the flag without its dashes, `-` as `_`."""
        return self.flag.lstrip("-").replace("-", "_")


def _o(flag: str, help: str, **kwargs: Any) -> Option:  # noqa: A002 - argparse's own word
    return Option(flag, help, **kwargs)


_WORKSPACE = "$GOLDEVAL_WORKSPACE, else .goldeval"

OPTIONS: dict[str, Option] = {o.dest: o for o in (
    # inputs
    _o("--corpus", "the corpus: a folder (.md .rst .txt .html), a JSONL file, a BEIR folder or a Cranfield folder",
       kind="path", metavar="PATH"),
    _o("--golden", "the golden set (JSONL; `goldeval docs golden`)", kind="path", metavar="FILE"),
    _o("--qrels", "a TREC qrels file (qid 0 docno rel)", kind="path", metavar="FILE"),
    _o("--topics", "a TREC topics file (SGML <top>, <topic number=...> or qid<TAB>text)", kind="path", metavar="FILE"),
    _o("--workspace", "goldeval's own folder: caches, indexes, stored runs and statistics, the run history",
       kind="path", metavar="DIR", shown=_WORKSPACE),
    # what is evaluated, and how
    _o("--retriever", "a retriever spec (`goldeval docs retrieval`)", metavar="SPEC",
       action="append", shown="bm25"),
    _o("--option", "retriever option for every retriever that declares KEY (repeatable; a spec's own ?KEY=VALUE "
       "wins), e.g. k1=0.9 or batch_size=64", metavar="KEY=VALUE", action="append", default=[]),
    _o("--index", "the vector index of dense retrievers: exact, ann (HNSW) or pgvector (PostgreSQL, with --dsn)",
       choices=("exact", "ann", "pgvector"), shown="exact, or a spec's own ?backend="),
    _o("--dsn", "a PostgreSQL connection string (postgresql://USER@HOST:PORT/DB)", metavar="DSN"),
    _o("--model", "an offline embedding model (`goldeval models`)", metavar="MODEL"),
    _o("--llm", "the language model: anthropic:MODEL, openai:MODEL[?base_url=URL], transformers:FOLDER or "
       "module:function (`goldeval docs synthetic`)", metavar="SPEC", shown="$GOLDEVAL_SYNTH_BACKEND"),
    _o("--chunk", "split documents into chunks of SIZE characters with OVERLAP, heading-aware; none: whole documents",
       metavar="SIZE[:OVERLAP]", default="none"),
    _o("--level", "doc: a chunk counts for its document; chunk: expected chunk ids must be retrieved",
       choices=("doc", "chunk"), default="doc"),
    _o("--depth", "results per question, how deep each ranking goes", kind="depth", metavar="N", default=100),
    # what is measured
    _o("--k", "cut-offs for hit/recall/precision/nDCG, comma-separated", metavar="K,K,...", default="1,5,10"),
    _o("--metric", "a metric by name, e.g. recall@100 or map@10 (`goldeval docs metrics`)", metavar="NAME",
       action="append", default=[]),
    _o("--headline", "the metric verdicts lead with, in every view; set it to the k your LLM receives, e.g. hit@3",
       metavar="METRIC", shown="hit@5, MRR and nDCG@5"),
    _o("--seed", "the random seed: the same seed gives the same numbers", kind="seed", metavar="N", default=0),
    _o("--resamples", "bootstrap resamples and randomization rounds", kind="resamples", metavar="N", default=10_000),
    _o("--judges", "what `goldeval judge --json` wrote, shown in a Judges tab (calibration against people, the "
       "ranking check)", kind="path", metavar="JUDGES.json"),
    _o("--no-cache", "compute again, even where the workspace holds the result of unchanged inputs",
       action="store_true"),
    # outputs
    _o("--json", "write JSON to OUT (a file, written atomically), or to stdout with `--json -` (then the JSON "
       "is all stdout holds: tables and notes go to stderr)", kind="path", metavar="OUT"),
    _o("--markdown", "write Markdown (for a pull-request comment) to OUT", kind="path", metavar="OUT"),
    _o("--html", "write one self-contained HTML file to OUT", kind="path", metavar="OUT"),
    _o("--out", "the file to write", kind="path", metavar="FILE"),
    _o("--force", "overwrite output files that exist", action="store_true"),
    _o("--details", "print every metric, not only the verdicts", action="store_true"),
    _o("--quiet", "no progress lines on stderr", action="store_true"),
    _o("--dry-run", "say what would be done, and do nothing", action="store_true"),
    _o("--limit", "list at most N", kind="limit", metavar="N", default=20),
    _o("--no-history", "do not record this run in the run history (or set GOLDEVAL_NO_HISTORY=1)",
       action="store_true"),
    # who acted
    _o("--by", "who acted, recorded with every change made", metavar="NAME", shown="$USER"),
    # pages
    _o("--open", "open the page in the default browser", action="bool", shown="open when stdout is a terminal"),
    _o("--host", "address to bind (127.0.0.1: this machine only)", metavar="HOST", default="127.0.0.1"),
    _o("--port", "port to listen on (0 picks a free one)", kind="int", metavar="PORT", default=8765),
)}
"""The shared options by dest; `add` is the only way a parser gets one."""

_VARIANT = frozenset({"default", "shown", "action", "nargs", "metavar", "required", "const"})


def add(parser: argparse._ActionsContainer, name: str, *, more: str | None = None, old: tuple[str, ...] = (),
        **variant: Any) -> argparse.Action:
    """Add the shared option `name` to `parser`; `old` spellings warn and still work (see the module)."""
    option = OPTIONS[name]
    unknown = set(variant) - _VARIANT
    if unknown:
        raise TypeError(f"{option.flag}: {sorted(unknown)} would change its meaning; declare that in OPTIONS")
    shown = variant.pop("shown", option.shown)
    text = option.help + (f"; {more}" if more else "")
    kwargs: dict[str, Any] = {"dest": option.dest, "help": text}
    action = variant.pop("action", option.action)
    if action == "bool":
        kwargs["action"] = argparse.BooleanOptionalAction
        kwargs["default"] = variant.pop("default", sys.stdout.isatty())
    elif action:
        kwargs["action"] = action
    if option.kind is not None and action not in ("store_true", "bool"):
        kwargs["type"] = _type(option.kind)
    for key in ("metavar", "choices", "default"):
        value = getattr(option, key)
        if value is not None and key not in kwargs and not (key == "metavar" and action in ("store_true", "bool")):
            kwargs[key] = list(value) if isinstance(value, list) else value
    kwargs.update(variant)
    made = parser.add_argument(option.flag, **kwargs)
    made.help = text  # BooleanOptionalAction appends its own "(default: ...)": the formatter prints it
    made.shown_default = shown  # type: ignore[attr-defined]
    made.home = name  # type: ignore[attr-defined]
    return renamed(parser, made, *old)


def renamed(parser: argparse._ActionsContainer, action: argparse.Action, *old: str) -> argparse.Action:
    """Let each `old` spelling of `action` work for one release, hidden from `--help`, with a warning (`Renamed`)."""
    for spelling in old:
        parser.add_argument(spelling, dest=action.dest, action=Renamed, target=action, type=action.type or str,
                            choices=action.choices, metavar=action.metavar, help=argparse.SUPPRESS)
    return action


def shown(action: argparse.Action, text: str) -> argparse.Action:
    """Say `action`'s default in words (for an option one command declares whose parser default is None)."""
    action.shown_default = text  # type: ignore[attr-defined]
    return action


def _type(kind: str) -> Any:
    if kind == "path":
        return Path
    if kind == "int":
        return int
    from goldeval.limits import number_type

    return number_type(kind)


class Renamed(argparse.Action):
    """An old spelling: one warning naming the new one, then exactly what the new spelling does."""

    def __init__(self, option_strings: list[str], dest: str, *, target: argparse.Action, **kwargs: Any) -> None:
        kwargs["nargs"] = target.nargs
        super().__init__(option_strings, dest, **kwargs)
        self.target = target

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from goldeval.textsafe import warn

        new = self.target.option_strings[0]
        warn(f"{option_string} is renamed {new}; the old spelling goes in the next release (CHANGELOG.md)")
        self.target(parser, namespace, values, new)


class Unused(argparse.Action):
    """A flag a command no longer uses: hidden from `--help`, taken with its value for one release so older
    scripts run, with one warning saying why it does nothing."""

    def __init__(self, option_strings: list[str], dest: str, *, reason: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.reason = reason

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from goldeval.textsafe import warn

        warn(f"{option_string} is not used: {self.reason}; the flag goes in the next release (CHANGELOG.md)")


def bare_json(value: object) -> bool:
    """True for `--json` given without OUT (the old stdout form of `models` and `history`), after one warning."""
    if value is not BARE_JSON:
        return False
    from goldeval.textsafe import warn

    warn("--json without OUT is renamed --json OUT (a file), or --json - for stdout; the bare form goes in the "
         "next release")
    return True


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, each option followed by its default from the declaration (no hand-written one)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if text == argparse.SUPPRESS or "%(default)" in text or not action.option_strings:
            return action.help
        shown = getattr(action, "shown_default", None)
        default = action.default
        unset = default is None or default is False or default == [] or default is argparse.SUPPRESS
        if shown is None and not (unset or action.nargs == 0):
            shown = ",".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})" if shown else text


class RawHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """`HelpFormatter` keeping the description and epilog as written (examples, tables)."""


def use_formatter(parser: argparse.ArgumentParser) -> None:
    """Give `parser` and every parser below it the formatter that prints defaults."""
    raw = issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter)  # type: ignore[arg-type]
    parser.formatter_class = RawHelpFormatter if raw else HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                use_formatter(child)
