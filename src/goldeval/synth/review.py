"""Reviewing candidates: accept, reject, edit, add expected documents; accepted ones go into the golden set.

`ReviewSession` holds one candidates file and one golden-set file. Every action is recorded in the
candidate's `history` (who, when, what; an edit keeps the text it replaced), then both files are
rewritten atomically: the candidates file with every candidate (rejected and edited ones keep their
history there), and the golden set with its own lines untouched plus exactly the accepted candidates
(`candidates.golden_record`: provenance with `reviewed_by`, `reviewed_at` and the history). Un-accepting a
question takes it out of the golden set again. Every action is one transaction (`goldeval.store.transaction`:
both files re-read under their locks, so two pages on one candidates file keep each other's verdicts; the
candidates file, the golden set and its changelog written all or none) and every question that enters the
set, leaves it or changes in it is a changelog line (`added`, `removed`, `edited`) through the one changelog
writer, `goldeval.golden.changelog.append_changes`. Given the corpus's ids, an expected document the corpus
does not have is refused, naming the nearest one it has.

`items()` is what the review page shows: one item a question, with its passages (the source first, then
the other possible answers) and the verdicts it can take. The shape is not specific to generated
questions, so pooled judging can serve its items through the same page.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.golden.changelog import Change, append_changes
from goldeval.golden.model import Question
from goldeval.golden.validate import corpus_problems
from goldeval.golden.versions import lock_path
from goldeval.store.transaction import Transaction, transaction
from goldeval.synth.candidates import KINDS, Record, candidates_text, golden_record, read_candidates, status
from goldeval.synth.leakage import Target, measure
from goldeval.words import page_highlights

ACTIONS = ("accept", "reject", "reset", "edit", "expected")
VERDICTS = {"accept": "accepted", "reject": "rejected", "reset": "unreviewed"}
MAX_QUESTION = 500
LOG_FIELDS = ("log", "count", "first_seen", "last_seen", "variants", "clicks", "negative_feedback", "coverage",
              "nearest_question")
"""What `golden suggest` records of a search-log question (`Cluster.record`) and the page shows in place
of a source passage."""


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ReviewSession:
    """One candidates file under review, writing accepted questions into one golden set."""

    def __init__(self, candidates: str | Path, golden: str | Path, *, reviewer: str,
                 clock: Callable[[], str] = utc_now, corpus: Collection[str] | None = None) -> None:
        self.path = Path(candidates)
        self.golden = Path(golden)
        self.reviewer = reviewer
        self.clock = clock
        self.corpus = corpus
        """The corpus's doc ids: an expected document outside them is refused (None: not checked)."""
        self.records = read_candidates(self.path)
        if not self.records:
            raise InputError("the candidates file holds no question", path=self.path,
                             hint="generate some with `goldeval synth --out FILE`")
        if not self.golden.parent.is_dir():
            raise InputError("cannot write the golden set: the folder does not exist", path=self.golden.parent,
                             hint="create it first, or choose another --golden path")
        self._lock = threading.Lock()
        self._golden_file(self.golden.read_text(encoding="utf-8") if self.golden.exists() else None, self.records)

    # --- what the page shows -----------------------------------------------------------------------

    def payload(self) -> dict[str, Any]:
        with self._lock:
            with contextlib.suppress(InputError):  # another page's verdicts too; a damaged file: the last good one
                self.records = read_candidates(self.path)
            items = [item_of(r) for r in self.records]
        counts = {s: sum(1 for i in items if i["status"] == s) for s in ("unreviewed", "accepted", "rejected")}
        return {"kind": "synthetic-review", "file": self.path.name, "golden": self.golden.name,
                "reviewer": self.reviewer, "counts": counts, "items": items}

    # --- actions -------------------------------------------------------------------------------------

    def apply(self, item_id: str, action: Mapping[str, Any]) -> dict[str, Any]:
        """Apply one action (`{"action": "accept"}`, `{"action": "edit", "question": "..."}`,
        `{"action": "expected", "docs": [...]}`), save both files, return the item as it now is.

        One transaction (`goldeval.store.transaction`) under the locks of the golden set and of the
        candidates file: both are read again first, so a second page on the same files (or a second
        process) loses nothing; the candidates file, the golden set and the changelog are written, in that
        order, all or none."""
        name = action.get("action")
        if name not in ACTIONS:
            raise InputError(f"unknown action {name!r}", value=name, hint=f"one of {', '.join(ACTIONS)}")
        with self._lock, transaction(lock_path(self.golden), lock_path(self.path)) as tx:
            records = read_candidates(self.path)
            record = next((r for r in records if r["id"] == item_id), None)
            if record is None:
                raise InputError(f"no candidate with id {item_id!r}", value=item_id)
            entry = self._act(record, name, action)
            provenance = record["provenance"]
            provenance.setdefault("history", []).append(entry)
            provenance["reviewed_by"], provenance["reviewed_at"] = self.reviewer, entry["at"]
            self._stage(tx, records, entry["at"])
            self.records = records  # what the files will hold once the transaction commits
        return item_of(record)

    def _act(self, record: Record, name: str, action: Mapping[str, Any]) -> dict[str, Any]:
        """Change `record` by one action; the history entry that records it."""
        entry: dict[str, Any] = {"action": name, "by": self.reviewer, "at": self.clock()}
        if name == "accept" and not record.get("expected") and record.get("intent", "answerable") == "answerable":
            # a question from a search log comes with no expected document: a person adds them first
            raise InputError(f"`{record['id']}` has no expected document yet", value=record["id"],
                             hint="add the documents that answer it, then accept; if the corpus does not "
                             "answer it, reject it here and add it with `goldeval golden add --off-topic`")
        if name in VERDICTS:
            if name == "accept":
                self._check_corpus(record, record.get("expected", []))
            record["provenance"]["status"] = VERDICTS[name]
        elif name == "edit":
            entry.update(self._edit(record, action.get("question")))
        else:
            entry.update(_expected(record, action.get("docs")))
            self._check_corpus(record, entry["to"])
        return entry

    def _check_corpus(self, record: Record, docs: list[str]) -> None:
        """Refuse an expected document the corpus does not have, naming the nearest one it has."""
        if self.corpus is None or not docs:
            return
        question = Question(record["id"], record["question"], "answerable")
        problems = corpus_problems([(question, docs)], self.corpus, str(self.path))
        if problems:
            raise next(p for p in problems if p.value is not None)

    def _edit(self, record: Record, text: Any) -> dict[str, Any]:
        if not isinstance(text, str) or not text.strip():
            raise InputError("an edit needs the new question text", value=text)
        text = " ".join(text.split())
        if len(text) > MAX_QUESTION:
            raise InputError(f"the question is {len(text)} characters long, more than {MAX_QUESTION}", value=text[:80])
        old = record["question"]
        record["question"] = text
        if "_source" in record:
            record["_leakage"] = remeasure(record)
        return {"from": old, "to": text}

    def _stage(self, tx: Transaction, records: list[Record], at: str) -> None:
        tx.write(self.path, candidates_text(records))
        accepted = {r["id"]: golden_record(r) for r in records if status(r) == "accepted"}
        text = tx.read(self.golden)
        if text is None and not accepted:
            return  # no golden set yet and nothing to put in one
        new_text, before = self._golden_file(text, records, accepted)
        tx.write(self.golden, new_text)
        append_changes(self.golden, self._changes(before, accepted, at), tx=tx)

    def _changes(self, before: Mapping[str, Record], after: Mapping[str, Record], at: str) -> list[Change]:
        """The changelog lines of one save: questions added to, removed from or edited in the golden set."""
        why = f"review of {self.path.name}"
        out = [Change(at, self.reviewer, "added", qid, reason=f"accepted in {why}") for qid in after if qid not in before]
        out += [Change(at, self.reviewer, "removed", qid, reason=f"taken back in {why}") for qid in before
                if qid not in after]
        out += [Change(at, self.reviewer, "edited", qid, before=_labels(before[qid]), reason=f"edited in {why}")
                for qid in after if qid in before and _labels(before[qid]) != _labels(after[qid])]
        return out

    def _golden_file(self, text: str | None, records: list[Record], accepted: Mapping[str, Record] | None = None
                     ) -> tuple[str, dict[str, Record]]:
        """The golden set's text with `accepted` in it, and the questions of `records` as the set held them.

        Every line that is not a question of this candidates file is kept byte for byte (comments, blank
        lines, `_` fields, the user's own questions); a question of ours stays on its line (rewritten only
        when it changed, its `_` fields kept), leaves when it is no longer accepted, and a newly accepted one
        is appended. A non-generated question with one of our ids is a clash, not ours to overwrite."""
        if text is None:
            text = ""
        accepted = dict(accepted or {})
        ours = {r["id"] for r in records} | set(accepted)
        found: dict[str, Record] = {}
        out: list[str] = []
        for lineno, line in enumerate(text.splitlines(keepends=True), 1):
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):  # not a question of ours: kept verbatim
                obj = None
            if not (isinstance(obj, dict) and obj.get("id") in ours):
                out.append(line if line.endswith("\n") else line + "\n")
                continue
            provenance = obj.get("provenance")
            if not (isinstance(provenance, dict) and provenance.get("kind") in KINDS):
                raise InputError(f"the golden set already has a question with id {obj['id']!r} that was "
                                 "not generated", path=self.golden, line=lineno, value=obj["id"],
                                 hint="rename that question, or review into another golden set")
            found[obj["id"]] = obj
            new = accepted.pop(obj["id"], None)
            if new is not None:
                own = {k: v for k, v in obj.items() if k.startswith("_")}
                unchanged = {k: v for k, v in obj.items() if not k.startswith("_")} == new
                out.append(line if unchanged and line.endswith("\n") else json.dumps({**new, **own}, ensure_ascii=False) + "\n")
        out.extend(json.dumps(record, ensure_ascii=False) + "\n" for record in accepted.values())
        return "".join(out), found


