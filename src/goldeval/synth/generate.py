"""Turning sampled passages into model replies: jobs, the estimate before any call, and the calls.

Every job is one prompt with its reply-cache key. The estimate counts the calls still to make (cached
replies are free), their tokens (about four characters a token for the prompt, at most `max_tokens` for
the reply) and, when a price is given, their cost. The calls run on a few daemon worker threads
(`concurrency`), each reply written to the cache the moment it arrives, so Ctrl-C loses at most the calls
in flight and the main thread stays free to receive it; a daemon worker blocked in a slow request does
not keep the process alive after it.
"""

from __future__ import annotations

import functools
import math
import queue
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from goldeval.corpus.model import Passage
from goldeval.remote.retry import (
    FatalBackendError,
    RetryPolicy,
    SkipPassage,
    Throttle,
    Verdict,
    call_with_retry,
)
from goldeval.synth.backends import Backend, BackendSpec, Settings
from goldeval.synth.prompt import PromptTemplate
from goldeval.synth.replies import CachedReply, ReplyCache, reply_key
from goldeval.textsafe import redact

CHARS_PER_TOKEN = 4
"""A rough rule for English text with the common BPE tokenizers; the estimate says it is rough."""


@dataclass(frozen=True)
class Job:
    passage: Passage
    prompt: str
    key: str


def make_jobs(passages: Sequence[Passage], template: PromptTemplate, spec: BackendSpec, settings: Settings) -> list[Job]:
    identity = spec.identity(settings)
    jobs = []
    for p in passages:
        prompt = template.render(p)
        jobs.append(Job(p, prompt, reply_key(identity, prompt)))
    return jobs


@dataclass(frozen=True)
class Estimate:
    """What the run will cost before it starts."""

    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    """US dollars, when a price was given or the backend is local (0)."""

    def text(self) -> str:
        line = (f"{self.calls} call(s) to make, {self.cached} reply(ies) cached (free); about "
                f"{self.input_tokens:,} prompt tokens and at most {self.output_tokens:,} reply tokens")
        if self.cost is None:
            return line + "; cost: give --price IN:OUT (dollars per million tokens) to see it"
        return line + f"; cost: about ${self.cost:.4f}"


def estimate(jobs: Sequence[Job], cache: ReplyCache, spec: BackendSpec, settings: Settings, *,
             price: tuple[float, float] | None, fresh: bool = False) -> Estimate:
    todo = [j for j in jobs if fresh or j.key not in cache]
    tokens_in = sum(math.ceil(len(j.prompt) / CHARS_PER_TOKEN) for j in todo)
    tokens_out = settings.max_tokens * len(todo)
    cost: float | None = None
    if price is not None:
        cost = (tokens_in * price[0] + tokens_out * price[1]) / 1e6
    elif spec.kind in ("transformers", "function"):
        cost = 0.0
    return Estimate(len(todo), len(jobs) - len(todo), tokens_in, tokens_out, cost)


@dataclass
class Outcome:
    """The replies by job key (cached and new), and the passages that got none, with why."""

    replies: dict[str, CachedReply] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    retries: int = 0


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_jobs(jobs: Sequence[Job], build: Callable[[], Backend], cache: ReplyCache, *, concurrency: int = 4,
             policy: RetryPolicy | None = None, fresh: bool = False, seed: int = 0,
             progress: Callable[[str], None] | None = None) -> Outcome:
    """Every job's reply: from the cache, else from the backend (built only if a call is needed).

    Raises FatalBackendError when the backend refuses outright, KeyboardInterrupt on Ctrl-C (every reply
    received so far is already cached).
    """
    outcome = Outcome()
    todo: list[Job] = []
    for job in jobs:
        hit = None if fresh else cache.get(job.key)
        if hit is not None:
            outcome.replies[job.key] = hit
        else:
            todo.append(job)
    if not todo:
        return outcome
    backend = build()
    workers = max(1, min(concurrency, backend.max_concurrency or concurrency, len(todo)))
    pool = _Pool(backend, cache, policy or RetryPolicy(), workers, seed)
    pool.start(todo)
    try:
        for _ in range(len(todo)):
            job, reply, error = pool.next()
            if isinstance(error, FatalBackendError):
                raise error
            if reply is not None:
                outcome.replies[job.key] = reply
            else:
                outcome.failures[job.passage.id] = str(error)
            if progress is not None:
                progress(f"{len(outcome.replies) + len(outcome.failures)}/{len(jobs)}")
    finally:
        pool.stop()
        outcome.calls, outcome.retries = pool.calls, pool.retries
    return outcome


class _Pool:
    """Daemon worker threads that call the backend and cache each reply."""

    def __init__(self, backend: Backend, cache: ReplyCache, policy: RetryPolicy, workers: int, seed: int) -> None:
        self.backend, self.cache, self.policy, self.workers = backend, cache, policy, workers
        self.jobs: queue.Queue[Job] = queue.Queue()
        self.results: queue.Queue[tuple[Job, CachedReply | None, BaseException | None]] = queue.Queue()
        self.stopped = threading.Event()
        self.throttle = Throttle()
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.calls = self.retries = 0

    def start(self, todo: Sequence[Job]) -> None:
        for job in todo:
            self.jobs.put(job)
        for i in range(self.workers):
            threading.Thread(target=self._work, name=f"goldeval-synth-{i}", daemon=True).start()

    def next(self) -> tuple[Job, CachedReply | None, BaseException | None]:
        while True:  # a short timeout keeps the main thread able to take Ctrl-C
            try:
                return self.results.get(timeout=0.2)
            except queue.Empty:
                continue

    def stop(self) -> None:
        self.stopped.set()

    def _work(self) -> None:
        while not self.stopped.is_set():
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                return
            try:
                text = call_with_retry(functools.partial(self._call, job.prompt), self.backend.classify,
                                       policy=self.policy, throttle=self.throttle, rng=self.rng,
                                       on_retry=self._on_retry)
                reply = CachedReply(text, self.backend.model, utc_now())
                self.cache.put(job.key, reply)  # even after Ctrl-C: it has been paid for
                self.results.put((job, reply, None))
            except (SkipPassage, FatalBackendError) as exc:
                self.results.put((job, None, exc))
            except Exception as exc:  # noqa: BLE001 - a worker must always answer, or the main thread waits forever
                self.results.put((job, None, FatalBackendError(redact(f"{type(exc).__name__}: {exc}"))))

    def _call(self, prompt: str) -> str:
        with self.lock:
            self.calls += 1
        return self.backend.generate(prompt)

    def _on_retry(self, verdict: Verdict, wait: float) -> None:
        with self.lock:
            self.retries += 1
        print(f"goldeval: {verdict.message[:200]}; retrying in {wait:.1f} s", file=sys.stderr)
