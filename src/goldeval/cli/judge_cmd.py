"""`goldeval judge`: grade passages with a language model, and measure that judge against people."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import InputError
from goldeval.store.workspace import default_workspace

EPILOG = """\
what it does:
  1. grades 0-3 every passage of every retriever's top N (--depth): the unjudged ones, and those people
     judged, so the two can be compared (--unjudged-only: the unjudged alone); replies read strictly, cached;
  2. calibration on the passages both graded: confusion matrix, Cohen's kappa, linear-weighted kappa,
     Krippendorff's alpha (interval), agreement on relevant vs not, bias, with bootstrap intervals;
  3. the ranking check: the retrievers scored with people's labels, with machine labels filling the
     unjudged, and with machine labels only: Kendall's tau, tau_AP, every paired verdict that changes;
  4. with --coverage: a covered / not covered judge on the first retriever's top N, scored on the golden
     set's answerable and off-topic questions beside the score threshold.

Machine labels are never written into the golden set: they go to --labels and --json, with the model,
the prompt version and the reply.

examples:
  goldeval judge results.json --golden golden.jsonl --llm openai:gpt-4o-mini --dry-run
  goldeval judge results.json --golden golden.jsonl --corpus docs/ --llm anthropic:claude-haiku-4-5 \\
      --json judges.json --labels machine_labels.jsonl --coverage
  goldeval judge --pool pool.json --golden golden.jsonl --llm openai:llama3.1?base_url=http://localhost:11434/v1
  goldeval demo --json demo.json && goldeval judge demo.json --demo-golden --llm openai:gpt-4o-mini --coverage

How many labels to check, what each number means, and what was not verified against a live model:
`goldeval docs judging`.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "judge", help=COMMANDS["judge"], epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Grade passages 0-3 with a language model (any `goldeval synth` backend) and measure it "
        "against the people's judgments: agreement, bias, and whether the ranking of the retrievers survives. "
        "Exit 0 ok, 2 bad input or a refused backend.")
    add = parser.add_argument
    add("results", nargs="*", metavar="RESULTS.json|@RUN", help="results of `goldeval eval --json`, or @last, @NAME")
    add("--pool", metavar="FILE", type=Path, help="grade the passages of a pool file (`goldeval pool --json`) instead")
    flags.add(parser, "golden", more="here: the people's judgments, read only")
    add("--demo-golden", action="store_true",
        help="the demo's shipped golden set instead of --golden (for `goldeval demo --json` results)")
    flags.add(parser, "llm", more="here: the judge", shown="none: required", required=True)
    flags.add(parser, "depth", more="here: each retriever's top N is graded", default=10)
    flags.add(parser, "corpus", more="here: the passages' full text is graded (without it: the results' snippets)")
    add("--unjudged-only", action="store_true", help="grade only what no person judged (no calibration then)")
    add("--coverage", action="store_true", help="also run the covered / not covered judge on the first retriever")
    flags.add(parser, "dry_run", more="count the calls and tokens it would take, then stop: no call at all")
    add("--price", metavar="IN:OUT", help="dollars per million prompt:reply tokens, for the cost estimate")
    flags.add(parser, "json", more="everything: labels, calibration, ranking check, covered judge")
    add("--labels", metavar="OUT", type=Path, help="write the machine labels as JSONL (kept apart from the golden set)")
    add("--concurrency", type=int, default=4, help="calls in flight at once")
    add("--retries", type=int, default=6, help="attempts per passage on rate limits and server errors")
    flags.add(parser, "seed", more="of the bootstrap intervals")
    flags.add(parser, "workspace", more="here: the reply cache and the run history @references read",
              default=default_workspace())
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from goldeval.cli.synth_cmd import _price
    from goldeval.golden.io import load_golden
    from goldeval.judging.grader import Grader, render
    from goldeval.remote.retry import RetryPolicy
    from goldeval.store.workspace import Workspace

    if bool(args.results) == bool(args.pool):
        raise InputError("give results files or --pool, one of the two", value=args.results or str(args.pool),
                         hint="e.g. goldeval judge results.json --golden golden.jsonl --llm openai:gpt-4o-mini")
    if args.coverage and not args.results:
        raise InputError("--coverage reads each question's top passages from results files, not from a pool",
                         value=str(args.pool), hint="pass the results files the pool was made from instead of --pool")
    if bool(args.golden) == bool(args.demo_golden):
        raise InputError("give --golden FILE or --demo-golden, one of the two", value=str(args.golden or "--demo-golden"),
                         hint="the golden set the results were evaluated on; --demo-golden for `goldeval demo --json` results")
    if args.demo_golden:
        from goldeval.golden.demo import demo_golden_path

        args.golden = demo_golden_path()
    golden = load_golden(args.golden)
    cards, labels = _cards(args)
    texts = _texts(args.corpus, cards) if args.corpus else None
    asks, people = _asks(args, cards, golden, texts)
    grader = Grader(args.llm, Workspace(args.workspace), concurrency=max(1, args.concurrency),
                    policy=RetryPolicy(attempts=max(1, args.retries)))
    if args.dry_run:
        keyed = [(f"{a.question_id}\t{a.passage}", render(a)) for a in asks]
        print(f"goldeval: dry run, nothing called: {len(asks)} passage(s) to grade with {args.llm}: "
              f"{grader.estimate(keyed, _price(args.price)).text()}", file=sys.stderr)
        return 0
    grading = grader.grade(asks)
    data = _results(args, grading, people, cards, labels, golden, grader, texts)
    from goldeval.report.judges import judges_text

    print(judges_text(data))
    _write(args, data)
    return 0


