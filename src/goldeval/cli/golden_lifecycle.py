"""`goldeval golden freeze | suggest | add`: keep a golden set true over time (registered by golden_cmd)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from goldeval.cli import options as flags
from goldeval.errors import InputError
from goldeval.limits import number_type
from goldeval.textsafe import clean

FREEZE_EPILOG = """\
examples:
  goldeval golden freeze golden.jsonl                 version 1, or n + 1 if it changed since version n
  goldeval golden freeze golden.jsonl --note "after the March label review"
Versions live in golden.versions.jsonl beside the set; every later run on the same content records the
version number, and runs on different versions are compared on the questions they share.
"""

SUGGEST_EPILOG = """\
examples:
  goldeval golden suggest --from-log queries.jsonl --golden golden.jsonl --out candidates.jsonl
  goldeval golden suggest --from-log queries.jsonl --golden golden.jsonl --min-count 5 --model minilm
The log is JSONL, one search a line: {"query": "...", "time": "...", "clicks": [...], "feedback": "..."}
(or plain text, one query a line). Emails, phone numbers, keys and tokens, IBANs and card numbers are
masked before anything else happens. Candidates have provenance `log` and no expected document yet:
label them (add the documents that answer, or mark them off-topic) before they go into the set.
"""

ADD_EPILOG = """\
examples:
  goldeval golden add --golden golden.jsonl --question "how do I undo git add" --expected git/git-reset.md \\
      --incident INC-2041
  goldeval golden add --golden golden.jsonl --question "what is the weather in Paris" --off-topic --incident INC-2042
