"""Rerank APIs: `rerank:BASE>api:MODEL?url=URL[&format=cohere|tei&key_env=VAR&timeout=S&concurrency=N]` (issue 19).

Two wire formats, chosen by `format`:
- `cohere` (the default): `POST url` with `{"model", "query", "documents": [...], "top_n"}`, answered with
  `{"results": [{"index", "relevance_score"}]}`: Cohere's `/v2/rerank`, Jina's and Voyage's `/v1/rerank`,
  vLLM's and LiteLLM's `/rerank` (Cohere-compatible).
- `tei`: Hugging Face Text Embeddings Inference's `POST /rerank` with `{"query", "texts"}`, answered with
  `[{"index", "score"}]`.
One request per question, `concurrency` (default 4) in flight; each round of `concurrency` questions is stored
in the rerank score cache as soon as it is answered (`ApiScorer.cache_key`: the model, the URL and the format),
so a re-run sends only the pairs not scored before, and a killed run loses at most the round in flight. The retries, the timeout (default 60 s a
request) and the key are the embedding APIs' rules (`goldeval.remote`): the key comes from the environment
variable `key_env` names and is sent as a bearer token to `url` only; with no `key_env` no key is sent (a
local TEI or vLLM). Requests go through httpx (the openai SDK's own HTTP client, extra `api`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from goldeval.errors import InputError, require
from goldeval.fingerprint import fingerprint
from goldeval.remote.keys import key_from_env
from goldeval.remote.retry import (
    FatalBackendError,
    RetryPolicy,
    SkipPassage,
    Throttle,
    Verdict,
    call_with_retry,
    classify_status,
    retry_after_seconds,
)
from goldeval.retrievers.usage import ApiUsage
from goldeval.textsafe import redact

FORMATS = ("cohere", "tei")
PREFIX = "api:"


class _Status(Exception):
    """An HTTP error answer, sorted by `remote.retry.classify_status` like the SDKs'."""

    def __init__(self, status: int, message: str, retry_after: float | None) -> None:
        super().__init__(message)
        self.status, self.message, self.retry_after = status, message, retry_after


