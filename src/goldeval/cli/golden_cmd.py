"""`goldeval golden`: check a golden set, import one from TREC/BEIR/Cranfield, export TREC qrels."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import InputError
from goldeval.textsafe import warn

EPILOG = """\
examples:
  goldeval golden check golden.jsonl --corpus docs/      # every problem at once; exit 2 if any
  goldeval golden import --qrels qrels.txt --topics topics.txt --out golden.jsonl
  goldeval golden import --from ../shared/data/cranfield --out cranfield.jsonl
  goldeval golden export golden.jsonl --qrels golden.qrels --topics golden.topics.tsv
  goldeval golden freeze golden.jsonl                    # stamp a version (number + content hash)
  goldeval golden suggest --from-log queries.jsonl --golden golden.jsonl --out candidates.jsonl
  goldeval golden add --golden golden.jsonl --question "..." --expected DOC --incident INC-12
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "golden",
        help=COMMANDS["golden"],
        description="Check a golden set against a corpus (every problem reported at once), import one "
        "from TREC qrels + topics or a BEIR/Cranfield folder, or export TREC qrels and topics.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    check = actions.add_parser("check", help="validate a golden set and summarise it")
    check.add_argument("golden", type=Path, help="the golden set (JSONL or a JSON list)")
    flags.add(check, "corpus", more="here: every judged id must be in it")
    check.set_defaults(func=run_check)

    imp = actions.add_parser("import", help="write a golden set JSONL from TREC, BEIR or Cranfield")
    source = imp.add_mutually_exclusive_group(required=True)
    flags.add(source, "qrels", more="read; needs --topics")
    source.add_argument("--from", dest="collection", type=Path, help="a BEIR folder (queries.jsonl + qrels/) or a Cranfield folder")
    flags.add(imp, "topics", more="read")
    imp.add_argument("--field", choices=("title", "desc"), default="title", help="which TREC topic field is the question")
    flags.add(imp, "out", more="the golden set (JSONL)", required=True)
    flags.add(imp, "force")
    imp.set_defaults(func=run_import)

    exp = actions.add_parser("export", help="write TREC qrels (and topics) from a golden set",
                             description="Write the answerable questions' judgments as TREC qrels (off-topic "
                             "questions are left out, and said on stderr: TREC has no intent). For qrels at the "
                             "evaluation's level and the full-depth run of each retriever, use `goldeval eval "
                             "--qrels FILE --run FILE`.")
    exp.add_argument("golden", type=Path)
    flags.add(exp, "qrels", more="written", required=True)
    flags.add(exp, "topics", more="written: the questions as qid<TAB>text (off-topic ones included: a topic without "
              "judgments is unjudged in TREC)")
    flags.add(exp, "force")
    exp.set_defaults(func=run_export)

    from goldeval.cli.golden_lifecycle import register_lifecycle

    register_lifecycle(actions)  # freeze, suggest, add (keeping the set true over time)


def run_check(args: argparse.Namespace) -> int:
    from goldeval.corpus import load_corpus
    from goldeval.golden import load_golden

    corpus = load_corpus(args.corpus) if args.corpus else None
    golden = load_golden(args.golden, corpus=corpus)
    tags = Counter(t for q in golden for t in q.tags)
    sources = Counter(q.source for q in golden)
    several = sum(1 for q in golden.answerable if len(golden.relevant(q.id)) > 1)
    not_relevant = sum(1 for j in golden.qrels if not j.relevant)
    print(f"{args.golden}: ok: {len(golden.answerable)} answerable + {len(golden.off_topic)} off-topic questions"
          + (f", every judged id found in {args.corpus}" if corpus else ""))
    print(f"  {len(golden.qrels)} judgments ({not_relevant} judged not relevant); {several} question(s) with "
          "more than one relevant answer; sources: " + ", ".join(f"{n} {s}" for s, n in sources.most_common()))
    if tags:
        print("  tags: " + ", ".join(f"{t} ({n})" for t, n in tags.most_common()))
    if not golden.off_topic:
        print("  note: no off-topic questions; add a few the corpus does not cover, to learn whether a "
              "score threshold can reject them")
    for warning in golden.warnings:
        warn(warning)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from goldeval.golden import load_golden, load_trec_golden, write_golden_jsonl

    _refuse_overwrite(args.out, args.force)
    if args.qrels is not None:
        if args.topics is None:
            raise InputError("--qrels needs --topics (the question texts)", hint="add --topics topics.txt")
        golden = load_trec_golden(args.qrels, args.topics, field=args.field)
    else:
        if not args.collection.is_dir():
            raise InputError("--from needs a BEIR or Cranfield folder", path=args.collection,
                             hint="a folder with queries.jsonl + qrels/, or cran.qry + cranqrel")
        golden = load_golden(args.collection)
    write_golden_jsonl(golden, args.out)
    for warning in golden.warnings:
        warn(warning)
    print(f"wrote {args.out}: {len(golden.answerable)} answerable + {len(golden.off_topic)} off-topic questions")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from goldeval.golden import load_golden, write_trec_qrels, write_trec_topics
    from goldeval.golden.model import headline_split

    for path in (args.qrels, args.topics):
        if path is not None:
            _refuse_overwrite(path, args.force)
    golden = load_golden(args.golden)
    left_out = write_trec_qrels(golden, args.qrels)
    if args.topics is not None:
        write_trec_topics(golden, args.topics)
    headline, beside = headline_split(golden)
    written = sum(len(golden.grades(q.id)) for q in headline)
    print(f"wrote {args.qrels}: {written} judgments of {len(headline)} question(s)")
    if beside:  # as `goldeval eval` reports them: beside the headline, never pooled into it
        print(f"goldeval: {args.qrels}: {len(beside)} synthetic question(s) left out ({', '.join(q.id for q in beside[:5])}"
              + (f" and {len(beside) - 5} more" if len(beside) > 5 else "")
              + "): `goldeval eval` reports them beside the headline, never pooled in", file=sys.stderr)
    if left_out:  # TREC files have no comment lines (trec_eval refuses them): said here, on stderr
        print(f"goldeval: {args.qrels}: {len(left_out)} off-topic question(s) left out ({', '.join(left_out[:5])}"
              + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
              + "): TREC has no intent, and `goldeval eval` never averages them in", file=sys.stderr)
    return 0


def _refuse_overwrite(path: Path, force: bool) -> None:
    if path.exists() and not force:
        raise InputError("refusing to overwrite an existing file", path=path, hint="pass --force, or choose another --out")
