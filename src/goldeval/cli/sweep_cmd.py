"""`goldeval sweep`: every configuration of a grid, each stage cached by content (docs/sweep.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import InputError
from goldeval.limits import number_type

if TYPE_CHECKING:
    from goldeval.store.workspace import Workspace

EPILOG = """\
dials (lists are comma-separated; a dial only multiplies the configurations it applies to):
  --chunk none,600:100       whole documents, or SIZE:OVERLAP characters
  --retriever bm25,dense,hybrid
  --model minilm-l3,wordllama        dense and hybrid models (`goldeval models`)
  --fusion rrf,norm --weight 0.3,0.5,0.7   hybrid only: bm25 gets w, dense 1 - w
  --rerank 0,50 --reranker dense:minilm    rerank the top N (0: none)

examples:
  goldeval sweep examples/sweep_cranfield.toml
  goldeval sweep --corpus docs/ --golden golden.jsonl --retriever hybrid --model minilm-l3,wordllama \\
      --weight 0.3,0.5,0.7 --chunk none,800:100 --json sweep.json --html sweep.html
  goldeval sweep sweep.toml --workers 2              # embedding and searches on a local Ray
  goldeval sweep sweep.toml --ray-address 10.0.0.5:6379   # join an existing Ray cluster
  goldeval sweep sweep.toml --k 1,3,5,20             # new cut-offs: scored from stored runs, nothing searched

A second run of the same sweep is served from the workspace: only fusion and scoring run again.
Exit 0 ok, 2 bad input.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "sweep", help=COMMANDS["sweep"],
        description="Evaluate every configuration of a grid: chunking, embedding model, retriever type, fusion "
        "method and weight, rerank depth. Chunks, embeddings and runs are stored by content in the workspace, "
        "so a changed fusion weight or k re-scores stored runs without searching. Reports every "
        "configuration's headline metrics with intervals, which are within noise of the best (paired tests, "
        "Holm), and quality against cost with the Pareto front.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", nargs="?", type=Path, metavar="SWEEP.toml", help="a sweep file (`goldeval docs sweep`); flags override it")
    flags.add(parser, "corpus")
    flags.add(parser, "golden")
    dial: dict[str, Any] = {"action": "store", "metavar": "LIST", "default": None}  # a dial: a comma-separated list of the values eval takes
    flags.add(parser, "chunk", more="the chunking dial, e.g. none,600:100", old=("--chunking",), **dial)
    flags.add(parser, "retriever", more="the retriever dial: kinds, e.g. bm25,dense,hybrid", shown="the sweep file's", **dial)
    flags.add(parser, "model", more="the model dial of dense and hybrid, e.g. minilm-l3,wordllama", **dial)
    for name, example in (("fusion", "rrf,norm"), ("weight", "0.3,0.5,0.7"), ("rerank", "0,50")):
        parser.add_argument(f"--{name}", metavar="LIST", help=f"values of the {name} dial, e.g. {example}")
    flags.shown(parser.add_argument("--reranker", metavar="SPEC", help="what --rerank uses: dense:MODEL, hf:ORG/NAME, ce:FOLDER, "
                                    "api:MODEL?url=URL (a rerank API, priced on the cost axis) or module:function"),
                "dense:minilm")
    file = "the sweep file's, else "
    flags.add(parser, "k", more="a new k searches nothing", default=None, shown=file + "1,5,10")
    flags.add(parser, "depth", default=None, shown=file + "100")
    flags.add(parser, "headline", more="configurations are ranked and tested on it", shown=file + "hit@5")
    flags.add(parser, "metric", more="added to the default metrics (repeatable)", default=None)
    flags.add(parser, "level", default=None, shown=file + "doc")
    flags.add(parser, "option")
    flags.add(parser, "workspace", more="here: chunks, embeddings and runs are stored there")
    parser.add_argument("--workers", metavar="N", type=number_type("workers"), help="run embedding and searches on a local Ray with N CPUs (extra `ray`)")
    parser.add_argument("--ray-address", metavar="HOST:PORT", help="run them on an existing Ray cluster instead")
    flags.add(parser, "json", more="the sweep (`goldeval docs sweep`)")
    flags.add(parser, "html", more="the sweep view (table, heatmap, Pareto plot)")
    parser.add_argument("--cards", metavar="DIR", type=Path, help="write each configuration's own results JSON into DIR")
    flags.add(parser, "seed", more="of the intervals and tests", default=None, shown=file + "0")
    flags.add(parser, "resamples", default=None, shown=file + "10000")
    parser.add_argument("--max-cells", type=number_type("max-cells"), default=500, help="refuse grids of more configurations")
    flags.shown(parser.add_argument("--top", type=number_type("top"), help="print only the best N rows"), "all")
    flags.add(parser, "no_history", more="here: none of the configurations")
    flags.add(parser, "dry_run", more="here: estimate the requests, tokens and dollars of the grid's API models "
              "(embedding cache counted), call nothing")
    flags.add(parser, "quiet")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from goldeval.store.workspace import Workspace

    settings, grid = _inputs(args)
    if settings.corpus is None or settings.golden is None:
        raise InputError("a sweep needs a corpus and a golden set",
                         hint="pass --corpus PATH --golden FILE, or a sweep file with corpus = and golden =")
    workspace = Workspace.at(args.workspace)
    with workspace.undone_on_failure(workspace.check()):  # a failed sweep leaves no empty workspace behind
        return _swept(args, settings, grid, workspace)


