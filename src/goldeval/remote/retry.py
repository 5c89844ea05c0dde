"""Calling a model politely: backoff on rate limits, retries on transient errors, one shared pause.

Each backend sorts its exceptions into four verdicts (`Verdict`): `rate_limit` (HTTP 429), `transient`
(5xx, 408, 409, 529, a dropped connection, a timeout), `skip` (this passage cannot be done: another 4xx,
an empty reply) and `fatal` (nothing can be done: a refused key, an unknown model). A rate limit pauses
every worker (`Throttle`), not only the one that hit it, for the server's `Retry-After` if it sent one,
else for an exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And
Jitter", 2015): `uniform(0, min(cap, base * 2**attempt))`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from goldeval.errors import GoldevalError
from goldeval.textsafe import redact

Kind = Literal["rate_limit", "transient", "skip", "fatal"]


@dataclass(frozen=True)
class Verdict:
    """What to do about one failed call."""

    kind: Kind
    message: str
    retry_after: float | None = None


class FatalBackendError(GoldevalError):
    """The backend refused in a way no retry fixes (bad key, unknown model); the run stops."""


class SkipPassage(Exception):
    """This passage gets no question (retries exhausted, or refused); the run goes on."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. `base` and `cap` are seconds."""

    attempts: int = 6
    base: float = 1.0
    cap: float = 60.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0, min(self.cap, self.base * 2 ** attempt))


class Throttle:
    """A pause shared by every worker: after a 429, nobody calls until it is over."""

    def __init__(self) -> None:
        self._until = 0.0
        self._lock = threading.Lock()

    def pause(self, seconds: float) -> None:
        with self._lock:
            self._until = max(self._until, time.monotonic() + seconds)

    def wait(self) -> None:
        while True:
            with self._lock:
                left = self._until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.5))


def call_with_retry(call: Callable[[], str], classify: Callable[[BaseException], Verdict], *,
                    policy: RetryPolicy, throttle: Throttle, rng: random.Random,
                    on_retry: Callable[[Verdict, float], None] | None = None) -> str:
    """`call()`'s reply, retrying rate limits and transient errors up to `policy.attempts` calls in all.

    Raises FatalBackendError (stop everything) or SkipPassage (give up on this one), with messages
    redacted of every key.
    """
    for attempt in range(policy.attempts):
        throttle.wait()
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - every failure is sorted by the backend's classify
            verdict = classify(exc)
        if verdict.kind == "fatal":
            raise FatalBackendError(redact(verdict.message)) from None
        if verdict.kind == "skip":
            raise SkipPassage(redact(verdict.message))
        if attempt + 1 == policy.attempts:
            break
        wait = verdict.retry_after if verdict.retry_after is not None else policy.delay(attempt, rng)
        wait = min(max(wait, 0.0), policy.cap)
        if verdict.kind == "rate_limit":
            throttle.pause(wait)
        if on_retry is not None:
            on_retry(verdict, wait)
        if verdict.kind != "rate_limit":
            time.sleep(wait)
    raise SkipPassage(redact(f"gave up after {policy.attempts} attempts: {verdict.message}"))


def retry_after_seconds(value: str | None) -> float | None:
    """A `Retry-After` header given in seconds (HTTP-dates are ignored: the backoff applies)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def classify_status(status: int, message: str, retry_after: float | None) -> Verdict:
    """The verdict for an HTTP status, shared by the SDK backends."""
    if status == 429:
        return Verdict("rate_limit", f"rate limited (HTTP 429): {message}", retry_after)
    if status in (408, 409) or status >= 500:
        return Verdict("transient", f"server error (HTTP {status}): {message}", retry_after)
    if status in (401, 403):
        return Verdict("fatal", f"the server refused the API key (HTTP {status}): {message}")
    if status == 404:
        return Verdict("fatal", f"not found (HTTP 404): check the model name and the base URL: {message}")
    return Verdict("skip", f"request refused (HTTP {status}): {message}")
