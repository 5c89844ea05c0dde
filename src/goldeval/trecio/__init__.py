"""TREC qrels and run files, read column by column (numpy, or numba): goldeval's one reader of both formats.

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
more than everything else. The file is memory-mapped and read 1 MiB of whole lines at a time on
worker threads; then only columns are kept: topic codes, scores or judgments, and each doc id as its
byte offsets in the file plus a 64-bit hash (joins compare hashes, then bytes). Python strings are made
per topic, and per line only when dicts are asked for. A block is split one of two ways, with the same
columns bit for bit (tested):
- numba (extra `fast`; `kernels.split_block`, compiled once per machine and cached, `goldeval.jit`):
  one pass over the bytes, the doc id hashed and the topic compared a word at a time, a plain number
  parsed as it goes. It releases the GIL, so the threads split blocks side by side. It takes only the
  lines it is sure of: a block with a line of the wrong shape, or a score that is not a number, goes to
  numpy, which says what is wrong and where. Loading numba costs 0.5-1 s per process, so it is used for
  large files (about 100 MB, `jit.LOAD_BYTES`), or once this process has read that much in numpy, or
  once it is loaded; `goldeval trec` on files of usual size never waits for it.
- numpy: whitespace positions -> field starts and ends -> fields per line, one array operation over
  the whole block at a time (numpy's loops release the GIL too).
Numbers, either way: a decimal (`[+-]digits[.digits][e[+-]digits]`) of at most 19 significant digits,
all that Python's `repr` writes, is its integer times 10^q, rounded exactly as Python's `float` rounds it
(`numbers.combine`: Clinger's exact division, else Eisel-Lemire; numba's kernel takes the same two steps
for one number at a time); any other goes through numpy's
string-to-float cast (Python's correctly rounded `float`), so the values are the same (tested bit for bit).
Repeated (topic, doc) pairs are found by one small hash table per topic (numba, when a file keeps each
topic's lines together) or by sorting every pair's key (numpy).
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


def read_run_table(path: str | Path, *, sha256: bool = False, marks: str | None = None) -> TrecTable:
    """A TREC run as columns; InputErrors lists every malformed line and repeated result. With `sha256`, the
    table carries the file's SHA-256 (`TrecTable.sha256`), taken as the scan reads it; with `marks`, the rows
    whose ids hold a byte past ASCII or that character, found as it reads (`TrecTable.check_text`)."""
    return read_table(Path(path), "run", sha256=sha256, marks=marks)