def _labels(record: Mapping[str, Any]) -> list[Any]:
    """What a question asks and what answers it, as a changelog `edited` line keeps it."""
    return [record.get("question"), record.get("intent", "answerable"), record.get("expected")]


def locked(record: Record) -> list[str]:
    """The expected document a reviewer cannot remove: the one the question was written from (its source
    passage's document; the first expected one of a candidate without `_source`). A question from a search
    log was written from no document: every expected one is the reviewer's own choice, so a mistyped
    first document can be taken out again."""
    doc = record.get("_source", {}).get("doc")
    if doc:
        return [doc]
    return [] if record["provenance"].get("kind") == "log" else list(record.get("expected", []))[:1]


def _expected(record: Record, docs: Any) -> dict[str, Any]:
    """Set the expected documents; the locked one (the source document) always stays."""
    if not isinstance(docs, list) or not all(isinstance(d, str) and d.strip() for d in docs):
        raise InputError("`docs` must be a list of document ids", value=docs)
    new = list(dict.fromkeys([*locked(record), *(d.strip() for d in docs)]))
    old = list(record["expected"])
    record["expected"] = new
    return {"from": old, "to": new}


def remeasure(record: Record) -> dict[str, Any]:
    """The text figures of an edited question against its source passage. Its BM25 rank is left out
    (`source_rank: null`, `rank_stale: true`): re-ranking needs the corpus; re-run synth to refresh it."""
    src = record["_source"]
    provenance = record["provenance"]
    passage = Passage(provenance.get("source_passage", src.get("doc", "")), src.get("doc", ""), src.get("text", ""),
                      src.get("title", ""))
    figures = measure(Target(record["id"], record["question"], "synthetic", (passage.id,)), [passage], None).to_dict()
    figures = {k: v for k, v in figures.items() if k not in ("question_id", "kind", "passages")}
    figures["rank_stale"] = True
    return figures