class ApiScorer:
    """A rerank endpoint behind the Scorer protocol (`retrievers.rerank`)."""

    def __init__(self, reranker: str, options: Mapping[str, object]) -> None:
        self.model = reranker.removeprefix(PREFIX).strip()
        url = options.get("url")
        if not self.model or not url:
            raise InputError(f"the rerank API {reranker!r} needs a model and ?url=", value=reranker,
                             hint="e.g. rerank:bm25>api:rerank-v3.5?url=https://api.cohere.com/v2/rerank"
                             "&key_env=COHERE_API_KEY, or api:bge-reranker-base?url=http://localhost:8080/rerank&format=tei")
        self.name, self.url = f"{PREFIX}{self.model}", str(url)
        self.format = str(options.get("format") or "cohere")
        self.key_env = str(options["key_env"]) if options.get("key_env") else None
        self.timeout = float(options.get("timeout") or 60.0)  # type: ignore[arg-type]
        self.concurrency = int(options.get("concurrency") or 4)  # type: ignore[call-overload]
        self.prices = str(options["prices"]) if options.get("prices") else None
        self.usage = ApiUsage()
        # what a score depends on: the model behind the URL, in that wire format; never the key, the timeout
        # or the concurrency
        self.cache_key: str | None = fingerprint({"reranker": "api", "model": self.model, "url": self.url,
                                                  "format": self.format})
        self.cache_chunk = self.concurrency
        self.policy, self._throttle, self._rng = RetryPolicy(), Throttle(), random.Random(0)
        self._client: Any = None
        self._httpx: Any = None
        self.config: dict[str, object] = {}
        self._note_usage()

    def _note_usage(self) -> None:
        """Where the reranker was asked and what it used so far; the key's variable name, never the key."""
        self.config = {"kind": "rerank-api", "model": self.name, "url": self.url, "format": self.format,
                       "key_env": self.key_env, "batch_size": None, "api": self.usage.to_dict(self.name, self.prices)}

    def _connect(self) -> Any:
        if self._client is None:
            self._httpx = require("httpx", extra="api", purpose=f"the rerank API {self.name!r}")
            key = key_from_env(self.key_env, backend=self.name) if self.key_env else None
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            self._client = self._httpx.Client(timeout=self.timeout, headers=headers, follow_redirects=False)
        return self._client

    def score(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        client = self._connect()
        try:
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                return list(pool.map(lambda item: self._one(client, item[0], item[1]), items))
        finally:
            self._note_usage()

    def _one(self, client: Any, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        body: dict[str, Any] = {"query": query, "texts": texts} if self.format == "tei" else \
            {"model": self.model, "query": query, "documents": texts, "top_n": len(texts)}
        tries = [0]

        def call() -> Any:
            tries[0] += 1
            reply = self.usage.metered(lambda: client.post(self.url, json=body))()
            if reply.status_code >= 400:
                raise _Status(reply.status_code, reply.text[:300], retry_after_seconds(reply.headers.get("retry-after")))
            return reply.json()

        try:
            data = call_with_retry(call, self._classify, policy=self.policy, throttle=self._throttle, rng=self._rng)
        except (FatalBackendError, SkipPassage) as exc:
            raise self._error(str(exc)) from None
        finally:
            self.usage.add(retries=tries[0] - 1)
        scores = self._scores(data, len(texts))
        self.usage.count_tokens(_reported_tokens(data), sent_texts(query, texts), items=len(texts))
        return scores

    def _classify(self, exc: BaseException) -> Verdict:
        if isinstance(exc, _Status):
            return classify_status(exc.status, redact(exc.message), exc.retry_after)
        if self._httpx is not None and isinstance(exc, self._httpx.TransportError):  # timeouts, refused, dropped
            return Verdict("transient", redact(f"{type(exc).__name__}: {exc}"))
        if isinstance(exc, ValueError):  # the body is not JSON
            return Verdict("fatal", "the reply is not JSON")
        return Verdict("fatal", redact(f"{type(exc).__name__}: {exc}"))

    def _scores(self, data: Any, count: int) -> list[float]:
        """One score per text, in the order sent; a reply of another shape is an InputError."""
        rows = data if self.format == "tei" else (data.get("results") if isinstance(data, dict) else None)
        field = "score" if self.format == "tei" else "relevance_score"
        scores: dict[int, float] = {}
        try:
            for row in rows:  # type: ignore[union-attr]
                scores[int(row["index"])] = float(row[field])
        except (TypeError, KeyError, ValueError):
            raise self._error(f"the reply is not a {self.format} rerank reply (a list of index and {field})") from None
        if sorted(scores) != list(range(count)):
            raise self._error(f"the reply scores {len(scores)} of the {count} texts sent",
                              hint="a rerank API must score every document (goldeval sends top_n = all of them)")
        return [scores[i] for i in range(count)]

    def _error(self, message: str, hint: str | None = None) -> InputError:
        return InputError(redact(f"rerank API {self.name} at {self.url}: {message}"), value=self.name,
                          hint=hint or ("check the url, the model name, the format (cohere or tei)"
                                        + (f" and the key in ${self.key_env}" if self.key_env else "")))


def sent_texts(query: str, texts: list[str]) -> list[str]:
    """What one rerank request carries, as its tokens are estimated where the server reports none: the
    question and each passage (a run's count, and the sweep's cost axis, `sweep.cost.rerank_api_cost`)."""
    return [query, *texts]


def _reported_tokens(data: Any) -> int:
    """Tokens the server billed, where it says (Voyage and Jina: usage.total_tokens); 0 where it does not."""
    if isinstance(data, dict):
        usage = data.get("usage") or {}
        if isinstance(usage, dict) and isinstance(usage.get("total_tokens"), int):
            return int(usage["total_tokens"])
    return 0
