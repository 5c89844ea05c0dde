"""`goldeval eval`: score one or more retrievers on your corpus and golden set."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.corpus.files import DEFAULT_MAX_BYTES
from goldeval.errors import EXIT_OK, EXIT_RAN_WITH_ERRORS, InputError, WriteError
from goldeval.retrievers.function import DEFAULT_TIMEOUT
from goldeval.store.workspace import default_workspace
from goldeval.textsafe import warn

if TYPE_CHECKING:
    from goldeval.evaluation import EvalSettings
    from goldeval.metrics.definitions import Metric
    from goldeval.scorecard.model import Scorecard

EPILOG = """\
retriever specs (`goldeval docs retrieval` has the full grammar):
  bm25[?stem=none&stopwords=none&k1=1.2&b=0.75]
                             BM25 (bm25s); English stemming and stopwords by default
  dense:MODEL[?backend=exact|ann|pgvector&batch_size=N]
                             an offline embedding model (`goldeval models`: minilm, minilm-l3,
                             e5-small, wordllama, mpnet-base, ...) or a sentence-transformers folder
  dense:hf:ORG/NAME[@REVISION][?query_prefix=...&passage_prefix=...]
                             a Hugging Face hub model by name, from your HF cache (token, HF_HUB_OFFLINE
                             respected), e.g. dense:hf:BAAI/bge-small-en-v1.5; prefixes of the common
                             families are added (`goldeval docs models`)
  dense:openai:MODEL[?base_url=URL&dimensions=N&key_env=VAR]   dense:ollama:MODEL
                             an embedding API through the openai SDK (extra api), any OpenAI-compatible
                             server, or Ollama at localhost:11434; key from the environment only;
                             --dry-run estimates requests, tokens and dollars (`goldeval docs models`)
  hybrid:A+B[?method=rrf|norm&k=60&weight=W]
                             fusion of two or more retrievers, e.g. hybrid:bm25+dense:minilm
  rerank:BASE>RERANKER[?top=50]
                             re-score BASE's top N with dense:MODEL, hf:ORG/NAME (a hub CrossEncoder),
                             ce:FOLDER (a CrossEncoder folder) or module:function, e.g.
                             rerank:bm25>hf:cross-encoder/ms-marco-MiniLM-L-6-v2?top=100, or a rerank
                             API, api:MODEL?url=URL[&format=cohere|tei&key_env=VAR]; a hub repository
                             with code of its own needs &trust_remote_code=true; hf:, ce: and api:
                             scores are kept in the workspace: a re-run scores only new pairs
  run:FILE                   a saved TREC run file
  module:function            your own search(question, k) -> ids or (id, score) pairs
  module:object              a LangChain or LlamaIndex retriever (or index) as it is;
                             langchain:module:object?id_key=KEY to say where the doc id is
  http://HOST/PATH?q={question}&k={k}[#ids=PATH&scores=PATH&method=POST&body=JSON&headers=NAME:ENV]
                             a search service (`goldeval docs adapters`)

