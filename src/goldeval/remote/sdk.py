"""Sorting the exceptions of the official SDKs (openai, anthropic: they share the shape) into retry verdicts."""

from __future__ import annotations

from typing import Any

from goldeval.remote.retry import Verdict, classify_status, retry_after_seconds
from goldeval.textsafe import redact


def classify_sdk_error(sdk: Any, exc: BaseException) -> Verdict:
    """Sort an SDK exception (both SDKs share the shape: APIStatusError with status_code and response,
    APIConnectionError for network failures and timeouts)."""
    if isinstance(exc, sdk.APIStatusError):
        headers = getattr(getattr(exc, "response", None), "headers", {}) or {}
        message = redact(str(getattr(exc, "message", "") or exc))
        return classify_status(int(exc.status_code), message, retry_after_seconds(headers.get("retry-after")))
    if isinstance(exc, sdk.APIConnectionError):
        return Verdict("transient", redact(f"{type(exc).__name__}: {exc}"))
    # Anything else is not the server's answer but a mismatch with the SDK: no retry or skip helps.
    return Verdict("fatal", redact(f"{type(exc).__name__}: {exc}"))
