"""Embedding APIs: `openai:MODEL` (any OpenAI-compatible `/v1/embeddings`) and `ollama:MODEL` (issue 19).

Both go through the official `openai` SDK (extra `api`): `ollama:` is the same path at Ollama's
OpenAI-compatible endpoint, `http://localhost:11434/v1/embeddings` (not its native `/api/embed`: one wire
format, one client). Texts are cut into requests by count (`batch_size`, default 256; OpenAI takes 2,048) and
by estimated tokens (`max_batch_tokens`, default 100,000; OpenAI takes 300,000 a request), and `concurrency`
requests (default 4) are in flight at once.

Retries are goldeval's own, the one rule of `goldeval.remote.retry` (the SDK's are off, `max_retries=0`): a 429
pauses every request for the server's Retry-After (else exponential backoff with full jitter), 5xx, 408 and
dropped connections are retried, 6 attempts in all; each request has `timeout` seconds (default 60). A refused
key (401/403), an unknown model (404), a reply with the wrong number of vectors or the wrong dimension, or one
that does not parse is one InputError line, redacted of the key.

The key is read from an environment variable only (`key_env`, default OPENAI_API_KEY; `ollama:` needs none),
when the first request is made (a run served from the embedding cache needs no key), registered with
`textsafe.keep_secret`, and given to the SDK, which sends it to `base_url` and nowhere else. It is never part
of the model's identity, a cache key, a config or a message.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np

from goldeval.errors import InputError, require
from goldeval.fingerprint import fingerprint
from goldeval.progress import progress_bar
from goldeval.remote.keys import key_from_env
from goldeval.remote.retry import (
    FatalBackendError,
    RetryPolicy,
    SkipPassage,
    Throttle,
    Verdict,
    call_with_retry,
)
from goldeval.remote.sdk import classify_sdk_error
from goldeval.retrievers.encoders.base import BatchedEncoder, Kind, normalise
from goldeval.retrievers.usage import ApiUsage, estimate_tokens
from goldeval.textsafe import redact

PROVIDERS: dict[str, tuple[str | None, str, bool]] = {
    "openai": (None, "OPENAI_API_KEY", True),
    "ollama": ("http://localhost:11434/v1", "OLLAMA_API_KEY", False),
}
"""provider -> (default base URL (None: the SDK's, api.openai.com), default key variable, key required without
base_url)."""
DEFAULT_BATCH = 256
DEFAULT_BATCH_TOKENS = 100_000
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT = 60.0
API_OPTIONS = ("base_url", "dimensions", "key_env", "timeout", "concurrency", "max_batch_tokens", "prices")
"""The dense options that only API models (`openai:`, `ollama:`) take."""


def is_api_name(name: str) -> bool:
    return name.partition(":")[0] in PROVIDERS and ":" in name


@dataclass(frozen=True)
class ApiSettings:
    """How to reach an embedding API; the key itself is never here, only the variable's name."""

    base_url: str | None = None
    dimensions: int | None = None
    key_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    concurrency: int = DEFAULT_CONCURRENCY
    max_batch_tokens: int = DEFAULT_BATCH_TOKENS
    prices: str | None = None

    @classmethod
    def of(cls, options: Mapping[str, object]) -> ApiSettings:
        given = {k: v for k, v in options.items() if k in API_OPTIONS and v is not None}
        return cls(**given)  # type: ignore[arg-type]


def plan_batches(texts: Sequence[str], *, max_texts: int, max_tokens: int) -> list[tuple[int, int]]:
    """(start, end) of each request, in order: as many texts as fit both limits (a text alone over the token
    limit goes alone; the server says whether it takes it)."""
    out: list[tuple[int, int]] = []
    start, tokens = 0, 0
    for i, text in enumerate(texts):
        need = estimate_tokens(text)
        if i > start and (i - start >= max_texts or tokens + need > max_tokens):
            out.append((start, i))
            start, tokens = i, 0
        tokens += need
    if start < len(texts):
        out.append((start, len(texts)))
    return out


class ApiEncoder(BatchedEncoder):
    """An OpenAI-compatible `/embeddings` endpoint behind the Encoder protocol."""

    sort_by_length = False  # nothing is padded on our side; requests keep the input order

    def __init__(self, name: str, settings: ApiSettings) -> None:
        provider, _, model = name.partition(":")
        if provider not in PROVIDERS or not model.strip():
            raise InputError(f"{name!r} is not an API model name", value=name,
                             hint="write openai:MODEL or ollama:MODEL, e.g. openai:text-embedding-3-small")
        default_url, default_env, required = PROVIDERS[provider]
        self.name, self.provider, self.model = name, provider, model
        self.settings = settings
        self.base_url = (settings.base_url or default_url or "").rstrip("/") or None
        self.key_env = settings.key_env or default_env
        self.key_required = required and settings.base_url is None
        self.dim = settings.dimensions or 0
        self.batch_size = DEFAULT_BATCH
        self.key = fingerprint({"api": provider, "model": model, "base_url": self.base_url or "api.openai.com",
                                "dimensions": settings.dimensions})
        self.usage = ApiUsage()
        self.policy = RetryPolicy()
        self._client: Any = None
        self._sdk: Any = None
        self._throttle = Throttle()
        self._rng = random.Random(0)

    @property
    def cache_chunk(self) -> int:
        """Texts embedded, then stored, at a time: an interrupted run keeps every chunk it paid for."""
        return self.batch_size * self.settings.concurrency

    def identity(self) -> dict[str, object]:
        """What results record about the model: where it was asked, never the key."""
        return {"api": self.provider, "model": self.model, "base_url": self.base_url or "https://api.openai.com/v1",
                "dimensions": self.settings.dimensions, "key_env": self.key_env}

    def client(self) -> Any:
        if self._client is None:
            self._sdk = require("openai", extra="api", purpose=f"the embedding API model {self.name!r}")
            key = key_from_env(self.key_env, backend=self.name, required=self.key_required)
            self._client = self._sdk.OpenAI(api_key=key or "no-key", base_url=self.base_url, max_retries=0,
                                            timeout=self.settings.timeout)
        return self._client

    def encode(self, texts: Sequence[str], *, kind: Kind = "passage") -> np.ndarray:
        texts = [self.prefix(kind) + t for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        client = self.client()
        batches = plan_batches(texts, max_texts=self.batch_size, max_tokens=self.settings.max_batch_tokens)
        out: list[np.ndarray | None] = [None] * len(batches)
        with progress_bar(f"embedding {kind}s ({self.name})", total=len(texts), enabled=self.show_progress,
                          unit=f"{kind}s", min_total=512) as advance, \
                ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            futures = {pool.submit(self._request, client, texts[a:b]): i for i, (a, b) in enumerate(batches)}
            for future in as_completed(futures):
                i = futures[future]
                out[i] = future.result()
                advance(batches[i][1] - batches[i][0])
        return normalise(np.concatenate([v for v in out if v is not None]))

    def _request(self, client: Any, texts: list[str]) -> np.ndarray:
        """One request, retried by the one rule; its vectors checked for count and dimension."""
        options: dict[str, Any] = {"dimensions": self.settings.dimensions} if self.settings.dimensions else {}
        tries = [0]

        def call() -> Any:
            tries[0] += 1
            return client.embeddings.create(model=self.model, input=texts, encoding_format="float", **options)

        try:
            reply = call_with_retry(self.usage.metered(call), self._classify, policy=self.policy, throttle=self._throttle, rng=self._rng)
        except (FatalBackendError, SkipPassage) as exc:
            raise self._error(str(exc)) from None
        finally:
            self.usage.add(retries=tries[0] - 1)
        vectors = self._vectors(reply, len(texts))
        self.usage.count_tokens(getattr(getattr(reply, "usage", None), "prompt_tokens", None), texts, items=len(texts))
        return vectors

    def _classify(self, exc: BaseException) -> Verdict:
        if self._sdk is not None and isinstance(exc, self._sdk.APIResponseValidationError):
            return Verdict("fatal", f"the reply does not parse as an embeddings reply ({type(exc).__name__})")
        return classify_sdk_error(self._sdk, exc)

    def _vectors(self, reply: Any, count: int) -> np.ndarray:
        """The reply's vectors in input order; a malformed reply or a wrong dimension is an InputError."""
        data = getattr(reply, "data", None)
        try:
            rows = sorted(data, key=lambda d: int(d.index)) if isinstance(data, list) else None
            vectors = np.asarray([list(d.embedding) for d in rows], dtype=np.float32) if rows else None
        except (AttributeError, TypeError, ValueError):
            vectors = None
        if vectors is None or vectors.ndim != 2 or not np.isfinite(vectors).all():
            raise self._error("the reply is not an embeddings reply (no `data` list of `embedding` number lists)")
        if vectors.shape[0] != count:
            raise self._error(f"the reply holds {vectors.shape[0]} vectors for {count} texts")
        expected = self.settings.dimensions or self.dim
        if expected and vectors.shape[1] != expected:
            said = f"dimensions={self.settings.dimensions} was asked" if self.settings.dimensions else \
                f"its earlier replies had {self.dim}"
            raise self._error(f"the reply's vectors have {vectors.shape[1]} dimensions where {said}",
                              hint="check the model name and the dimensions option (not every model takes it)")
        self.dim = int(vectors.shape[1])
        return vectors

    def _error(self, message: str, hint: str | None = None) -> InputError:
        where = self.base_url or "https://api.openai.com/v1"
        return InputError(redact(f"embedding API {self.name} at {where}: {message}"), value=self.name,
                          hint=hint or f"check the key in ${self.key_env}, the model name and base_url")