def item_of(record: Record) -> dict[str, Any]:
    """The page's view of one candidate (see the module docstring). A question from a search log has no
    source passage: it gets no empty one, but `log`, where and how often it was searched, instead."""
    question = record["question"]
    src = record.get("_source", {})
    expected = list(record.get("expected", []))
    provenance = record["provenance"]
    passages: list[dict[str, Any]] = []
    if src or provenance.get("source_passage"):
        passages.append({"role": "source", "id": provenance.get("source_passage", ""), "doc": src.get("doc", ""),
                         "title": src.get("title", ""), "text": src.get("text", ""),
                         "highlights": page_highlights(question, src.get("text", ""))})
    for other in record.get("_others", []):
        passages.append({"role": "other", "id": other.get("passage", ""), "doc": other.get("doc", ""),
                         "title": other.get("title", ""), "text": other.get("text", ""),
                         "highlights": page_highlights(question, other.get("text", "")),
                         "ranks": other.get("ranks", {}), "selected": other.get("doc") in expected})
    return {
        "id": record["id"], "question": question, "status": status(record), "expected": expected,
        "locked": locked(record), "passages": passages,
        "leakage": record.get("_leakage", {}), "history": provenance.get("history", []),
        "meta": {k: provenance.get(k) for k in ("generator", "model", "created", "temperature", "prompt_hash")},
        "log": {k: provenance.get(k) for k in LOG_FIELDS} if provenance.get("kind") == "log" else None,
    }
