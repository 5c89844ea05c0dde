"""Does the corpus answer this question? A judge that reads a question's top passages and says.

The score-threshold analysis (`goldeval.stats.offtopic.separability`) asks whether the top-1 *score*
tells off-topic questions from answerable ones; this reads the *text*: the model gets the question and
one retriever's top k passages and answers `covered` or `not covered`, read strictly (`parse_covered`;
an unreadable reply is asked once more, then failed, as grading is: `goldeval.judging.grader`).

It is measured on the golden set's own questions: an answerable question should be `covered`, an
off-topic one `not covered`. Its ROC point is written the way the threshold's curve is (the positive
class is off-topic, caught by `not covered`): tpr = off-topic questions said not covered / off-topic
questions, fpr = answerable questions said not covered / answerable questions; Youden's J = tpr - fpr,
the number the threshold's best cut maximises, so the two read on one scale.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from goldeval.golden.model import GoldenSet
from goldeval.judging.grader import PASSAGE_CHARS, Grader
from goldeval.scorecard.model import RetrieverResult
from goldeval.stats.offtopic import separability

PROMPT_VERSION = "covered/v1"
PROMPT = """You decide whether a collection of documents answers a question. Below are the passages a search
of the collection returned for it, best first.

Question: {question}

{passages}

Do these passages, alone or together, answer the question? Reply with exactly one of: covered (they answer
it), not covered (they do not)."""
PASSAGE = 'Passage {n} ({id}):\n"""\n{text}\n"""'
REMINDER = "\n\nYour last reply could not be read. Reply with exactly one of: covered, not covered."
_REPLY = re.compile(r"(covered|not[ _-]covered)\.?", re.IGNORECASE)


def parse_covered(reply: str) -> bool | None:
    """True for `covered`, False for `not covered`, None for anything else."""
    match = _REPLY.fullmatch(reply.strip())
    if not match:
        return None
    return match.group(1).lower() == "covered"


def prompts(result: RetrieverResult, golden: GoldenSet, k: int,
            texts: Mapping[str, tuple[str, str]], budget: int = PASSAGE_CHARS) -> list[tuple[str, str]]:
    """(question id, prompt) for every question of `golden` the retriever answered; each passage cut to
    an equal share of `budget` characters."""
    known = golden.by_id()
    out = []
    for q in result.questions:
        if q.id not in known or q.error:
            continue
        top = q.top[:k]
        if not top:
            continue  # nothing returned: not covered, with no call (`coverage_check`)
        share = max(200, budget // max(len(top), 1))
        blocks = [PASSAGE.format(n=n, id=h.id, text=(texts.get(h.id) or ("", ""))[1][:share].strip())
                  for n, h in enumerate(top, start=1)]
        out.append((q.id, PROMPT.format(question=known[q.id].question, passages="\n\n".join(blocks))))
    return out


def coverage_check(result: RetrieverResult, golden: GoldenSet, grader: Grader, *, k: int,
                   texts: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """The covered / not covered judge scored on the golden set's answerable and off-topic questions,
    beside the score threshold of the same retriever."""
    asked = prompts(result, golden, k, texts)
    answers = dict(zip([qid for qid, _ in asked], grader.ask(asked, parse_covered, REMINDER), strict=True))
    known = golden.by_id()
    rows = []
    for q in result.questions:
        if q.id not in known or q.error:
            continue
        # a question that returned nothing is not covered, as the threshold refuses it at every cut
        covered, reply, why = answers.get(q.id, (False, "", "nothing retrieved: not covered, no call"))
        rows.append({"question": q.id, "off_topic": known[q.id].off_topic, "covered": covered, "reply": reply[:200],
                     "reason": why, "correct": None if covered is None else covered != known[q.id].off_topic})
    answered = [r for r in rows if r["covered"] is not None]
    off = [r for r in answered if r["off_topic"]]
    ans = [r for r in answered if not r["off_topic"]]
    tpr = sum(not r["covered"] for r in off) / len(off) if off else None
    fpr = sum(not r["covered"] for r in ans) / len(ans) if ans else None
    threshold = separability(result)
    judge_j = tpr - fpr if tpr is not None and fpr is not None else None
    return {
        "retriever": result.name, "k": k, "model": grader.spec.model, "prompt_version": PROMPT_VERSION,
        "n_answerable": len(ans), "n_off_topic": len(off), "failed": len(rows) - len(answered),
        "accuracy": sum(r["correct"] for r in answered) / len(answered) if answered else None,
        "roc_point": {"tpr": tpr, "fpr": fpr},
        "youden_j": judge_j,
        "beats_threshold": None if judge_j is None or threshold.get("youden_j") is None
        else judge_j > threshold["youden_j"],
        "threshold": {key: threshold.get(key) for key in ("auc", "threshold", "youden_j", "rejects_answerable",
                                                           "passes_off_topic", "verdict", "roc")},
        "questions": rows,
    }
