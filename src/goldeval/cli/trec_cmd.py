"""`goldeval trec QRELS RUN`: trec_eval's command line, its measures and its output format."""

from __future__ import annotations

import argparse
import sys

from goldeval.cli import COMMANDS
from goldeval.errors import EXIT_OK, InputError

DESCRIPTION = """\
Evaluate a TREC run against TREC qrels exactly as trec_eval does, and print trec_eval's output
(measure, topic or 'all', value to 4 decimals). Ties in score are broken by document id,
descending, as trec_eval breaks them. Only topics present in both files are evaluated, unless -c.
"""

EPILOG = """\
measures (-m, repeatable; trec_eval's syntax: NAME or NAME.PARAM[,PARAM...]):
  families   official (the default), all_trec, set
  measures   runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank
             iprec_at_recall P relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg
             binG G ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P success set_P set_relative_P
             set_recall set_map set_F num_nonrel_judged_ret rbp rbp_resid unj
examples:
  goldeval trec qrels.txt run.txt
  goldeval trec -q -m map -m ndcg_cut.10 -m P.5,10 qrels.txt run.txt
  goldeval trec -c -m all_trec qrels.txt run.txt
file formats:
  qrels  topic iteration docno judgment      (judgment >= 1 is relevant; negative: unjudged)
  run    topic Q0 docno rank score tag       (rank is ignored; order comes from the score)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trec",
        help=COMMANDS["trec"],
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("qrels", metavar="QRELS", help="TREC qrels file: topic iteration docno judgment")
    parser.add_argument("run", metavar="RUN", help="TREC run file: topic Q0 docno rank score tag")
    parser.add_argument("-q", action="store_true", dest="per_query", help="also print every topic's values")
    parser.add_argument(
        "-c", action="store_true", dest="complete",
        help="average over every qrels topic; a topic missing from the run scores 0",
    )  # fmt: skip
    parser.add_argument(
        "-m", action="append", dest="measures", default=[], metavar="MEASURE",
        help="measure or family to print, e.g. map, P.5,10, ndcg_cut.10, official, all_trec (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "-l", type=int, default=1, dest="min_grade", metavar="N",
        help="smallest judgment that counts as relevant",
    )  # fmt: skip
    parser.add_argument("-n", action="store_false", dest="summary", help="no summary ('all') lines")
    parser.add_argument(
        "-M", type=int, default=None, dest="max_docs", metavar="N",
        help="evaluate only each topic's first N results (after ranking by score)",
    )  # fmt: skip
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from goldeval.metrics.trec import evaluate_trec_files, parse_measures

    request = parse_measures(args.measures)
    if args.max_docs is not None and args.max_docs < 1:
        raise InputError("-M must be at least 1", value=args.max_docs, hint="like -M 1000")
    report = evaluate_trec_files(
        args.qrels, args.run, request, complete=args.complete, level=args.min_grade, max_docs=args.max_docs
    )
    lines = report.lines(per_query=args.per_query, summary=args.summary)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return EXIT_OK