"""


def register_lifecycle(actions: argparse._SubParsersAction) -> None:
    """Add `freeze`, `suggest` and `add` to `goldeval golden`."""
    fmt = argparse.RawDescriptionHelpFormatter
    freeze = actions.add_parser("freeze", help="stamp the golden set as a new version (a number and a content hash)",
                                description="Record the golden set's content hash as version n + 1 in "
                                "golden.versions.jsonl, unless it equals the latest version already.",
                                epilog=FREEZE_EPILOG, formatter_class=fmt)
    freeze.add_argument("golden", type=Path, help="the golden set (JSONL)")
    freeze.add_argument("--note", default="", help="what this version is (recorded with it)")
    flags.add(freeze, "by", more="here: who freezes it")
    freeze.set_defaults(func=run_freeze)

    suggest = actions.add_parser("suggest", help="propose frequent searches of a log that the golden set does not cover",
                                 description="Read a search log, mask personal data, drop near-duplicates by "
                                 "embedding, cluster, and propose the frequent clusters the golden set does not cover "
                                 "yet, as candidates for a person to label.", epilog=SUGGEST_EPILOG, formatter_class=fmt)
    suggest.add_argument("--from-log", dest="log", metavar="LOG", type=Path, required=True, help="the search log (JSONL)")
    flags.add(suggest, "golden", more="coverage is measured against it", required=True)
    flags.add(suggest, "out", more="the candidates (JSONL)", shown="none, print them only")
    flags.add(suggest, "model", default="minilm")
    suggest.add_argument("--min-count", type=number_type("min-count"), default=2, help="propose clusters searched at least this often")
    flags.add(suggest, "limit", more="proposals")
    suggest.add_argument("--duplicate", type=float, default=0.9, help="cosine at which two queries are one")
    suggest.add_argument("--cluster", type=float, default=0.7, help="cosine to join a cluster")
    suggest.add_argument("--covered", type=float, default=0.75,
                         help="cosine to the nearest golden question above which a cluster counts as covered")
    suggest.add_argument("--workspace", action=flags.Unused, help=argparse.SUPPRESS,
                         reason="golden suggest keeps nothing in a workspace: its model lives in the per-user cache "
                                "(GOLDEVAL_CACHE, ~/.cache/goldeval)")
    flags.add(suggest, "force")
    suggest.set_defaults(func=run_suggest)

    add = actions.add_parser("add", help="add one question, e.g. from a production incident",
                             description="Add a question to the golden set in one command, with provenance "
                             "`incident` (the reference, when, who) and a changelog line.", epilog=ADD_EPILOG,
                             formatter_class=fmt)
    flags.add(add, "golden", more="the question is added to it", required=True)
    add.add_argument("--question", required=True, help="the question, as the user asked it")
    add.add_argument("--expected", metavar="DOC", action="append", default=[], help="a document that answers it (repeatable)")
    add.add_argument("--off-topic", action="store_true", help="the corpus does not answer it")
    add.add_argument("--incident", metavar="REF", default="", help="the incident it comes from (ticket, URL)")
    flags.shown(add.add_argument("--id", dest="qid", help="the question id"), "inc-NNN, the next free one")
    add.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    flags.add(add, "corpus", more="here: every --expected document must be in it")
    flags.add(add, "by", more="here: who adds it")
    add.set_defaults(func=run_add)


def run_freeze(args: argparse.Namespace) -> int:
    from goldeval.golden.io import load_golden
    from goldeval.golden.versions import changes_between, freeze, question_digests, read_versions
    from goldeval.judging.edits import who

    golden = load_golden(args.golden)
    before = read_versions(args.golden)
    version, created = freeze(golden, by=who(args.by), note=args.note)
    if not created:
        print(f"{args.golden}: unchanged since version {version.version} (fingerprint {version.fingerprint[:12]})")
        return 0
    changed = (changes_between(before[-1].questions, question_digests(golden, digest_format=before[-1].digest_format))
               .describe() if before else "first version")
    print(f"{args.golden}: froze version {version.version} (fingerprint {version.fingerprint[:12]}; "
          f"{version.n_questions} questions, {version.n_judgments} judgments; {changed})")
    return 0


def run_suggest(args: argparse.Namespace) -> int:
    from goldeval.golden.io import load_golden
    from goldeval.golden.suggest import suggest
    from goldeval.judging.edits import now
    from goldeval.retrievers.encoders import load_encoder

    if args.out is not None and args.out.exists() and not args.force:
        raise InputError("refusing to overwrite an existing file", path=args.out, hint="pass --force, or choose another --out")
    golden = load_golden(args.golden)
    encoder = load_encoder(args.model, progress=sys.stderr.isatty())
    found = suggest(args.log, golden, lambda texts: encoder.encode(texts, kind="query"), duplicate=args.duplicate,
                    cluster=args.cluster, covered=args.covered, min_count=args.min_count, limit=args.limit)
    masked = ", ".join(f"{n} {kind}" for kind, n in found.masked.most_common()) or "nothing"
    print(f"goldeval: {found.n_lines} searches, {found.n_distinct} distinct, {len(found.clusters)} clusters; "
          f"masked {masked}", file=sys.stderr)
    for c in found.proposed:
        print(f"{c.count:5d}  coverage {c.coverage:.2f} (nearest {clean(c.nearest or '-')})  {clean(c.text)}")
    if not found.proposed:
        print("goldeval: no frequent cluster lacks coverage: nothing to propose", file=sys.stderr)
    if args.out is not None:
        from goldeval.synth.candidates import write_candidates

        created = now()
        write_candidates(args.out, [c.record(str(args.log), created) for c in found.proposed])
        print(f"goldeval: wrote {len(found.proposed)} candidate(s) to {args.out}: label each (expected documents, "
              "or off-topic) before it goes into the golden set", file=sys.stderr)
    return 0


def run_add(args: argparse.Namespace) -> int:
    from goldeval.judging.edits import GoldenFile

    if args.corpus is not None and args.expected:
        from goldeval.corpus import load_corpus
        from goldeval.ids import doc_part

        corpus = load_corpus(args.corpus)
        missing = [d for d in args.expected if d not in corpus and doc_part(d) not in corpus]
        if missing:
            raise InputError(f"--expected {missing[0]} is not a document of the corpus", path=args.corpus,
                             value=missing[0], hint="use a doc id as `goldeval golden check --corpus` shows them")
    file = GoldenFile(args.golden, judge=args.by)
    question = file.add_question(args.question, expected=list(args.expected), off_topic=args.off_topic,
                                 incident=args.incident, qid=args.qid, tags=tuple(args.tag))
    kind = "off-topic" if question.off_topic else "answerable"
    print(f"{clean(args.golden)}: added {clean(question.id)} ({kind}, provenance {question.source}"
          + (f" {clean(args.incident)}" if args.incident else "") + "); freeze a new version with "
          f"`goldeval golden freeze {clean(args.golden)}`")
    return 0