def _swept(args: argparse.Namespace, settings: Any, grid: Any, workspace: Workspace) -> int:
    """`run` once the workspace is known to be writable."""
    from goldeval.cli.output import check_json_out
    from goldeval.corpus import load_corpus
    from goldeval.errors import EXIT_OK, EXIT_RAN_WITH_ERRORS
    from goldeval.golden.io import load_golden
    from goldeval.report.sweep_terminal import render_sweep
    from goldeval.store.atomic import check_writable
    from goldeval.sweep import make_executor, sweep

    check_json_out(args.json, "sweep JSON")  # now, not after an hour of searching
    if args.html is not None:
        check_writable(args.html, what="sweep view")
    corpus = load_corpus(settings.corpus)
    golden = load_golden(settings.golden, corpus=corpus)
    if args.dry_run:  # what the grid's API models would be sent, and nothing sent
        from goldeval.retrievers.dry_run import table
        from goldeval.sweep.run import estimate_sweep

        print(table(estimate_sweep(grid, golden, corpus=corpus, settings=settings, workspace=workspace.root,
                                   max_cells=args.max_cells)))
        return EXIT_OK
    executor = make_executor(workers=args.workers, address=args.ray_address, workspace=workspace.root)
    try:
        result = sweep(grid, golden, corpus=corpus, settings=settings, workspace=workspace.root, executor=executor,
                       progress=not args.quiet, record_history=not args.no_history, max_cells=args.max_cells)
    finally:
        executor.close()
    _write(args, result)
    render_sweep(result, limit=args.top)
    failed = [c.label for c in result.cells if c.n_errors]
    if failed:
        print(f"goldeval: {len(failed)} configuration(s) ran with retriever errors on some questions: "
              f"{', '.join(failed[:5])}{' ...' if len(failed) > 5 else ''}", file=sys.stderr)
        return EXIT_RAN_WITH_ERRORS
    return EXIT_OK


FLAG_OF_DIAL = {"chunking": "chunk"}
"""A dial spelled as eval spells the same setting (the sweep file's keys keep the dials' names)."""


def _inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    """Settings and grid: the sweep file's, then the flags given on top."""
    from dataclasses import replace

    from goldeval.retrievers.options import parse_option_args
    from goldeval.sweep.config import Settings, load_sweep_file, settings_from_mapping
    from goldeval.sweep.grid import DIALS, Grid, grid_from_mapping, parse_list

    loaded = load_sweep_file(args.file) if args.file else None
    settings = loaded.settings if loaded else Settings()
    flags = {"corpus": args.corpus, "golden": args.golden, "k": args.k, "depth": args.depth, "headline": args.headline,
             "level": args.level, "metrics": args.metric, "seed": args.seed, "resamples": args.resamples}
    settings = settings_from_mapping(flags, base=Path.cwd(), where="the command line", into=settings)
    settings = replace(settings, options={**settings.options, **parse_option_args(args.option)})
    base = loaded.grid if loaded else Grid()
    values: dict[str, Any] = {**base.values(), "reranker": base.reranker}
    for dial in DIALS:
        given = getattr(args, FLAG_OF_DIAL.get(dial, dial))  # the chunking dial is eval's --chunk
        if given is not None:
            values[dial] = parse_list(given)
    if args.reranker is not None:
        values["reranker"] = args.reranker
    return settings, grid_from_mapping(values, where="the grid")


def _write(args: argparse.Namespace, result: Any) -> None:
    if args.json:
        from goldeval.cli.output import write_json

        write_json(args.json, json.dumps(result.to_dict(), indent=1, ensure_ascii=False, default=str))
    if args.html:
        from goldeval.report.sweep_html import write_sweep_html

        write_sweep_html(result, args.html)
        print(f"goldeval: wrote {args.html}", file=sys.stderr)
    if args.cards:
        args.cards.mkdir(parents=True, exist_ok=True)
        for n, cell in enumerate(result.cells, start=1):
            if cell.scorecard is not None:
                cell.scorecard.save(args.cards / f"{n:03d}.json")
        print(f"goldeval: wrote {len(result.cells)} results files to {args.cards} (001.json is the best)", file=sys.stderr)
