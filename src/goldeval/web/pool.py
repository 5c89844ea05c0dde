"""The pooled-judging page: one unjudged (question, passage) pair at a time, keyboard first.

It is the item page `/pool` of the one server (`goldeval.web.app`: exact paths, 127.0.0.1, Host and Origin
checks, a session token on every POST, a strict Content-Security-Policy), with its own files
(`goldeval/web/static/pool.*`, beside the `items.*` it shares with the review page) and a `PoolStore`
behind `/api/pool/items`. Every verdict goes straight into the golden-set file through
`goldeval.judging.edits.GoldenFile` (atomic write, changelog line), so closing the page loses nothing.

Actions (POST `/api/pool/items/<id>`, JSON): `{"action": "relevant", "grade": 1..3, "reason": "..."}`,
`{"action": "not_relevant"}`, `{"action": "not_covered", "reason": "..."}` (the corpus does not answer
the question: a content gap), `{"action": "wrong_expected", "doc": "...", "reason": "..."}`,
`{"action": "accept_suggestion"}` (the model's pre-label, written as the person's verdict).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldeval.errors import InputError
from goldeval.golden.model import GoldenSet
from goldeval.judging.edits import GoldenFile
from goldeval.judging.pool import Pool, PoolItem
from goldeval.judging.prelabel import Suggestion
from goldeval.web.lifecycle import GRADES


class PoolStore:
    """The pool's items and their verdicts, read back from the golden-set file on every request."""

    def __init__(self, pool: Pool, golden: GoldenFile, suggestions: Mapping[str, Suggestion] | None = None) -> None:
        self.pool = pool
        self.file = golden
        self.suggestions = dict(suggestions or {})
        self.items = {item.id: item for item in pool.items}

    def payload(self) -> dict[str, Any]:
        golden = self.file.load()
        return {"file": str(self.file.path), "golden": self.file.path.name, "pool": self.pool.id, "k": self.pool.k,
                "level": self.pool.level, "judge": self.file.judge, "systems": self.pool.systems,
                "notes": self.pool.notes, "items": [self.item(i, golden) for i in self.pool.items]}

    def item(self, item: PoolItem, golden: GoldenSet) -> dict[str, Any]:
        from goldeval.words import page_highlights

        question = golden.by_id().get(item.question_id)
        grade = golden.grades(item.question_id).get(item.passage)
        off_topic = question is not None and question.off_topic
        status = ("unjudged" if grade is None else "relevant" if grade > 0
                  else "not_covered" if off_topic else "not_relevant")
        suggestion = self.suggestions.get(item.id)
        return {**item.to_dict(), "status": status, "grade": grade, "off_topic": off_topic,
                "expected": list(golden.relevant(item.question_id)),
                "highlights": page_highlights(item.question, item.text),
                "suggestion": suggestion.to_dict() if suggestion else None}

    def apply(self, item_id: str, action: Mapping[str, Any]) -> dict[str, Any]:
        item = self.items.get(item_id)
        if item is None:
            raise InputError(f"no pooled item `{item_id}`", value=item_id, hint="reload the page")
        name = action.get("action")
        reason = str(action.get("reason") or "").strip()
        pool = self.pool.id
        if name == "relevant":
            grade = action.get("grade", 1)
            if grade not in GRADES:
                raise InputError(f"grade must be 1, 2 or 3, not {grade!r}", value=grade)
            found = ", ".join(f"{f.system} #{f.rank}" for f in item.found_by)
            self.file.judge_passage(item.question_id, item.passage, int(grade), pool=pool, fix=item.miss,
                                    reason=reason or (f"retrieved by {found} and judged relevant" if item.miss else ""))
        elif name == "not_relevant":
            self.file.judge_passage(item.question_id, item.passage, 0, pool=pool, reason=reason)
        elif name == "not_covered":
            pooled = tuple(i.passage for i in self.pool.items if i.question_id == item.question_id)
            self.file.not_covered(item.question_id, reason, pool=pool, passages=pooled)
        elif name == "wrong_expected":
            self.file.wrong_expected(item.question_id, str(action.get("doc") or ""), reason, pool=pool)
        elif name == "accept_suggestion":
            suggestion = self.suggestions.get(item_id)
            if suggestion is None:
                raise InputError("this passage has no suggestion to accept", value=item_id)
            self.file.judge_passage(item.question_id, item.passage, suggestion.grade, pool=pool, reason=reason,
                                    fix=item.miss and suggestion.grade > 0, suggested_by=suggestion.by)
        else:
            raise InputError(f"unknown action {name!r}", value=name,
                             hint="relevant, not_relevant, not_covered, wrong_expected or accept_suggestion")
        return self.item(item, self.file.load())

