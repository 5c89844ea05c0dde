"""An optional language-model pre-label for pooled passages: a suggestion, never a judgment.

The model is the machine judge of `goldeval judge` (`goldeval.judging.grader`: the same 0-3 prompt, the
same strict reading of its reply, the same reply cache in the workspace), so a passage graded once is
free on the pool page and in `goldeval judge` alike. The pool page shows the grade beside the verdict
buttons; only a person's accept (key `s`) writes it, as that person's judgment with `suggested by MODEL`
in its note. A reply that is not a grade, or a call that fails, gives no suggestion (one warning each on
stderr): it is never guessed. Nothing here writes the golden set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from goldeval.judging.grader import Ask, Grader
from goldeval.judging.pool import PoolItem
from goldeval.store.workspace import Workspace
from goldeval.textsafe import warn


@dataclass(frozen=True)
class Suggestion:
    """What the model said of one pooled passage."""

    grade: int
    """0 not relevant, 1-3 relevant (the golden set's scale)."""
    by: str
    reply: str

    def to_dict(self) -> dict[str, object]:
        return {"grade": self.grade, "by": self.by, "reply": self.reply[:200]}


def prelabel(items: Sequence[PoolItem], spec: str, workspace: str | Path | None = None) -> dict[str, Suggestion]:
    """Ask the model of backend `spec` about every item; item id -> suggestion (unreadable replies and
    failures are left out, with one warning each on stderr)."""
    grading = Grader(spec, Workspace.at(workspace)).grade(
        [Ask(i.question_id, i.question, i.passage, i.text, i.title) for i in items])
    out: dict[str, Suggestion] = {}
    for item, label in zip(items, grading.labels, strict=True):
        if label.grade is None:
            warn(f"pre-label of {item.question_id} / {item.passage}: no grade ({label.reason})")
            continue
        out[item.id] = Suggestion(label.grade, spec, label.reply)
    return out