examples:
  goldeval eval --corpus docs/ --golden golden.jsonl
  goldeval eval --corpus docs/ --golden golden.jsonl --retriever bm25 --retriever dense:minilm \\
      --k 1,5,10 --misses --json results.json
  goldeval eval --corpus docs/ --golden golden.jsonl --retriever mysearch:search --level chunk
  goldeval eval --corpus docs/ --golden golden.jsonl \\
      --retriever dense:hf:BAAI/bge-small-en-v1.5 --retriever dense:hf:BAAI/bge-base-en-v1.5
  goldeval eval --corpus docs/ --golden golden.jsonl --qrels golden.qrels --run bm25.run
  goldeval trec -c -m success.5 -m recip_rank golden.qrels bm25.run    the same hit@5 and MRR
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "eval",
        help=COMMANDS["eval"],
        description="Run each retriever over the golden set's questions and score every question: "
        "hit@k, recall@k, precision@k, MRR, nDCG, MAP. Off-topic questions (no expected answer) are "
        "counted apart. Exit 0 ok, 2 bad input.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_eval_arguments(parser)
    flags.add(parser, "dry_run", more="here: estimate the requests, tokens and dollars of the run's API models "
              "(embedding cache counted), call nothing")
    parser.add_argument("--misses", action="store_true", help="print every miss: expected, what came first, and the rank where an expected answer finally appeared")
    flags.add(parser, "json", more="the full results (`goldeval docs results-json`)")
    flags.add(parser, "markdown", more="the scorecard")
    flags.add(parser, "details", more="with the by-tag breakdown and off-topic score ranges")
    flags.add(parser, "qrels", more="written: the judgments as scored (answerable questions, at --level)", metavar="OUT")
    parser.add_argument("--run", metavar="OUT", type=Path, help="write each retriever's ranking as scored, to the full --depth, as a TREC run to OUT "
                        "(OUT.NAME for several retrievers); `goldeval trec -c QRELS OUT` gives back the evaluation's numbers")
    flags.add(parser, "no_history")
    parser.set_defaults(func=run)


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that define an evaluation; `goldeval serve` reuses them."""
    flags.add(parser, "corpus")
    flags.add(parser, "golden")
    flags.add(parser, "retriever", more="repeat to compare")
    flags.add(parser, "k")
    flags.add(parser, "metric", more="added to the default metrics (repeatable)")
    flags.add(parser, "headline")
    flags.add(parser, "level")
    flags.add(parser, "chunk")
    flags.add(parser, "depth", more="misses report ranks up to N")
    flags.add(parser, "workspace", default=default_workspace())
    flags.add(parser, "index", old=("--backend",))
    flags.add(parser, "dsn", more="for --index pgvector (goldeval only writes to its own eval schema)")
    flags.add(parser, "option")
    flags.shown(parser.add_argument("--timeout", metavar="SECONDS", type=float, help="time limit per question for module:function retrievers"),
                f"{DEFAULT_TIMEOUT:g}")
    parser.add_argument("--strict", action="store_true", help="refuse result ids the corpus does not have (without it: a warning with counts and examples)")
    flags.shown(parser.add_argument("--max-doc-size", metavar="SIZE", type=parse_size, default=DEFAULT_MAX_BYTES,
                                    help="skip corpus documents larger than SIZE bytes, with a warning (K, M, G suffixes)"),
                "5M")
    flags.add(parser, "quiet", more="without it: a bar on a terminal, a line every 15 s with an estimate otherwise")
    flags.add(parser, "seed", more="of the bootstrap intervals and paired tests")
    flags.add(parser, "resamples")
    parser.add_argument("--no-stats", action="store_true", help="skip intervals, comparisons, breakdowns and miss diagnosis")
    flags.add(parser, "no_cache", more="the runs and statistics of an unchanged evaluation (runs are kept for goldeval's own "
                "retrievers over local indexes: bm25, dense, hybrid, rerank)")


def run_eval(args: argparse.Namespace) -> Scorecard:
    """Load inputs, evaluate, and return the Scorecard (shared by eval and serve)."""
    if args.golden is None:
        raise InputError("no golden set given", hint="pass --golden FILE (JSONL: id, question, expected)")
    from goldeval.store.workspace import Workspace

    made = preflight(args)  # an output or workspace that cannot be written fails now, not after the work
    with Workspace.at(args.workspace).undone_on_failure(made):  # a failed command leaves no empty workspace
        return _evaluated(args)


def _evaluated(args: argparse.Namespace) -> Scorecard:
    """`run_eval` once the outputs and the workspace are known to be writable."""
    from goldeval.corpus.chunking import parse_chunk_spec
    from goldeval.evaluation import evaluate
    from goldeval.golden.io import load_golden
    from goldeval.retrievers.base import needs_corpus

    if not getattr(args, "no_stats", False):  # refuse bad settings before minutes of searching, not after
        from goldeval.stats.annotate import check_settings

        check_settings(resamples=int(getattr(args, "resamples", 10_000)), confidence=0.95, power=0.8)
    specs = args.retriever or ["bm25"]
    options = _options(args)  # a bad option fails here, before the corpus is read or a model loaded
    if args.corpus is None and any(needs_corpus(s) for s in specs):
        raise InputError("no corpus given", hint="pass --corpus PATH (a folder, JSONL, BEIR or Cranfield)")
    corpus = None
    if args.corpus is not None:  # the corpus readers (HTML, BEIR, folders) are imported only when one is given
        from goldeval.corpus import load_corpus

        corpus = load_corpus(args.corpus, max_bytes=args.max_doc_size)
    if corpus is not None and corpus.warnings:
        for warning in corpus.warnings[:10]:
            warn(warning)
        if len(corpus.warnings) > 10:
            warn(f"... and {len(corpus.warnings) - 10} more skipped file(s)")
    golden = load_golden(args.golden, corpus=corpus)
    for warning in golden.warnings:
        warn(f"{args.golden}: {warning}")
    chunking = parse_chunk_spec(args.chunk)
    if getattr(args, "dry_run", False):  # estimate what the API parts would send, send nothing
        from goldeval.retrievers.dry_run import estimate, table

        passages = corpus.passages(chunking) if corpus is not None else []
        print(table(estimate(specs, passages, [q.question for q in golden], workspace=args.workspace,
                             options=options)))
        raise SystemExit(EXIT_OK)
    card = evaluate(specs, golden, corpus=corpus, settings=eval_settings(args, options, chunking))
    if getattr(args, "no_stats", False):
        return card
    from goldeval.stats.annotate import compare

    return compare(card, seed=getattr(args, "seed", 0), resamples=int(getattr(args, "resamples", 10_000)),
                   passages=corpus.passages(chunking) if corpus is not None else None, golden=golden,
                   workspace=None if getattr(args, "no_cache", False) else args.workspace)


def eval_settings(args: argparse.Namespace, options: dict[str, object], chunking: object) -> EvalSettings:
    """The evaluation's one settings object from the flags (`goldeval.evaluation.EvalSettings`)."""
    from goldeval.evaluation import EvalSettings

    return EvalSettings(k=parse_ks(args.k), metrics=_metrics(args), headline=_headline(args), level=args.level,
                        depth=args.depth, chunking=chunking, workspace=args.workspace, options=options,
                        progress=not args.quiet,  # a bar on a terminal, periodic lines in a log (goldeval.progress)
                        strict=args.strict, cache=not getattr(args, "no_cache", False))


