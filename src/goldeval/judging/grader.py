"""A language model grading passages 0-3 (as golden sets grade: above 0 is relevant): the prompt, the strict reading of its reply, its provenance.

The model is any backend of `goldeval synth` (`goldeval.synth.backends`: anthropic:MODEL,
openai:MODEL[?base_url=...], transformers:FOLDER, module:function); the calls go through synth's one
runner (`goldeval.synth.generate.run_jobs`: its retry and rate-limit rules, `goldeval.remote.retry`) and
its reply cache (`goldeval.synth.replies.ReplyCache`, here under `<workspace>/judge/replies/`, keyed by
the model's identity and the full prompt, which holds the prompt version, the question and the passage).

A reply is read strictly (`parse_grade`): one digit 0-3, optionally after `grade:`, nothing else. A reply
that is anything else is asked once more with a reminder (a second prompt, cached on its own, so a rerun
needs no call for it either); a second unreadable reply is recorded as failed, never guessed. A call refused or given up on (the runner's
`SkipPassage`) is failed too, with its reason, and is not cached: the next run asks again.

Machine labels (`MachineLabel`) are never a person's judgment: they are not written into the golden set,
and they say which model, which prompt version and which reply made them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from goldeval.corpus.model import Passage
from goldeval.remote.retry import RetryPolicy
from goldeval.store.workspace import Workspace
from goldeval.synth.backends import BackendSpec, Settings, parse_backend
from goldeval.synth.generate import Estimate, Job, estimate, run_jobs
from goldeval.synth.replies import ReplyCache, reply_key

PROMPT_VERSION = "grade-0-3/v1"
PROMPT = """You grade how well a passage answers a search question, on a scale from 0 to 3.

3: the passage answers the question fully and directly.
2: the passage answers it, with something missing or a step the reader must work out.
1: the passage helps in part: a piece of the answer, or a pointer to where it is.
0: the passage does not help answer it (being on the same subject is not enough).

Question: {question}

Passage ({passage}):
\"\"\"
{text}
\"\"\"

Reply with the grade alone: one digit, 0, 1, 2 or 3, and nothing else."""
REMINDER = "\n\nYour last reply could not be read as a grade. Reply with one digit only: 0, 1, 2 or 3."
PASSAGE_CHARS = 4000
"""Passage text beyond this is cut (the prompt says which passage; the cut keeps prompts and cost bounded)."""
SETTINGS = Settings(temperature=0.0, max_tokens=8)
"""Grading wants the model's most likely answer, and a grade is one token or two."""

_GRADE = re.compile(r"(?:grade\s*[:=]?\s*)?([0-3])\.?", re.IGNORECASE)

Status = Literal["graded", "failed"]


def parse_grade(reply: str) -> int | None:
    """The grade of a reply that is exactly one digit 0-3 (`2`, `2.`, `Grade: 2`), else None."""
    match = _GRADE.fullmatch(reply.strip())
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class Ask:
    """One (question, passage) to grade."""

    question_id: str
    question: str
    passage: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class MachineLabel:
    """What the model said of one (question, passage): a grade, or a failure with its reason."""

    question_id: str
    passage: str
    grade: int | None
    status: Status
    model: str
    prompt_version: str
    reply: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question_id, "passage": self.passage, "grade": self.grade, "status": self.status,
                "judge": f"machine:{self.model}", "model": self.model, "prompt_version": self.prompt_version,
                "reply": self.reply[:500], "reason": self.reason}


@dataclass
class Grading:
    """Every label of one run, and what it cost in calls."""

    labels: list[MachineLabel] = field(default_factory=list)
    calls: int = 0
    """Requests sent to the model (retries included); 0 when every reply came from the cache."""
    cached: int = 0
    retries: int = 0

    def grades(self) -> dict[tuple[str, str], int]:
        return {(x.question_id, x.passage): x.grade for x in self.labels if x.grade is not None}

    @property
    def failed(self) -> list[MachineLabel]:
        return [x for x in self.labels if x.status == "failed"]


