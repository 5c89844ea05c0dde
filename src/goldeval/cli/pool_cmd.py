"""`goldeval pool`: judge, in the browser, the passages several retrievers found that nobody has judged."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import InputError
from goldeval.store.workspace import default_workspace

POOL_K = 10
"""Each retriever's top k that is pooled, unless --k says otherwise (`goldeval serve --golden` pools this k)."""

EPILOG = """\
keys on the page:
  1 / 2 / 3      relevant, with that grade (on a question some retriever missed: "also answers", a label fix)
  n or 0         not relevant
  x              the corpus does not answer this question (a content gap: relabelled off-topic; needs a reason)
  w              the question's first expected document is wrong (needs a reason; each chip has a button)
  s              accept the model's suggestion (--llm), as your own verdict
  r              type a reason; j / k or arrows: next / previous

examples:
  goldeval eval --corpus docs/ --golden golden.jsonl --retriever bm25 --retriever dense:minilm \\
      --retriever hybrid:bm25+dense:minilm --json results.json
  goldeval pool results.json --golden golden.jsonl --corpus docs/
  goldeval pool base.json new.json --golden golden.jsonl --depth 5 --by ana
  goldeval pool @last --golden golden.jsonl --list          print the unjudged candidates (TSV), no page
  goldeval pool results.json --golden golden.jsonl --llm openai:gpt-4o-mini   suggestions only

Every verdict is written into the golden set at once (atomically) as a judgment with who (--by),
when and which pool, and recorded in golden.changes.jsonl beside it. Re-run `goldeval eval` to re-score:
the scorecard then shows judged@k and each metric's range. Stop the server with Ctrl+C.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "pool",
        help=COMMANDS["pool"],
        description="Collect the top k of every retriever in the results, keep the passages the golden set has "
        "not judged for each question, and open them in a local page: the question, the passage with the "
        "question's words highlighted, and a verdict (relevant with a grade, not relevant, the corpus does "
        "not answer this question), keyboard first. Label fixes from misses too. Verdicts go into the golden "
        "set with provenance. Exit 0 ok (after Ctrl+C), 2 bad input.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("results", nargs="+", metavar="RESULTS.json|@RUN",
                        help="results of `goldeval eval --json`, or history references (@last, @NAME)")
    flags.add(parser, "golden", more="the verdicts are written into it", required=True)
    flags.add(parser, "depth", more="here: each retriever's top N is pooled", default=POOL_K, old=("--k",))
    flags.add(parser, "corpus", more="here: each passage's full text is shown (without it: the snippet stored in the results)")
    flags.add(parser, "by", more="here: who judges, recorded on every verdict", old=("--judge",))
    flags.add(parser, "llm", more="here: a suggestion per passage, shown, never written unless you accept it",
              shown="none, no suggestions", old=("--prelabel",))
    flags.add(parser, "workspace", more="here: the run history @references read", default=default_workspace())
    parser.add_argument("--list", action="store_true", help="print the pool as TSV on stdout and exit (no page)")
    flags.add(parser, "json", more="the pool")
    flags.add(parser, "host")
    flags.add(parser, "port", default=8767)
    flags.add(parser, "open")
    parser.set_defaults(func=run)


def make_pool(cards, labels, golden, *, k: int, corpus: Path | None = None):  # type: ignore[no-untyped-def]
    """The pool of the results' top k that `golden` has not judged (passage texts from `corpus` when given),
    its notes and counts said on stderr: what `goldeval pool` judges, and `goldeval serve --golden` mounts."""
    from goldeval.judging.pool import build_pool

    texts = _texts(corpus, cards) if corpus else None
    pool = build_pool(cards, labels, golden, k=k, texts=texts)
    for note in pool.notes:
        print(f"goldeval: note: {note}", file=sys.stderr)
    questions = len({i.question_id for i in pool.items})
    print(f"goldeval: {pool.id}: {len(pool.items)} unjudged passage(s) for {questions} question(s) in the top "
          f"{pool.k} of " + ", ".join(f"{s} ({n} unjudged)" for s, n in pool.unjudged.items()), file=sys.stderr)
    return pool


def run(args: argparse.Namespace) -> int:
    from goldeval.history.db import load_results
    from goldeval.judging.edits import GoldenFile

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is not a port number", value=args.port, hint="use 1-65535, or 0 for a free port")
    from goldeval.cli.output import check_json_out, to_stdout

    if args.list and to_stdout(args.json):
        raise InputError("--list and --json - both print on stdout", value="-",
                         hint="write the JSON to a file (--json pool.json), or leave --list out")
    check_json_out(args.json)
    golden_file = GoldenFile(args.golden, judge=args.by)
    golden = golden_file.load()
    loaded = [load_results(ref, args.workspace) for ref in args.results]
    labels = [label for _, label in loaded]
    if len(set(labels)) < len(labels):
        labels = list(args.results)
    pool = make_pool([card for card, _ in loaded], labels, golden, k=args.depth, corpus=args.corpus)
    if args.json:
        from goldeval.cli.output import write_json
        from goldeval.scorecard.io import dumps_strict

        write_json(args.json, dumps_strict(pool.to_dict()))  # a file, or `--json -`: stdout
    if args.list:
        from goldeval.textsafe import tsv_row

        print(tsv_row("question", "passage", "found_by", "miss", "question_text"))
        for item in pool.items:
            found = ",".join(f"{f.system}#{f.rank}" for f in item.found_by)
            print(tsv_row(item.question_id, item.passage, found, int(item.miss), item.question))
        return 0
    if not pool.items:
        print("goldeval: nothing to judge: every passage in the pooled top k is judged", file=sys.stderr)
        return 0
    return _serve(args, pool, golden_file)


def _serve(args: argparse.Namespace, pool, golden_file) -> int:  # type: ignore[no-untyped-def]
    from goldeval.web.app import make_server
    from goldeval.web.handler import is_loopback
    from goldeval.web.pool import PoolStore

    suggestions = {}
    if args.llm:
        from goldeval.judging.prelabel import prelabel

        suggestions = prelabel(pool.items, args.llm, args.workspace)
        print(f"goldeval: {len(suggestions)} suggestion(s) from {args.llm} (written only if you accept them)",
              file=sys.stderr)
    server = make_server(pool=PoolStore(pool, golden_file, suggestions), host=args.host, port=args.port, name="pool")
    if not is_loopback(args.host):
        print(f"goldeval: warning: serving on {args.host}: anyone who can reach this machine can change the golden set",
              file=sys.stderr)
    print(f"goldeval: judging at {server.page_url('pool')} as {golden_file.judge} (Ctrl+C to stop); verdicts go into "
          f"{args.golden}", flush=True)
    from goldeval.cli.serving import serve_until_interrupted

    return serve_until_interrupted(server, open_browser=args.open, url=server.page_url("pool"))


def _texts(corpus_path: Path, cards):  # type: ignore[no-untyped-def]
    """Passage -> (title, text) from the corpus, at the results' level and chunking."""
    from goldeval.corpus import load_corpus
    from goldeval.corpus.chunking import parse_chunk_spec

    corpus = load_corpus(corpus_path)
    if cards and cards[0].level == "chunk":
        spec = cards[0].identity.chunking
        return {p.id: (p.title, p.text) for p in corpus.passages(parse_chunk_spec(spec) if spec else None)}
    return {d.id: (d.title, d.text) for d in corpus}
