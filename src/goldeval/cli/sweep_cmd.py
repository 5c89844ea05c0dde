"""`goldeval sweep`: every configuration of a grid, each stage cached by content (docs/sweep.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from goldeval.cli import COMMANDS
from goldeval.errors import InputError
from goldeval.limits import number_type

EPILOG = """\
dials (lists are comma-separated; a dial only multiplies the configurations it applies to):
  --chunking none,600:100    whole documents, or SIZE:OVERLAP characters
  --retriever bm25,dense,hybrid
  --model minilm-l3,wordllama        dense and hybrid models (`goldeval models`)
  --fusion rrf,norm --weight 0.3,0.5,0.7   hybrid only: bm25 gets w, dense 1 - w
  --rerank 0,50 --reranker dense:minilm    rerank the top N (0: none)

examples:
  goldeval sweep examples/sweep_cranfield.toml
  goldeval sweep --corpus docs/ --golden golden.jsonl --retriever hybrid --model minilm-l3,wordllama \\
      --weight 0.3,0.5,0.7 --chunking none,800:100 --json sweep.json --html sweep.html
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
    parser.add_argument("--corpus", metavar="PATH", help="a folder, JSONL file, BEIR or Cranfield folder")
    parser.add_argument("--golden", metavar="FILE", help="the golden set")
    for dial, example in (("chunking", "none,600:100"), ("retriever", "bm25,dense,hybrid"), ("model", "minilm-l3,wordllama"),
                          ("fusion", "rrf,norm"), ("weight", "0.3,0.5,0.7"), ("rerank", "0,50")):
        parser.add_argument(f"--{dial}", metavar="LIST", help=f"values of the {dial} dial, e.g. {example}")
    parser.add_argument("--reranker", metavar="SPEC", help="what --rerank uses: dense:MODEL, ce:FOLDER or module:function (default: dense:minilm)")
    parser.add_argument("--k", metavar="K,K,...", help="cut-offs (default: 1,5,10); a new k searches nothing")
    parser.add_argument("--depth", metavar="N", type=number_type("depth"), help="results per question (default: 100)")
    parser.add_argument("--headline", metavar="METRIC", help="the metric configurations are ranked and tested on (default: hit@5)")
    parser.add_argument("--metric", metavar="NAME", action="append", help="extra metric (repeatable), e.g. recall@100")
    parser.add_argument("--level", choices=("doc", "chunk"), help="doc (default) or chunk level")
    parser.add_argument("--option", metavar="KEY=VALUE", action="append", default=[], help="retriever option for every retriever that declares KEY (repeatable)")
    parser.add_argument("--workspace", metavar="DIR", type=Path, help="where chunks, embeddings and runs are stored (default: $GOLDEVAL_WORKSPACE or .goldeval)")
    parser.add_argument("--workers", metavar="N", type=number_type("workers"), help="run embedding and searches on a local Ray with N CPUs (extra `ray`)")
    parser.add_argument("--ray-address", metavar="HOST:PORT", help="run them on an existing Ray cluster instead")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the sweep (documented in `goldeval docs sweep`) to OUT")
    parser.add_argument("--html", metavar="OUT", type=Path, help="write the sweep view (table, heatmap, Pareto plot) as one self-contained HTML file")
    parser.add_argument("--cards", metavar="DIR", type=Path, help="write each configuration's own results JSON into DIR")
    parser.add_argument("--seed", type=number_type("seed"), help="seed of the intervals and tests (default: 0)")
    parser.add_argument("--resamples", type=number_type("resamples"), help="bootstrap resamples and randomization rounds (default: 10000)")
    parser.add_argument("--max-cells", type=number_type("max-cells"), default=500, help="refuse grids of more configurations (default: 500)")
    parser.add_argument("--top", type=number_type("top"), help="print only the best N rows (default: all)")
    parser.add_argument("--no-history", action="store_true", help="do not record the configurations in the run history")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from goldeval.corpus import load_corpus
    from goldeval.errors import EXIT_OK, EXIT_RAN_WITH_ERRORS
    from goldeval.golden.io import load_golden
    from goldeval.report.sweep_terminal import render_sweep
    from goldeval.store.atomic import check_writable
    from goldeval.store.workspace import Workspace
    from goldeval.sweep import make_executor, sweep

    settings, grid = _inputs(args)
    if settings.corpus is None or settings.golden is None:
        raise InputError("a sweep needs a corpus and a golden set",
                         hint="pass --corpus PATH --golden FILE, or a sweep file with corpus = and golden =")
    workspace = Workspace.at(args.workspace)
    workspace.check()
    for out, what in ((args.json, "sweep JSON"), (args.html, "sweep view")):
        if out is not None:
            check_writable(out, what=what)  # now, not after an hour of searching
    corpus = load_corpus(settings.corpus)
    golden = load_golden(settings.golden, corpus=corpus)
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
        given = getattr(args, dial)
        if given is not None:
            values[dial] = parse_list(given)
    if args.reranker is not None:
        values["reranker"] = args.reranker
    return settings, grid_from_mapping(values, where="the grid")


def _write(args: argparse.Namespace, result: Any) -> None:
    from goldeval.store.atomic import write_atomic

    if args.json:
        write_atomic(args.json, json.dumps(result.to_dict(), indent=1, ensure_ascii=False, default=str))
        print(f"goldeval: wrote {args.json}", file=sys.stderr)
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
