"""The candidates file: generated questions waiting for review, as golden-set JSONL records.

Each line is a golden-set record (docs/golden.md) with provenance, plus underscore fields the golden-set
reader ignores (what the review page shows):

    {"id": "syn-3f2a9c01d4", "question": "...", "expected": ["git/stash.md"], "intent": "answerable",
     "provenance": {"kind": "synthetic", "generator": "openai", "model": "...", "prompt_hash": "...",
                    "temperature": 0.7, "source_passage": "git/stash.md#1", "source_offsets": [120, 880],
                    "created": "2025-...Z", "status": "unreviewed", "history": []},
     "_source": {"title": "...", "text": "..."}, "_leakage": {...}, "_others": [{...}, ...]}

`status` is `unreviewed` until `goldeval review` marks it `accepted` or `rejected`; every review action is
appended to `history` (who, when, what; an edit keeps the text before it). Only accepted questions go
into a golden set (`golden_record`), without the underscore fields and `status`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.golden.model import GoldenSet, Judgment, Provenance, Qrels, Question
from goldeval.store.atomic import write_atomic

STATUSES = ("unreviewed", "accepted", "rejected")
Record = dict[str, Any]


def new_candidate(*, qid: str, question: str, passage: Passage, generator: str, model: str, prompt_hash: str,
                  temperature: float, created: str) -> Record:
    """A fresh, unreviewed candidate whose one expected answer is its source passage's document."""
    return {
        "id": qid,
        "question": question,
        "expected": [passage.doc_id],
        "intent": "answerable",
        "provenance": {
            "kind": "synthetic",
            "generator": generator,
            "model": model,
            "prompt_hash": prompt_hash,
            "temperature": temperature,
            "source_passage": passage.id,
            "source_offsets": [passage.start, passage.end],
            "created": created,
            "status": "unreviewed",
            "history": [],
        },
        "_source": {"doc": passage.doc_id, "title": passage.title, "text": passage.text},
    }


def status(record: Record) -> str:
    return str(record.get("provenance", {}).get("status", "unreviewed"))


def read_candidates(path: str | Path) -> list[Record]:
    """Every candidate of a candidates file; InputError naming the line of the first bad one."""
    path = Path(path)
    if not path.is_file():
        raise InputError("candidates file not found", path=path,
                         hint="write one with `goldeval synth ... --out FILE`")
    records: list[Record] = []
    seen: set[str] = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc.msg}", path=path, line=lineno, value=line[:120],
                             hint="a candidates file has one JSON object a line, as goldeval synth writes it") from None
        problem = _problem(record, seen)
        if problem:
            raise InputError(problem, path=path, line=lineno, value=line[:120],
                             hint="give the file goldeval synth wrote (--out)")
        seen.add(record["id"])
        records.append(record)
    return records


def _problem(record: Any, seen: set[str]) -> str | None:
    if not isinstance(record, dict):
        return "a candidate must be a JSON object"
    if not isinstance(record.get("id"), str) or not isinstance(record.get("question"), str):
        return "a candidate needs a string `id` and `question`"
    if record["id"] in seen:
        return f"candidate id `{record['id']}` is given twice"
    provenance = record.get("provenance")
    if not isinstance(provenance, dict) or provenance.get("kind") != "synthetic":
        return "not a generated question: `provenance.kind` must be `synthetic`"
    if provenance.get("status", "unreviewed") not in STATUSES:
        return f"unknown review status {provenance.get('status')!r} (one of {', '.join(STATUSES)})"
    if not isinstance(record.get("expected"), list):
        return "`expected` must be a list of document ids"
    return None


def write_candidates(path: str | Path, records: Iterable[Record]) -> None:
    """Write the candidates file atomically (one JSON object a line)."""
    lines = [json.dumps(r, ensure_ascii=False) + "\n" for r in records]
    write_atomic(path, "".join(lines))


def merge(existing: Sequence[Record], new: Sequence[Record]) -> list[Record]:
    """The existing candidates (their review state kept) followed by the new ones they lack."""
    have = {r["id"] for r in existing}
    return [*existing, *(r for r in new if r["id"] not in have)]


def golden_record(record: Record) -> Record:
    """The golden-set record of an accepted candidate: the record without underscore fields or `status`."""
    out = {k: v for k, v in record.items() if not k.startswith("_")}
    out["provenance"] = {k: v for k, v in record["provenance"].items() if k != "status"}
    return out


def as_golden(records: Sequence[Record], *, statuses: Sequence[str] = ("accepted", "unreviewed")) -> GoldenSet:
    """Candidates as a GoldenSet (provenance `synthetic`), for evaluating them beside the hand-written set:
    by default the accepted and the not yet reviewed ones (the demo's generated set), never the rejected."""
    questions: list[Question] = []
    qrels = Qrels()
    for r in records:
        if status(r) not in statuses:
            continue
        details = {k: v for k, v in r["provenance"].items() if k != "kind"}
        questions.append(Question(r["id"], r["question"], "answerable", provenance=Provenance("synthetic", details)))
        for doc in r["expected"]:
            qrels.add(Judgment(r["id"], doc, 1))
    return GoldenSet(questions, qrels, path="generated candidates")
