"""An optional language-model pre-label for pooled passages: a suggestion, never a judgment.

The model behind any backend spec of `goldeval synth` (anthropic:MODEL, openai:MODEL[?base_url=...],
transformers:FOLDER, module:function) reads the question and the passage and answers `relevant` or
`not relevant`. The pool page shows the answer beside the verdict buttons; only a person's accept
(key `s`) writes it, as that person's judgment with `suggested by MODEL` in its note. Nothing here
writes a file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from goldeval.judging.pool import PoolItem
from goldeval.textsafe import warn

PROMPT = """You judge search results. Does the passage answer the question?

Question: {question}

Passage ({passage}):
{text}

Answer with exactly one of: relevant, not relevant."""

PASSAGE_CHARS = 2000


@dataclass(frozen=True)
class Suggestion:
    """What the model said of one pooled passage."""

    grade: int
    """1 relevant, 0 not relevant."""
    by: str
    reply: str

    def to_dict(self) -> dict[str, object]:
        return {"grade": self.grade, "by": self.by, "reply": self.reply[:200]}


def parse_reply(reply: str) -> int | None:
    """1 for `relevant` / `yes`, 0 for `not relevant` / `irrelevant` / `no`, None when unclear."""
    text = reply.strip().lower()
    if re.search(r"\b(not[ _-]relevant|irrelevant|no)\b", text):
        return 0
    if re.search(r"\b(relevant|yes)\b", text):
        return 1
    return None


def prelabel(items: Sequence[PoolItem], spec: str) -> dict[str, Suggestion]:
    """Ask the model of backend `spec` about every item; item id -> suggestion (unclear replies and
    failures are left out, with one warning each on stderr)."""
    from goldeval.synth.backends import Settings, parse_backend

    backend_spec = parse_backend(spec)
    backend = backend_spec.build(Settings(temperature=0.0, max_tokens=8))
    out: dict[str, Suggestion] = {}
    for item in items:
        prompt = PROMPT.format(question=item.question, passage=item.passage, text=item.text[:PASSAGE_CHARS])
        try:
            reply = backend.generate(prompt)
        except Exception as exc:  # noqa: BLE001 - a suggestion that fails is only a missing suggestion
            warn(f"pre-label of {item.question_id} / {item.passage} failed: {type(exc).__name__}: {exc}")
            continue
        grade = parse_reply(reply)
        if grade is None:
            warn(f"pre-label of {item.question_id} / {item.passage}: unclear reply {reply[:60]!r}")
            continue
        out[item.id] = Suggestion(grade, backend_spec.spec, reply)
    return out