def _headline(args: argparse.Namespace) -> Metric | None:
    text = getattr(args, "headline", None)
    if not text:
        return None
    from goldeval.metrics.definitions import parse_metric

    return parse_metric(text)


def parse_ks(text: str) -> list[int]:
    """`1,5,10` -> [1, 5, 10]; each k within `goldeval.limits.NUMBERS["k"]` (a k of a billion asked numpy for
    67 GiB, issue 20)."""
    from goldeval.limits import check_int

    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise InputError(f"cannot read --k {text!r}", value=text, hint="a comma-separated list of positive integers, e.g. 1,5,10") from None
    if not ks or ks[0] < 1:
        raise InputError(f"--k needs positive integers, got {text!r}", value=text, hint="e.g. --k 1,5,10")
    return [check_int("k", k, what="--k") for k in ks]


def _metrics(args: argparse.Namespace) -> list[str] | None:
    if not args.metric:
        return None
    from goldeval.metrics.definitions import default_metrics

    return [str(m) for m in default_metrics(tuple(parse_ks(args.k)))] + list(args.metric)


def _options(args: argparse.Namespace) -> dict[str, object]:
    """`--option`s plus the flags that set retriever options; every `--option` key must be declared
    by a retriever of the run and every value must parse, checked before anything is built."""
    from goldeval.retrievers.base import check_run_options
    from goldeval.retrievers.options import parse_option_args

    given = parse_option_args(args.option)
    options: dict[str, object] = dict(given)
    if args.index:
        options["backend"] = args.index
    if args.dsn:
        options["dsn"] = args.dsn
    if args.timeout is not None:
        if not math.isfinite(args.timeout) or args.timeout <= 0:
            raise InputError(f"--timeout must be a positive, finite number of seconds, got {args.timeout:g}", value=args.timeout,
                             hint=f"a finite number of seconds per question, e.g. --timeout 5 (default {DEFAULT_TIMEOUT:g})")
        options["timeout"] = args.timeout
    check_run_options(args.retriever or ["bm25"], options, given)
    return options


