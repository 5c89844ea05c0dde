"""`goldeval models`: the embedding models goldeval knows, which are installed, how to get the rest."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "models",
        help=COMMANDS["models"],
        description="List the embedding models of goldeval's registry (short names for dense:MODEL), "
        "whether each is installed in this environment, its dimension and maximum length, and the "
        "command that installs it, and for a model with int8 and float32 variants (minilm) the variants and "
        "which is faster on this machine, once dense:MODEL?precision=auto has measured it here. "
        "Their weights come from installed packages; nothing is downloaded. "
        "Any sentence-transformers model of the Hugging Face hub also works by name, from your HF cache: "
        "dense:hf:ORG/NAME[@REVISION] (`goldeval docs models`).",
    )
    flags.add(parser, "json", more="the list of models", nargs="?", const=flags.BARE_JSON)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rows = model_rows()
    if args.json is not None:
        text = json.dumps(rows, indent=2) + "\n"
        if flags.bare_json(args.json):  # the old stdout form, for one release
            sys.stdout.write(text)
            return 0
        from goldeval.cli.output import write_json

        write_json(args.json, text)  # a file, or `--json -`: stdout (the table goes to stderr then)
    from goldeval.textsafe import safe_console

    render_models(rows, safe_console())  # a model folder's name is the user's text
    return 0


def model_rows() -> list[dict[str, Any]]:
    """One row per registered model: what it is, whether it is installed, how to install it."""
    from goldeval.retrievers.encoders.precision import read_decision
    from goldeval.retrievers.encoders.registry import registry

    rows: list[dict[str, Any]] = []
    for spec in registry().values():
        missing = spec.missing_packages()
        decision = read_decision(spec) if spec.precisions and not missing else None
        rows.append({
            "name": spec.name, "installed": not missing, "runtime": spec.runtime, "dim": spec.dim,
            "max_length": spec.max_length,
            "query_prefix": spec.query_prefix, "passage_prefix": spec.passage_prefix,
            "description": spec.description, "packages": list(spec.packages), "missing": missing,
            "extra": spec.extra, "install": spec.pip,
            "precisions": [{"precision": p, "runtime": spec.variant(p).runtime, "default": p == spec.default_precision}
                           for p in spec.precisions],
            "faster_here": decision.to_config() if decision is not None else None,
        })
    return rows


def precision_line(row: dict[str, Any]) -> str:
    """A model's variants, and which is faster on this machine when `precision=auto` measured it here."""
    from rich.markup import escape

    name, variants = row["name"], row["precisions"]
    shown = "; ".join(f"{v['precision']}{' (default)' if v['default'] else ''}: {v['runtime']}" for v in variants)
    other = next(v["precision"] for v in variants if not v["default"])
    line = f"{name} precisions: {shown} (dense:{name}?precision={other}). "
    faster = row["faster_here"]
    if faster is None:
        line += (f"Faster here: not measured on this machine yet (dense:{name}?precision=auto measures it once, "
                 "in seconds, and uses it).")
    else:
        rates = ", ".join(f"{p} {r:g}" for p, r in faster["passages_per_cpu_s"].items())
        line += (f"Faster here: {faster['chose']} ({rates} passages per CPU second on {faster['cores']} cores, "
                 f"measured {faster['measured']}); precision=auto uses it.")
    return escape(line)


def render_models(rows: list[dict[str, Any]], console: Any) -> None:
    """The table and an install line per missing model. Every text is escaped: rich reads `[st]` in
    `pip install 'goldeval[st]'` as markup and would print `pip install 'goldeval'` (issue 13)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Embedding models (use as dense:NAME)", title_justify="left")
    for column in ("name", "installed", "runs as", "dim", "max len", "extra", "description"):
        table.add_column(column)
    for row in rows:
        table.add_row(escape(row["name"]), "yes" if row["installed"] else "no", escape(row["runtime"] or "-"), str(row["dim"]),
                      str(row["max_length"] or "-"), escape(row["extra"]), escape(row["description"]))
    console.print(table)
    for row in rows:
        if row["precisions"]:
            console.print(precision_line(row), highlight=False)
    for row in rows:
        if not row["installed"]:
            console.print(f"[bold]{escape(row['name'])}[/]: missing {escape(', '.join(row['missing']))}; "
                          f"install with: {escape(row['install'])}", highlight=False)
    console.print(escape("A sentence-transformers folder also works: dense:/path/to/folder (extra st), and a Hugging "
                         "Face hub model by name: dense:hf:ORG/NAME[@REVISION], e.g. dense:hf:BAAI/bge-small-en-v1.5 "
                         "(`goldeval docs models`)."), highlight=False)
