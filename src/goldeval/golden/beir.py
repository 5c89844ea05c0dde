"""The questions and judgments of a BEIR dataset folder as a GoldenSet.

`queries.jsonl` holds `{"_id", "text"}` lines for every split; `qrels/<split>.tsv` holds
`query-id<TAB>corpus-id<TAB>score` lines after that header. Scores are graded relevance as given
(0 is judged non-relevant, and kept). Only the queries judged in the chosen split become questions,
in queries.jsonl order, all answerable (BEIR has no off-topic queries; a query judged with nothing
relevant stays answerable, with a warning); a judged query missing from queries.jsonl is an error.
"""

from __future__ import annotations

from pathlib import Path

from goldeval.corpus.files import read_input_text
from goldeval.corpus.jsonl import iter_json_lines
from goldeval.errors import InputError, InputErrors
from goldeval.golden.model import GoldenSet, Qrels, Question
from goldeval.golden.validate import nothing_relevant_warning

QUERIES_FILE = "queries.jsonl"
QRELS_DIR = "qrels"


def load_beir_golden(folder: str | Path, split: str = "test") -> GoldenSet:
    """Read queries.jsonl and qrels/<split>.tsv from a BEIR folder."""
    folder = Path(folder)
    qrels = read_beir_qrels(_qrels_path(folder, split))
    queries = read_beir_queries(folder / QUERIES_FILE)
    missing = [qid for qid in qrels if qid not in queries]
    if missing:
        shown = ", ".join(repr(q) for q in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise InputError(f"{len(missing)} judged queries are not in {QUERIES_FILE}: {shown}",
                         path=_qrels_path(folder, split), hint="qrels and queries.jsonl must come from the same dataset")
    questions = [Question(qid, text, "answerable", tags=(f"beir:{split}",), line=line)
                 for qid, (text, line) in queries.items() if qid in qrels]
    judged = Qrels.from_grades({q.id: qrels[q.id] for q in questions})
    warnings = nothing_relevant_warning(questions, judged, str(_qrels_path(folder, split)))
    return GoldenSet(questions, judged, path=str(folder), notes=f"BEIR {folder.name}, split {split}",
                     warnings=warnings)


def _qrels_path(folder: Path, split: str) -> Path:
    if not folder.is_dir():
        raise InputError("BEIR folder not found", path=folder,
                         hint="give the folder that holds corpus.jsonl, queries.jsonl and qrels/")
    path = folder / QRELS_DIR / f"{split}.tsv"
    if not path.is_file():
        splits = sorted(p.stem for p in (folder / QRELS_DIR).glob("*.tsv")) if (folder / QRELS_DIR).is_dir() else []
        raise InputError(f"no judgments for split {split!r}", path=path,
                         hint=f"available splits: {', '.join(splits)}" if splits else "the folder has no qrels/*.tsv")
    return path


def read_beir_queries(path: Path) -> dict[str, tuple[str, int]]:
    """{query id: (text, line)} from queries.jsonl; every bad line is reported at once."""
    if not path.is_file():
        raise InputError(f"no {QUERIES_FILE}", path=path, hint="a BEIR folder holds queries.jsonl beside corpus.jsonl")
    problems: list[InputError] = []
    queries: dict[str, tuple[str, int]] = {}
    for lineno, obj in iter_json_lines(path, problems):
        qid, text = obj.get("_id"), obj.get("text")
        if isinstance(qid, int) and not isinstance(qid, bool):
            qid = str(qid)
        if not isinstance(qid, str) or not isinstance(text, str):
            problems.append(InputError("a query needs a string `_id` and `text`", path=path, line=lineno, value=obj))
        elif qid in queries:
            problems.append(InputError(f"duplicate query id {qid!r} (first on line {queries[qid][1]})",
                                       path=path, line=lineno, value=qid))
        else:
            queries[qid] = (" ".join(text.split()), lineno)
    if problems:
        raise InputErrors(problems[:20], summary=f"{path}: {len(problems)} bad query lines")
    return queries


def read_beir_qrels(path: Path) -> dict[str, dict[str, int]]:
    """{query id: {doc id: score}} from a BEIR qrels TSV with its `query-id corpus-id score` header."""
    text = read_input_text(path, "qrels file")
    qrels: dict[str, dict[str, int]] = {}
    problems: list[InputError] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        cols = line.split("\t") if "\t" in line else line.split()
        if not line.strip() or (lineno == 1 and cols[0].strip() == "query-id"):
            continue
        score = cols[2].strip() if len(cols) == 3 else ""
        if len(cols) != 3 or not score.lstrip("-").isdigit():
            problems.append(InputError("expected `query-id<TAB>corpus-id<TAB>score` with an integer score",
                                       path=path, line=lineno, value=line))
            continue
        qrels.setdefault(cols[0].strip(), {})[cols[1].strip()] = int(score)
    if problems:
        raise InputErrors(problems[:20], summary=f"{path}: {len(problems)} bad judgment lines")
    if not qrels:
        raise InputError("no judgments in this qrels file", path=path)
    return qrels
