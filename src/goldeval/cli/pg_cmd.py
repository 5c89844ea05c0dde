"""`goldeval pg`: what goldeval left in a PostgreSQL database, and dropping it (issue 9, class 6).

An evaluation on `--index pgvector` works in a fresh `goldeval_eval_...` schema and drops it when
it ends, on Ctrl+C, SIGTERM and SIGHUP too. Only a process killed outright (`kill -9`, a lost
machine) leaves one behind; the next evaluation says so, and `goldeval pg cleanup` drops those: only
schemas goldeval marked as its own, only when no running evaluation holds them, and only by the
objects goldeval creates in them (never CASCADE), so nothing of the user's can go with them.
"""

from __future__ import annotations

import argparse
import sys

from goldeval.cli import COMMANDS
from goldeval.cli import options as flags
from goldeval.errors import EXIT_OK

EPILOG = """\
examples:
  goldeval pg list --dsn postgresql://me@db/shop       every goldeval_eval_ schema, and which are leftovers
  goldeval pg cleanup --dsn postgresql://me@db/shop --dry-run
  goldeval pg cleanup --dsn postgresql://me@db/shop    drop goldeval's own unused leftovers
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "pg", help=COMMANDS["pg"],
        description="List goldeval's eval schemas in a database, and drop the ones that killed evaluations "
        "left behind. Only schemas goldeval marked as its own and that no running evaluation holds are "
        "dropped, object by object, never with CASCADE. Exit 0 ok (1 with cleanup when something could "
        "not be dropped), 2 bad input.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text, func in (("list", "list goldeval's eval schemas", run_list),
                                  ("cleanup", "drop goldeval's own leftover eval schemas", run_cleanup)):
        action = actions.add_parser(name, help=help_text, description=help_text)
        flags.add(action, "dsn", required=True)
        if name == "cleanup":
            flags.add(action, "dry_run", more="here: say what would be dropped, drop nothing")
        action.set_defaults(func=func)


def run_list(args: argparse.Namespace) -> int:
    from goldeval.store.pg_guard import connect, leftover_schemas, redact_dsn

    conn = connect(args.dsn)
    try:
        found = leftover_schemas(conn)
    finally:
        conn.close()
    print(f"goldeval eval schemas in {redact_dsn(args.dsn)}: {len(found) or 'none'}")
    for left in found:
        state = ("in use by a running evaluation" if left.in_use else "leftover (goldeval pg cleanup drops it)"
                 if left.ours else "not marked as goldeval's (never dropped by goldeval)")
        print(f"  {left.name}  {state}")
    return EXIT_OK


def run_cleanup(args: argparse.Namespace) -> int:
    from goldeval.store.pg_guard import drop_leftovers
    from goldeval.textsafe import clean

    dropped, kept = drop_leftovers(args.dsn, dry_run=args.dry_run)
    verb = "would drop" if args.dry_run else "dropped"
    print(f"goldeval: {verb} {len(dropped)} leftover schema(s)" + (": " + ", ".join(dropped) if dropped else ""))
    for name, why in kept:
        print(f"goldeval: kept {clean(name)}: {clean(why)}", file=sys.stderr)
    troubled = [name for name, why in kept if why.startswith("holds objects")]
    return 1 if troubled else EXIT_OK