def _results(args: argparse.Namespace, grading: Any, people: dict[tuple[str, str], int], cards: list[Any],
             labels: list[str], golden: Any, grader: Any, texts: Any) -> dict[str, Any]:
    from goldeval.judging.agreement import calibrate
    from goldeval.judging.grader import PROMPT_VERSION

    machine = grading.grades()
    replies = {(x.question_id, x.passage): x.reply for x in grading.labels}
    calibration = calibrate(people, machine, replies=replies, seed=args.seed)
    data: dict[str, Any] = {
        "model": args.llm, "prompt_version": PROMPT_VERSION, "golden": str(args.golden), "k": args.depth,
        "calls": {"made": grading.calls, "cached": grading.cached, "retries": grading.retries},
        "labels": [x.to_dict() for x in grading.labels], "failed": len(grading.failed),
        "calibration": calibration.to_dict(), "ranking": None, "covered": None,
    }
    if cards:
        from goldeval.judging.survival import ranking_check

        data["ranking"] = ranking_check(cards, labels, golden, machine, people, grader.spec.model, seed=args.seed)
    if args.coverage and cards:
        from goldeval.judging.coverage import coverage_check

        snippets = {pid: (s.get("title", ""), s.get("text", "")) for c in cards for pid, s in c.snippets.items()}
        data["covered"] = coverage_check(cards[0].retrievers[0], golden, grader, k=args.depth, texts=texts or snippets)
    counts = grader.counts  # grading and the covered judge together
    data["calls"] = {"made": counts.calls, "cached": counts.cached, "retries": counts.retries}
    return data


def _cards(args: argparse.Namespace) -> tuple[list[Any], list[str]]:
    if not args.results:
        return [], []
    from goldeval.history.db import load_results

    loaded = [load_results(ref, args.workspace) for ref in args.results]
    labels = [label for _, label in loaded]
    if len(set(labels)) < len(labels):
        labels = list(args.results)
    cards = [card for card, _ in loaded]
    if len({c.level for c in cards}) > 1:
        raise InputError("the results were evaluated at different levels (doc and chunk)", value=args.results,
                         hint="judge results of one level")
    return cards, labels


def _asks(args: argparse.Namespace, cards: list[Any], golden: Any, texts: Any) -> tuple[list[Any], dict[tuple[str, str], int]]:
    from goldeval.judging.labels import collect_asks

    if cards:
        kept = min((max(c.k) if c.k else 0) for c in cards)
        if kept and args.depth > kept:
            print(f"goldeval: note: the results keep their top {kept} only: judging the top {kept}, not {args.depth}",
                  file=sys.stderr)
            args.depth = kept
        return collect_asks(cards, golden, k=args.depth, texts=texts, judged_too=not args.unjudged_only)
    from goldeval.corpus.files import json_value, read_input_text
    from goldeval.judging.grader import Ask

    hint = "pass the file `goldeval pool --json OUT` wrote"
    pool = json_value(read_input_text(args.pool, "pool file"), path=args.pool, line=None, what="pool file", hint=hint)
    if not isinstance(pool, dict) or not isinstance(pool.get("items"), list):
        raise InputError("this is not a pool file: it has no `items` list", path=args.pool, hint=hint)
    asks = []
    for n, item in enumerate(pool["items"], start=1):
        if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in ("question_id", "question", "passage")):
            raise InputError(f"pool item {n} lacks question_id, question or passage", path=args.pool, hint=hint)
        title, text = (texts or {}).get(item["passage"]) or (str(item.get("title", "")), str(item.get("text", "")))
        asks.append(Ask(item["question_id"], item["question"], item["passage"], text, title))
    return asks, {}


def _texts(corpus: Path, cards: list[Any]) -> dict[str, tuple[str, str]]:
    from goldeval.cli.pool_cmd import _texts as pool_texts

    return pool_texts(corpus, cards)  # type: ignore[no-any-return]


def _write(args: argparse.Namespace, data: dict[str, Any]) -> None:
    from goldeval.scorecard.io import dumps_strict
    from goldeval.store.atomic import write_atomic
    from goldeval.textsafe import redact

    if args.labels:
        import json

        write_atomic(args.labels, "".join(redact(json.dumps(x, ensure_ascii=False)) + "\n" for x in data["labels"]))
        print(f"goldeval: wrote {len(data['labels'])} machine label(s) to {args.labels}", file=sys.stderr)
    if args.json:
        from goldeval.cli.output import write_json

        write_json(args.json, redact(dumps_strict(data)))  # a file, or `--json -`: stdout
