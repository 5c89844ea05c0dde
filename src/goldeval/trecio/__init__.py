"""TREC qrels and run files, read column by column with numpy: goldeval's one reader of both formats.

The rules are trec_eval's (usnistgov/trec_eval 10.0, `get_qrels.c`, `get_trec_results.c`,
`form_res_rels.c`):
- fields are separated by runs of whitespace (C `isspace`); a line whose first field starts with `#`
  is a comment; blank lines are skipped (trec_eval's run reader skips them too).
- qrels: `topic iteration docno judgment`, exactly 4 fields; the iteration is ignored; the judgment
  is an integer (>= 1 relevant, 0 judged non-relevant, negative "in the pool but unjudged").
- run: `topic Q0 docno rank score tag`, 6 fields or more (later ones ignored); the rank column is
  ignored (ranks come from the scores); the run's tag (trec_eval's runid) is the last line's 6th field.
- a (topic, docno) pair listed twice is an error in both files, as trec_eval refuses it ("duplicate docs").
Stricter than trec_eval's `atol`/`atof`: a judgment must be an integer and a score a number (not NaN).
Every malformed line is reported at once (InputErrors), each naming the file, the line, the value and the fix.

Why columns: a run of 100k questions x 100 results is 10M lines, and a Python object per field costs
more than everything else. The file is memory-mapped and split into fields by numpy on its raw bytes,
1 MiB at a time on worker threads (whitespace positions -> field starts and ends -> fields per line);
then only columns are kept: topic codes, scores or judgments, and each doc id as its byte offsets in
the file plus a 64-bit hash (joins compare hashes, then bytes). A number with at most 15 digits and no exponent is
parsed by numpy as integer / 10^k, exact by Clinger's fast path (both operands exact, one correctly
rounded division); any other goes through numpy's string-to-float cast (Python's correctly rounded
`float`). Python strings are made per topic, and per line only when dicts are asked for.
"""


from __future__ import annotations

from pathlib import Path

from goldeval.trecio.fields import padded, pair_keys
from goldeval.trecio.scan import read_table
from goldeval.trecio.table import TrecTable
from goldeval.types import DocId, QuestionId

__all__ = ["TrecTable", "pair_keys", "padded", "read_qrels", "read_qrels_table", "read_run", "read_run_table"]


def read_qrels(path: str | Path) -> dict[QuestionId, dict[DocId, int]]:
    """TREC qrels as {topic: {doc: judgment}}, in file order (see the module docstring for the rules)."""
    return read_qrels_table(path).to_dict()  # type: ignore[return-value]


def read_run(path: str | Path) -> tuple[dict[QuestionId, dict[DocId, float]], str]:
    """A TREC run as {topic: {doc: score}} in file order, and its tag (trec_eval's runid)."""
    table = read_run_table(path)
    return table.to_dict(), table.tag  # type: ignore[return-value]


def read_qrels_table(path: str | Path) -> TrecTable:
    """TREC qrels as columns; InputErrors lists every malformed line and repeated judgment."""
    return read_table(Path(path), "qrels")


def read_run_table(path: str | Path) -> TrecTable:
    """A TREC run as columns; InputErrors lists every malformed line and repeated result."""
    return read_table(Path(path), "run")
