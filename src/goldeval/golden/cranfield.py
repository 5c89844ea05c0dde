"""The Cranfield 1400 queries (`cran.qry`) and judgments (`cranqrel`) as a GoldenSet.

Question ids are query POSITIONS in cran.qry, `"1"` .. `"225"`, because that is what cranqrel's
first column means; the `.I` numbers (001 .. 365, with gaps) are kept in each question's notes
(`cran.qry .I 004`). Using `.I` numbers as qrels keys would attach the judgments of query 4 (the
fourth query, `.I 008`) to the query numbered 004: a silent, wrong evaluation.

Relevance: Cleverdon's codes run 1 (complete answer) to 4 (minimum interest), 5 (no interest) never
appears, and each query has one -1 line. Graded relevance must grow with usefulness, so the scale
is flipped: 1 -> 4, 2 -> 3, 3 -> 2, 4 -> 1. -1 (and 5) -> 0, judged non-relevant: the -1 lines
carry no grade in the readme and match "no interest" in ir_datasets' definitions, and are kept as
judged non-relevant. Every query is an answerable question; a query with no judgment at all would be
unjudged, not off-topic, and is dropped with a warning (none is, in the distributed files).
"""

from __future__ import annotations

from pathlib import Path

from goldeval.corpus.cranfield import read_records, read_whole
from goldeval.errors import InputError, InputErrors
from goldeval.golden.model import GoldenSet, Qrels, Question
from goldeval.golden.validate import nothing_relevant_warning

QUERIES_FILE = "cran.qry"
QRELS_FILE = "cranqrel"

RELEVANCE = {1: 4, 2: 3, 3: 2, 4: 1, 5: 0, -1: 0}
"""cranqrel code -> graded relevance (higher is better; 0 is judged non-relevant)."""


def load_cranfield_golden(folder: str | Path) -> GoldenSet:
    """Read cran.qry and cranqrel from a Cranfield folder; question ids are query positions."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("Cranfield folder not found", path=folder,
                         hint=f"give the folder that holds {QUERIES_FILE} and {QRELS_FILE}")
    queries = read_records(folder / QUERIES_FILE)
    judgments = read_cranqrel(folder / QRELS_FILE, n_queries=len(queries))
    questions = []
    for position, record in enumerate(queries, 1):
        text = record.one_line("W")
        if not text:
            raise InputError(f"query .I {record.number} has no `.W` text", path=folder / QUERIES_FILE,
                             line=record.line, value=record.number)
        questions.append(Question(str(position), text, "answerable", tags=("cranfield",),
                                  notes=f"cran.qry .I {record.number}", line=record.line))
    unjudged = [q.id for q in questions if q.id not in judgments]
    questions = [q for q in questions if q.id in judgments]
    qrels = Qrels.from_grades(judgments)
    warnings = [f"{len(unjudged)} query position(s) of {QUERIES_FILE} have no judgments in {QRELS_FILE} and were "
                f"dropped (unjudged): {', '.join(unjudged[:10])}"] if unjudged else []
    warnings += nothing_relevant_warning(questions, qrels, str(folder / QRELS_FILE))
    notes = ("Cranfield 1400: question ids are query positions in cran.qry (cranqrel's numbering); "
             "relevance codes mapped 1->4, 2->3, 3->2, 4->1, -1->0")
    return GoldenSet(questions, qrels, path=str(folder), notes=notes, warnings=warnings)


def read_cranqrel(path: Path, *, n_queries: int) -> dict[str, dict[str, int]]:
    """`query doc code` lines -> {query position: {doc id: graded relevance}}.

    Every bad line is reported at once. A pair judged twice keeps its higher relevance.
    """
    qrels: dict[str, dict[str, int]] = {}
    problems: list[InputError] = []
    for lineno, line in enumerate(read_whole(path).split("\n"), 1):
        cols = line.split()
        if not cols:
            continue
        triple = _ints(cols)
        if triple is None:
            problems.append(InputError("expected three integers `query doc code`", path=path, line=lineno,
                                       value=line.strip()))
            continue
        query, doc, code = triple
        if not 1 <= query <= n_queries:
            problems.append(InputError(f"query {query} is not a position in cran.qry (1..{n_queries})",
                                       path=path, line=lineno, value=query,
                                       hint="cranqrel numbers queries by position, not by their .I number"))
        elif code not in RELEVANCE:
            problems.append(InputError(f"unknown relevance code {code}", path=path, line=lineno, value=code,
                                       hint=f"Cranfield codes are {sorted(RELEVANCE)}"))
        else:
            judged = qrels.setdefault(str(query), {})
            doc_id = str(doc)
            judged[doc_id] = max(judged.get(doc_id, RELEVANCE[code]), RELEVANCE[code])
    if problems:
        raise InputErrors(problems[:20], summary=f"{path}: {len(problems)} bad judgment lines")
    return qrels


def _ints(cols: list[str]) -> tuple[int, int, int] | None:
    if len(cols) != 3 or not all(c.lstrip("-").isdigit() for c in cols):
        return None
    return int(cols[0]), int(cols[1]), int(cols[2])