def run(args: argparse.Namespace) -> int:
    from goldeval.report.terminal import render

    card = run_eval(args)
    if args.json:  # the user's outputs first: a history that cannot be written must not cost them
        from goldeval.cli.output import save_json

        save_json(args.json, card.save)  # a file, or `--json -`: stdout
    if args.markdown:
        from goldeval.report.markdown import scorecard_markdown
        from goldeval.store.atomic import write_atomic

        write_atomic(args.markdown, scorecard_markdown(card))
        print(f"goldeval: wrote {args.markdown}", file=sys.stderr)
    _export(args, card)
    if not args.no_history:
        from goldeval.cli.output import to_stdout

        written = Path(args.json) if args.json and not to_stdout(args.json) else None  # `-`: no file to keep
        _record(card, args.workspace, written=written)
    render(card, show_misses=args.misses, details=args.details)
    return exit_code(card)


def _export(args: argparse.Namespace, card: Scorecard) -> None:
    """--qrels and --run: TREC files that give back the evaluation's numbers; what they leave out, on stderr."""
    from goldeval.scorecard.export import left_out, run_paths, write_qrels, write_run

    notes: list[str] = []
    if args.qrels:
        write_qrels(card, args.qrels)
        print(f"goldeval: wrote {args.qrels}", file=sys.stderr)
    if args.run:
        for result, path in zip(card.retrievers, run_paths(args.run, [r.name for r in card.retrievers]), strict=True):
            notes += write_run(result, path)
            print(f"goldeval: wrote {path} ({result.name}, to depth {card.depth})", file=sys.stderr)
    if args.qrels or args.run:
        for note in [*left_out(card), *notes]:
            print(f"goldeval: TREC export: {note}", file=sys.stderr)


def exit_code(card: Scorecard) -> int:
    """0, or 3 when a retriever failed on some questions (they are in the results, flagged, scoring 0)."""
    failed = [f"{r.name} on {r.n_errors} question(s)" for r in card.retrievers if r.n_errors]
    if not failed:
        return EXIT_OK
    print(f"goldeval: finished with retriever errors (exit {EXIT_RAN_WITH_ERRORS}): {'; '.join(failed)}",
          file=sys.stderr)
    return EXIT_RAN_WITH_ERRORS


def _record(card: Scorecard, workspace: Path, *, written: Path | None = None) -> None:
    """The run history (`goldeval history`, `compare @last`); a database that cannot be written is one
    error naming it. `written`: the results file just saved, whose bytes the history keeps (not made again)."""
    import sqlite3

    from goldeval.history.db import DB_NAME, record_run

    try:
        run_id = record_run(card, workspace, written=written)
    except (sqlite3.Error, OSError) as exc:
        raise WriteError(f"cannot record the run in the history: {exc}", path=workspace / DB_NAME,
                         hint="free disk space or fix the workspace, or pass --no-history") from None
    if run_id is not None:
        print(f"goldeval: recorded run {run_id} in {workspace / DB_NAME}", file=sys.stderr)


def preflight(args: argparse.Namespace) -> bool:
    """Every output and the workspace must be writable before the evaluation starts (issue 9). True when the
    workspace did not exist and was made for this command."""
    from goldeval.cli.output import check_json_out
    from goldeval.retrievers.base import spec_prefix
    from goldeval.store.atomic import check_writable
    from goldeval.store.workspace import Workspace

    check_json_out(getattr(args, "json", None))
    for flag in ("markdown", "qrels", "run"):
        out = getattr(args, flag, None)
        if out is not None:
            check_writable(out, what=f"--{flag} output")
    history = os.environ.get("GOLDEVAL_NO_HISTORY", "").strip() in ("", "0") and not getattr(args, "no_history", False)
    caches = any(spec_prefix(s) in ("dense", "hybrid", "rerank") for s in args.retriever or ["bm25"])
    if (history and args.func is run) or caches:
        return Workspace.at(args.workspace).check()
    return False


def parse_size(text: str) -> int:
    """`5000000`, `500K`, `5M`, `1G` (powers of 1000, as the default 5M = 5,000,000 bytes) -> bytes."""
    units = {"": 1, "K": 1000, "M": 1000**2, "G": 1000**3}
    raw = text.strip().upper().removesuffix("B")
    unit = raw[-1:] if raw[-1:] in units else ""
    try:
        value = float(raw[: len(raw) - len(unit)]) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 5M, 500K, 2000000)") from None
    if not math.isfinite(value) or value < 1:
        raise argparse.ArgumentTypeError(f"size must be at least 1 byte: {text!r}")
    return int(value)
