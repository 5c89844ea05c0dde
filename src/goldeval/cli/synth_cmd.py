"""`goldeval synth`: generate candidate questions from the corpus, with provenance and leakage figures."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import InputError
from goldeval.store.workspace import default_workspace

if TYPE_CHECKING:
    from goldeval.corpus.model import Corpus
    from goldeval.golden.model import GoldenSet
    from goldeval.synth.pipeline import Plan, SynthConfig

EPILOG = """\
backends (API keys come from environment variables only):
  anthropic:MODEL[?key_env=VAR]            the Anthropic Messages API (ANTHROPIC_API_KEY)
  openai:MODEL[?base_url=URL&key_env=VAR]  OpenAI, or any OpenAI-compatible server: vLLM, Ollama,
                                           llama.cpp's server, LM Studio (OPENAI_API_KEY; optional
                                           with base_url)
  transformers:FOLDER                      a local causal language model folder (CPU)
  module:function                          your own generate(prompt) -> str
The backend may also come from $GOLDEVAL_SYNTH_BACKEND.

examples:
  goldeval synth --corpus docs/ --golden golden.jsonl --llm openai:gpt-4o-mini --n 30 --dry-run
  goldeval synth --corpus docs/ --golden golden.jsonl --llm openai:gpt-4o-mini --n 30 --out synth.jsonl
  goldeval synth --corpus docs/ --llm 'openai:llama3.1?base_url=http://localhost:11434/v1' --out synth.jsonl
  goldeval review synth.jsonl --golden golden.jsonl
Every reply is cached in the workspace: a re-run, or a run resumed after Ctrl-C, pays only for what is
new. The candidates are unreviewed until `goldeval review` accepts them.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "synth",
        help=COMMANDS["synth"],
        description="Sample passages (seeded, balanced across folders and documents), ask a model for the "
        "question a learner would type that each one answers, and write unreviewed candidates with "
        "provenance, leakage figures (beside your hand-written questions) and possible other answers. "
        "Prints the token and cost estimate before any call. Exit 0 ok, 2 bad input or a refused backend.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    flags.add(parser, "corpus")
    flags.add(parser, "golden", more="its hand-written questions are the leakage baseline")
    add("--demo", action="store_true", help="use the demo corpus (the stdlib's docs) and its shipped golden set")
    flags.add(parser, "llm", more="here: the question generator (see below)", old=("--backend",))
    add("--n", type=int, default=30, help="questions to generate")
    flags.add(parser, "out", more="the candidates (JSONL; merged with what it already holds)")
    flags.add(parser, "dry_run", more="show the sample and the estimate, then stop: no call at all")
    flags.add(parser, "chunk", more="the passages questions are asked about", default="1500:200")
    add("--min-chars", type=int, default=200, help="skip passages shorter than this")
    add("--uncovered", action="store_true", help="only documents that no hand-written question of --golden lists")
    flags.add(parser, "seed", more="of the passage sample and of local sampling")
    add("--prompt", metavar="FILE", type=Path, help="prompt template with {passage} (and {title}) instead of the default")
    add("--temperature", type=float, default=0.7, help="sampling temperature")
    add("--max-tokens", type=int, default=64, help="reply token limit")
    flags.shown(add("--concurrency", type=int, default=4, help="calls in flight at once"), "4; local models: 1")
    add("--retries", type=int, default=6, help="attempts per passage on rate limits and server errors")
    flags.shown(add("--backoff", metavar="SECONDS", type=float, default=1.0, help="first retry delay, doubled on each retry"),
                "1; a server's Retry-After wins")
    add("--price", metavar="IN:OUT", help="dollars per million prompt:reply tokens, for the cost estimate")
    flags.add(parser, "retriever", more="here: the retrievers offering other possible answers")
    add("--others", type=int, default=5, help="other possible answers offered per retriever")
    add("--leakage-json", metavar="OUT", type=Path, help="also write the leakage report as JSON")
    add("--fresh", action="store_true", help="ignore cached replies (they are still updated)")
    flags.add(parser, "workspace", default=default_workspace())
    flags.add(parser, "quiet")
    parser.set_defaults(func=run)


def _say(text: str) -> None:
    print(f"goldeval: {text}", file=sys.stderr, flush=True)


def config_from_args(args: argparse.Namespace) -> SynthConfig:
    from goldeval.remote.retry import RetryPolicy
    from goldeval.synth.backends import Settings, parse_backend
    from goldeval.synth.demo import ENABLE_HINT, configured_backend
    from goldeval.synth.pipeline import SynthConfig
    from goldeval.synth.prompt import load_prompt

    spec = configured_backend(args.llm)
    if spec is None:
        raise InputError("no backend given", hint=ENABLE_HINT.replace("the demo", "synth"))
    for name in ("n", "concurrency", "retries", "max_tokens", "others"):
        if getattr(args, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}",
                             value=getattr(args, name))
    if not 0 <= args.backoff <= 60:
        raise InputError(f"--backoff must be from 0 to 60 seconds, got {args.backoff:g}", value=args.backoff)
    if not 0 <= args.temperature <= 2:
        raise InputError(f"--temperature must be from 0 to 2, got {args.temperature:g}", value=args.temperature)
    return SynthConfig(
        parse_backend(spec), Settings(args.temperature, args.max_tokens, args.seed), load_prompt(args.prompt),
        n=args.n, seed=args.seed, min_chars=args.min_chars, uncovered=args.uncovered,
        retrievers=tuple(args.retriever or ["bm25"]), others_top=args.others, concurrency=args.concurrency,
        policy=RetryPolicy(attempts=args.retries, base=args.backoff), fresh=args.fresh, price=_price(args.price),
    )


