"""`goldeval demo`: the embedded default -- the standard library's own docs and a shipped golden set."""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from typing import TYPE_CHECKING

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.store.workspace import default_workspace

if TYPE_CHECKING:
    from goldeval.corpus.model import Corpus
    from goldeval.golden.model import GoldenSet


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "demo",
        help=COMMANDS["demo"],
        description="Build a corpus from the pydoc text of the standard library modules on this "
        "machine, load the golden set shipped with goldeval (questions phrased as a learner asks them, "
        "hard cases, off-topic questions), and print the scorecard and the misses. BM25 always runs; "
        "with the `dense` extra installed, the fast static embedder wordllama and a hybrid run beside it, "
        "so the first scorecard takes about 20 CPU seconds; the transformer minilm is one --retriever away "
        "(minutes on 2 cores the first time, then cached).",
    )
    flags.add(parser, "retriever", more="repeat to compare; add the transformer with --retriever dense:minilm",
              shown="bm25, dense:wordllama and hybrid:bm25+dense:wordllama when installed")
    flags.add(parser, "k")
    parser.add_argument("--no-misses", action="store_true", help="print the scorecard only")
    flags.add(parser, "no_cache", more="the demo's runs and statistics")
    flags.add(parser, "json", more="the results")
    flags.add(parser, "workspace", default=default_workspace())
    flags.add(parser, "llm", more="here: also generate questions with it and score them apart, with their leakage",
              old=("--synth-backend",))
    parser.set_defaults(func=run)


FAST_MODEL = "wordllama"
"""The demo's embedder: static word vectors embed the 199 pages in a few CPU seconds, where minilm (a
transformer) takes minutes on 2 cores for their 256-token windows (issue 19: the first `make demo` should
show its scorecard in under a minute on 2 cores; docs/demo.md has the times). minilm is one flag away."""
WITH_MINILM = "goldeval demo --retriever bm25 --retriever dense:minilm --retriever 'hybrid:bm25+dense:minilm'"


def default_retrievers() -> list[str]:
    """BM25, and the fast embedder with its hybrid when the `dense` extra is installed."""
    if importlib.util.find_spec("wordllama") is None:
        print("goldeval: dense models not installed (pip install 'goldeval[dense]'); running BM25 only", file=sys.stderr)
        return ["bm25"]
    return ["bm25", f"dense:{FAST_MODEL}", f"hybrid:bm25+dense:{FAST_MODEL}"]


def _how_to_add_minilm() -> str:
    return (f"goldeval: the dense model here is {FAST_MODEL} (static word vectors: the demo's pages embed in a few CPU "
            "seconds). The transformer minilm (all-MiniLM-L6-v2) ranks these questions better (docs/demo.md) and "
            "takes minutes on 2 cores to embed the demo the first time (then it is cached); add it with\n    "
            + WITH_MINILM)


def run(args: argparse.Namespace) -> int:
    from goldeval.cli.output import check_json_out
    from goldeval.store.workspace import Workspace

    check_json_out(args.json)
    workspace = Workspace.at(args.workspace)  # the demo corpus, runs and statistics are kept there (issue 9)
    with workspace.undone_on_failure(workspace.check()):  # a failed demo leaves no empty workspace behind
        return _demo(args)


def _demo(args: argparse.Namespace) -> int:
    """`run` once the workspace is known to be writable."""
    from goldeval.cli.eval_cmd import parse_ks
    from goldeval.cli.output import save_json
    from goldeval.corpus.stdlib import build_stdlib_corpus
    from goldeval.evaluation import evaluate
    from goldeval.golden.demo import demo_golden_path, drop_unavailable
    from goldeval.golden.io import load_golden
    from goldeval.report.terminal import render
    from goldeval.stats.annotate import compare

    started = time.perf_counter()
    from goldeval.progress import progress_callback

    corpus = build_stdlib_corpus(workspace=args.workspace,
                                 progress=progress_callback("rendering the stdlib docs", unit="modules"))
    for warning in corpus.warnings:
        print(f"goldeval: warning: {warning}", file=sys.stderr)
    golden = drop_unavailable(load_golden(demo_golden_path()), corpus)
    golden.path = "demo_golden.jsonl (shipped with goldeval)"  # not this machine's site-packages path
    print(f"goldeval: demo corpus: {len(corpus)} stdlib modules; golden set: {len(golden.answerable)} "
          f"answerable + {len(golden.off_topic)} off-topic questions", file=sys.stderr)
    evaluated = _with_generated(args, corpus, golden)
    retrievers = args.retriever or default_retrievers()
    card = compare(evaluate(
        retrievers,
        evaluated,
        corpus=corpus,
        k=parse_ks(args.k),
        workspace=args.workspace,
        progress=True,  # a bar on a terminal, periodic lines in a log (goldeval.progress)
        cache=not args.no_cache,
    ), passages=corpus.passages(), golden=evaluated if evaluated is not golden else None,
        workspace=None if args.no_cache else args.workspace)
    card.golden["shipped"] = True  # inside goldeval, not a file of the user's: pages offer no command that edits it
    if args.json:
        save_json(args.json, card.save)  # a file, or `--json -`: stdout
    render(card, show_misses=not args.no_misses)
    if evaluated is golden:
        from goldeval.synth.demo import ENABLE_HINT

        print(f"\ngoldeval: {ENABLE_HINT}", file=sys.stderr)
    if f"dense:{FAST_MODEL}" in retrievers and not any("minilm" in spec for spec in retrievers):
        print(_how_to_add_minilm(), file=sys.stderr)
    print(f"goldeval: demo finished in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


def _with_generated(args: argparse.Namespace, corpus: Corpus, golden: GoldenSet) -> GoldenSet:
    """With a question generator configured, the shipped set with generated questions beside it: one
    scorecard whose headline and verdicts are the hand-written questions', the generated ones shown beside
    (`goldeval.golden.model.headline_split`), with their leakage. Without one, the shipped set as it is
    (and the hint on how to add one). Nothing is fabricated."""
    from goldeval.synth.demo import demo_synthetic

    generated = demo_synthetic(corpus, golden, workspace=args.workspace, backend=args.llm)
    if generated is None:
        return golden
    print(f"goldeval: {len(generated.golden)} generated questions (unreviewed, from {generated.path}) are "
          "scored beside the hand-written ones, never pooled in", file=sys.stderr)
    return golden.joined(generated.golden)
