"""A stand-in judge for `goldeval judge --model overlap_judge:judge`, for trying the calibration loop offline.

It is no language model: it grades a passage by the share of the question's words it contains, and says
`covered` when any passage of the top list holds most of them. It reads the prompts `goldeval judge`
sends (the question after `Question:`, each passage between triple quotes) and replies as a model must:
one digit, or `covered` / `not covered`. Expect it to agree with people poorly: that is the point of
measuring a judge before trusting it.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
SMALL = {"the", "and", "for", "how", "what", "with", "can", "does", "from", "that", "this", "into", "are", "you",
         "your", "get", "use", "way", "make", "when", "which", "want", "not", "out", "has", "have", "its"}


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in SMALL}


def judge(prompt: str) -> str:
    """The reply to one `goldeval judge` prompt."""
    question = _words(re.search(r"Question: (.*)", prompt).group(1)) if "Question: " in prompt else set()
    passages = [_words(p) for p in prompt.split('"""')[1::2]]
    shares = [len(question & p) / len(question) if question else 0.0 for p in passages] or [0.0]
    if prompt.startswith("You decide whether"):
        return "covered" if max(shares) >= 0.5 else "not covered"
    share = shares[0]
    return "3" if share >= 0.75 else "2" if share >= 0.5 else "1" if share >= 0.25 else "0"