def _price(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        prompt, reply = (float(x) for x in text.split(":"))
    except ValueError:
        raise InputError(f"cannot read --price {text!r}", value=text,
                         hint="dollars per million tokens, prompt:reply, e.g. --price 0.15:0.60") from None
    return prompt, reply


def load_inputs(args: argparse.Namespace) -> tuple[Corpus, GoldenSet | None]:
    from goldeval.corpus import load_corpus
    from goldeval.golden.io import load_golden

    if args.demo:
        if args.corpus is not None:
            raise InputError("give --demo or --corpus, not both", hint="--demo uses the stdlib docs corpus")
        from goldeval.corpus.stdlib import build_stdlib_corpus
        from goldeval.golden.demo import demo_golden_path, drop_unavailable

        corpus = build_stdlib_corpus(workspace=args.workspace)
        golden_path = args.golden or demo_golden_path()
        return corpus, drop_unavailable(load_golden(golden_path), corpus)
    if args.corpus is None:
        raise InputError("no corpus given", hint="pass --corpus PATH (or --demo for the stdlib docs)")
    corpus = load_corpus(args.corpus)
    golden = load_golden(args.golden, corpus=corpus) if args.golden is not None else None
    if args.uncovered and golden is None:
        raise InputError("--uncovered needs --golden", hint="the golden set says which documents are covered")
    return corpus, golden


def run(args: argparse.Namespace) -> int:
    from goldeval.corpus.chunking import parse_chunk_spec
    from goldeval.store.workspace import Workspace
    from goldeval.synth.pipeline import plan, synthesize
    from goldeval.synth.replies import ReplyCache
    from goldeval.synth.summary import leakage_lines

    config = config_from_args(args)
    out = args.out
    if out is None and not args.dry_run:
        raise InputError("no output file", hint="pass --out synth.jsonl (or --dry-run to see the plan)")
    if out is not None and not out.parent.is_dir():
        raise InputError("cannot write: the folder does not exist", path=out.parent, hint="create it first")
    corpus, golden = load_inputs(args)
    passages = corpus.passages(parse_chunk_spec(args.chunk))
    the_plan = plan(corpus, passages, golden, config, ReplyCache(Workspace(args.workspace)))
    _print_plan(the_plan, config)
    if args.dry_run:
        return 0
    if not the_plan.jobs:
        raise InputError("no passage to ask about", hint="lower --min-chars, drop --uncovered, or check the corpus")
    progress = None if args.quiet else _progress()
    try:
        result = synthesize(corpus, passages, golden, config, out=out, workspace=args.workspace,
                            the_plan=the_plan, progress=progress)
    except KeyboardInterrupt:
        _say("interrupted: every reply received so far is cached; run the same command again to resume "
             "(cached replies cost nothing)")
        raise
    for passage, why in result.outcome.failures.items():
        _say(f"warning: no question for {passage}: {why}")
    if result.outcome.failures and len(result.outcome.failures) == len(the_plan.jobs):
        raise InputError(f"no passage got a question ({len(the_plan.jobs)} failed)", hint="see the warnings above")
    _say(f"{result.outcome.calls} call(s) made, {result.outcome.retries} retried; {result.new} new candidate(s), "
         f"{len(result.records)} in {out} (unreviewed until `goldeval review {out} --golden FILE`)")
    for line in leakage_lines(result.report):
        print(line, file=sys.stderr)
    if args.leakage_json:
        from goldeval.store.atomic import write_atomic

        write_atomic(args.leakage_json, json.dumps(result.report.to_dict(), indent=2, ensure_ascii=False))
        _say(f"wrote {args.leakage_json}")
    return 0


def _print_plan(the_plan: Plan, config: SynthConfig) -> None:
    s = the_plan.sample
    _say(f"{len(s.passages)} passage(s) drawn (seed {config.seed}) from {s.total}: {s.too_short} too short, "
         f"{s.excluded} in {the_plan.covered_docs} document(s) already covered; by group: "
         + (", ".join(f"{g or '(top)'} {c}" for g, c in sorted(s.groups.items())) or "none"))
    if len(s.passages) < config.n:
        _say(f"warning: asked for {config.n}, only {len(s.passages)} passage(s) qualify")
    _say(f"backend {config.spec.spec}, prompt {config.template.origin} "
         f"({config.template.hash}), temperature {config.settings.temperature:g}")
    _say(the_plan.estimate.text())


def _progress() -> Callable[[str], None]:
    last = [""]

    def show(text: str) -> None:
        if text != last[0]:
            last[0] = text
            print(f"goldeval: generated {text}", file=sys.stderr, flush=True)

    return show
