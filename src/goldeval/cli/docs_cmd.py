"""`goldeval docs [PAGE]`: the documentation installed with goldeval, readable without the repository.

The pages are the repository's docs/*.md, carried in the wheel as package data (`goldeval/manual` is a link
to docs/, so the pages have one home). Help texts and error hints point here (`goldeval docs sweep`)
rather than at docs/*.md, which a pip user does not have (issue 22).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from importlib import resources
from pathlib import Path

from goldeval.cli import COMMANDS
from goldeval.errors import EXIT_OK, InputError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "docs",
        help=COMMANDS["docs"],
        description="Without PAGE, list the documentation pages installed with goldeval and where they are; "
        "with PAGE (e.g. sweep, golden, results-json), print that page (Markdown) to stdout. Exit 0 ok, "
        "2 no such page.",
    )
    parser.add_argument("page", nargs="?", metavar="PAGE", help="a page name, as listed without PAGE")
    parser.set_defaults(func=run)


def folder() -> Path:
    """Where the installed pages are."""
    return Path(str(resources.files("goldeval") / "manual"))


def pages() -> dict[str, Path]:
    """Page name -> its file, in name order."""
    return {p.stem: p for p in sorted(folder().glob("*.md"))}


def page_text(name: str) -> str:
    """One page's Markdown; InputError naming the closest page for an unknown name."""
    found = pages()
    key = name.removesuffix(".md").removeprefix("docs/")
    if key not in found:
        close = difflib.get_close_matches(key, list(found), n=1)
        hint = f"did you mean `goldeval docs {close[0]}`?" if close else "run `goldeval docs` for the list"
        raise InputError(f"no documentation page {name!r}", value=name, hint=hint)
    return found[key].read_text(encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    if args.page:
        sys.stdout.write(page_text(args.page))
        return EXIT_OK
    print(f"goldeval's documentation ({folder()}); read one with `goldeval docs PAGE`:")
    for name, path in pages().items():
        title = next((line.lstrip("# ").strip() for line in path.read_text(encoding="utf-8").splitlines()
                      if line.startswith("#")), "")
        print(f"  {name:<14} {title}")
    return EXIT_OK
