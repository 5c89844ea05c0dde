"""Changes to a golden-set file: pooled verdicts, label fixes and incident questions.

Every change is one transaction (`goldeval.store.transaction`) under the set's lock
(`goldeval.golden.versions.lock_path`): it re-reads the set, applies one edit, rewrites only the lines of
the questions it changed (`goldeval.golden.io.edited_text`: comments, blank lines, `_` fields and every
other line kept as written) and appends the change, with who, when and why, to the changelog beside it;
both files are written or neither, and Ctrl+C waits for the end. Judgments say who judged
(`judge`), when (`at`, ISO 8601) and from which pool (`note`), so a pooled judgment is never confused
with the labels the set was written with.
"""

from __future__ import annotations

import getpass
import os
import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from goldeval.errors import InputError
from goldeval.golden.changelog import Change, append_changes
from goldeval.golden.io import edited_text, load_golden
from goldeval.golden.model import GoldenSet, Judgment, Provenance, Question
from goldeval.golden.versions import lock_path
from goldeval.store.transaction import Transaction, transaction

VERDICTS = ("relevant", "not_relevant", "not_covered", "wrong_expected")


def who(name: str | None = None) -> str:
    """The judge: `--by NAME`, else $USER, else the login name."""
    if name:
        return name
    try:
        return os.environ.get("USER") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class GoldenFile:
    """One golden-set JSONL file that goldeval edits in place, one change at a time."""

    def __init__(self, path: str | Path, *, judge: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError("golden set not found", path=self.path, hint="pass the golden-set JSONL file to edit")
        self.judge = who(judge)

    def load(self) -> GoldenSet:
        return load_golden(self.path)

    def judge_passage(self, qid: str, doc: str, grade: int, *, pool: str = "", reason: str = "",
                      fix: bool = False, suggested_by: str = "") -> Judgment:
        """Judge one (question, passage) pair; `fix` records it as `also_answers` (a miss's label fix)."""
        if fix and not reason.strip():
            raise InputError("a label fix needs a reason", value=doc, hint="say why this passage answers the question")
        at = now()
        note = "; ".join(p for p in (f"pool {pool}" if pool else "", reason.strip(),
                                     f"suggested by {suggested_by}" if suggested_by else "") if p)
        judgment = Judgment(qid, doc, grade, self.judge, at, note)
        with transaction(lock_path(self.path)) as tx:
            golden = self.load()
            question = _question(golden, qid, self.path)
            before = golden.grades(qid).get(doc)
            golden.qrels.add(judgment)
            action = "also_answers" if fix and grade > 0 else "judged"
            if grade > 0 and question.off_topic:  # a passage answers it: the corpus does cover it, a label fix
                _set_intent(golden, qid, "answerable")
                action, reason = "also_answers", reason.strip() or "a pooled passage answers this off-topic question"
            self._write(tx, golden, [Change(at, self.judge, action, qid, doc, grade, before, reason.strip(), pool)])
        return judgment

    def not_covered(self, qid: str, reason: str, *, pool: str = "", passages: tuple[str, ...] = ()) -> None:
        """Relabel a question as not covered by the corpus (a content gap): intent off_topic, its
        relevant documents judged not relevant, and so are the unjudged `passages` (the pooled ones:
        if the corpus does not answer the question, none of them does)."""
        _need_reason(reason, qid)
        at = now()
        with transaction(lock_path(self.path)) as tx:
            golden = self.load()
            question = _question(golden, qid, self.path)
            unjudged = [doc for doc in dict.fromkeys(passages) if not golden.qrels.is_judged(qid, doc)]
            if question.off_topic and not unjudged:
                raise InputError(f"question `{qid}` is already off-topic (not covered)", value=qid,
                                 hint="nothing to relabel; judge its passages one by one if needed")
            note = "; ".join(p for p in (f"pool {pool}" if pool else "", f"not covered: {reason.strip()}") if p)
            # an off-topic question stays as it was: confirming the gap only judges its pooled passages
            changes = [] if question.off_topic else [
                Change(at, self.judge, "not_covered", qid, None, None, question.intent, reason.strip(), pool)]
            for j in list(golden.qrels.judgments(qid)):
                if j.relevant:
                    golden.qrels.add(Judgment(qid, j.doc_id, 0, self.judge, at, note))
            for doc in unjudged:
                golden.qrels.add(Judgment(qid, doc, 0, self.judge, at, note))
                changes.append(Change(at, self.judge, "judged", qid, doc, 0, None, f"not covered: {reason.strip()}", pool))
            _set_intent(golden, qid, "off_topic")
            self._write(tx, golden, changes)

    def wrong_expected(self, qid: str, doc: str, reason: str, *, pool: str = "") -> None:
        """An expected document does not answer the question: judge it not relevant, with the reason."""
        _need_reason(reason, qid)
        at = now()
        with transaction(lock_path(self.path)) as tx:
            golden = self.load()
            _question(golden, qid, self.path)
            before = golden.relevant(qid).get(doc)
            if before is None:
                listed = ", ".join(golden.relevant(qid)) or "none"
                raise InputError(f"question `{qid}`: `{doc}` is not an expected document", value=doc,
                                 hint=f"its expected documents: {listed}")
            golden.qrels.add(Judgment(qid, doc, 0, self.judge, at, f"wrong expected: {reason.strip()}"))
            self._write(tx, golden, [Change(at, self.judge, "wrong_expected", qid, doc, 0, before, reason.strip(), pool)])

    def add_question(self, text: str, *, expected: list[str], off_topic: bool, incident: str = "",
                     qid: str | None = None, tags: tuple[str, ...] = ()) -> Question:
        """Add one question (provenance `incident` when `incident` names one, else `hand`)."""
        if not text.strip():
            raise InputError("the question is empty", hint='pass --question "what the user asked"')
        if off_topic and expected:
            raise InputError("an off-topic question has no expected document", value=expected,
                             hint="drop --expected, or drop --off-topic")
        if not off_topic and not expected:
            raise InputError("no expected document given", hint="pass --expected DOC (repeatable), or --off-topic "
                             "if the corpus does not answer it")
        at = now()
        with transaction(lock_path(self.path)) as tx:
            golden = self.load()
            new_id = qid or _next_id(golden, "inc" if incident else "q")
            if new_id in golden.by_id():
                raise InputError(f"question id `{new_id}` is already in the golden set", value=new_id,
                                 hint="choose another --id")
            details = {"incident": incident, "created": at, "by": self.judge} if incident else {"created": at, "by": self.judge}
            question = Question(new_id, text.strip(), "off_topic" if off_topic else "answerable", tags,
                                Provenance("incident" if incident else "hand", details))
            golden.questions.append(question)
            for doc in expected:
                golden.qrels.add(Judgment(new_id, doc, 1, self.judge, at, f"incident {incident}" if incident else ""))
            self._write(tx, golden, [Change(at, self.judge, "added", new_id, None, None, None, incident, "")])
        return question

    def _write(self, tx: Transaction, golden: GoldenSet, changes: list[Change]) -> None:
        """Stage the set with only the changed questions' lines rewritten, then the changelog lines."""
        text = tx.read(self.path)
        if text is None:
            raise InputError("golden set not found (removed while it was being edited)", path=self.path,
                             hint="restore it, then redo the change")
        tx.write(self.path, edited_text(text, golden, {c.question for c in changes}))
        append_changes(self.path, changes, tx=tx)


def _question(golden: GoldenSet, qid: str, path: Path) -> Question:
    by_id = golden.by_id()
    if qid not in by_id:
        raise InputError(f"question `{qid}` is not in the golden set", path=path, value=qid,
                         hint="the golden set changed since the results were written; re-run the evaluation")
    return by_id[qid]


def _set_intent(golden: GoldenSet, qid: str, intent: str) -> None:
    golden.questions = [replace(q, intent=intent) if q.id == qid else q for q in golden.questions]  # type: ignore[arg-type]


def _need_reason(reason: str, qid: str) -> None:
    if not reason.strip():
        raise InputError(f"question `{qid}`: a label fix needs a reason", value=qid,
                         hint="say why, e.g. 'the corpus has no page about Word documents'")


def _next_id(golden: GoldenSet, prefix: str) -> str:
    """`inc-001`, `inc-002`, ...: the first free id with this prefix."""
    numbers = [int(m.group(1)) for q in golden if (m := re.fullmatch(rf"{prefix}-(\d+)", q.id))]
    return f"{prefix}-{(max(numbers) + 1) if numbers else 1:03d}"