def render(ask: Ask) -> str:
    """The grading prompt of one ask: the scale, the question, the passage (cut at `PASSAGE_CHARS`)."""
    text = ask.text if len(ask.text) <= PASSAGE_CHARS else ask.text[:PASSAGE_CHARS] + " [...]"
    shown = f"{ask.title}\n{text}" if ask.title and not text.startswith(ask.title) else text
    return PROMPT.format(question=ask.question, passage=ask.passage, text=shown.strip())


Parse = Callable[[str], Any]
"""Reads a reply strictly: its value, or None when the reply is not one."""


class Grader:
    """Asks the model of `spec`, from the cache where it can; `grade` for passages, `ask` for any prompt."""

    def __init__(self, spec: str | BackendSpec, workspace: Workspace, *, concurrency: int = 4,
                 policy: RetryPolicy | None = None) -> None:
        self.spec = parse_backend(spec) if isinstance(spec, str) else spec
        self.cache = ReplyCache(workspace, kind="judge")
        self.concurrency = concurrency
        self.policy = policy
        self.counts = Grading()
        self._identity = self.spec.identity(SETTINGS)

    def jobs(self, prompts: Sequence[tuple[str, str]]) -> list[Job]:
        """One job per (id, prompt); the id names the job's failures (a question and a passage, tab-joined)."""
        return [Job(Passage(jid, jid, "", ""), prompt, reply_key(self._identity, prompt)) for jid, prompt in prompts]

    def estimate(self, prompts: Sequence[tuple[str, str]], price: tuple[float, float] | None = None) -> Estimate:
        """What asking `prompts` would cost: calls to make (cached replies are free), tokens; calls nothing."""
        return estimate(self.jobs(prompts), self.cache, self.spec, SETTINGS, price=price)

    def ask(self, prompts: Sequence[tuple[str, str]], parse: Parse, reminder: str) -> list[tuple[Any, str, str]]:
        """(value or None, reply, why it failed) per prompt: an unreadable reply is asked once more with
        `reminder` appended; a second unreadable one fails. Raises FatalBackendError on an outright refusal."""
        first = self._run(prompts)
        unread = [(jid, prompt + reminder) for (jid, prompt), (reply, _) in zip(prompts, first, strict=True)
                  if reply is not None and parse(reply) is None]
        again = dict(zip([jid for jid, _ in unread], self._run(unread), strict=True))
        out = []
        for (jid, _), (reply, why) in zip(prompts, first, strict=True):
            reply, why = again.get(jid, (reply, why))
            if reply is None:
                out.append((None, "", why or "no reply"))
                continue
            value = parse(reply)
            out.append((value, reply, "" if value is not None else "the reply could not be read, twice"))
        return out

    def grade(self, asks: Sequence[Ask]) -> Grading:
        """Every ask's label, in order, and the calls it took."""
        before = (self.counts.calls, self.counts.cached, self.counts.retries)
        answers = self.ask([(f"{a.question_id}\t{a.passage}", render(a)) for a in asks], parse_grade, REMINDER)
        grading = Grading(calls=self.counts.calls - before[0], cached=self.counts.cached - before[1],
                          retries=self.counts.retries - before[2])
        model = self.spec.model
        for ask, (grade, reply, why) in zip(asks, answers, strict=True):
            grading.labels.append(MachineLabel(ask.question_id, ask.passage, grade,
                                               "graded" if grade is not None else "failed", model, PROMPT_VERSION,
                                               reply, why))
        return grading

    def _run(self, prompts: Sequence[tuple[str, str]]) -> list[tuple[str | None, str]]:
        """(reply or None, why it failed) per prompt, through synth's runner and the cache."""
        if not prompts:
            return []
        jobs = self.jobs(prompts)
        self.counts.cached += sum(job.key in self.cache for job in jobs)
        outcome = run_jobs(jobs, lambda: self.spec.build(SETTINGS), self.cache, concurrency=self.concurrency,
                           policy=self.policy)
        self.counts.calls += outcome.calls
        self.counts.retries += outcome.retries
        out: list[tuple[str | None, str]] = []
        for job in jobs:
            reply = outcome.replies.get(job.key)
            out.append((reply.reply if reply else None, outcome.failures.get(job.passage.id, "")))
        return out
