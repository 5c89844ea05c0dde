"""The hosted-API backends: the Anthropic Messages API and OpenAI-compatible chat completions.

Both go through their official SDKs with the SDK's own retries off (`max_retries=0`): goldeval retries
itself (`goldeval.remote.retry`), so a rate limit pauses every worker and the attempts are counted in one
place. The key is passed to the SDK explicitly from the environment variable the spec names and nowhere
else; error messages are redacted of it.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from goldeval.errors import InputError, require
from goldeval.remote.keys import key_from_env
from goldeval.remote.retry import Verdict
from goldeval.remote.sdk import classify_sdk_error
from goldeval.synth.backends import BackendSpec, Settings

DEFAULT_TIMEOUT = 60.0
TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")


def build_client_backend(spec: BackendSpec, settings: Settings) -> AnthropicBackend | OpenAIBackend:
    timeout = _timeout(spec)
    base_url = spec.options.get("base_url") or None
    if spec.kind == "anthropic":
        key = key_from_env(spec.options.get("key_env", "ANTHROPIC_API_KEY"), backend="anthropic")
        return AnthropicBackend(spec.target, settings, key or "", base_url, timeout)
    # A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) usually wants no key.
    key = key_from_env(spec.options.get("key_env", "OPENAI_API_KEY"), backend="openai", required=base_url is None)
    field = spec.options.get("tokens_field", "max_tokens")
    if field not in TOKENS_FIELDS:
        raise InputError(f"tokens_field={field!r} in {spec.spec!r} is not one of {', '.join(TOKENS_FIELDS)}",
                         value=field, hint="newer OpenAI models take tokens_field=max_completion_tokens")
    return OpenAIBackend(spec.target, settings, key or "no-key", base_url, timeout, field)


class AnthropicBackend:
    """`anthropic:MODEL`: one user message, the question back as text."""

    kind = "anthropic"
    max_concurrency: int | None = None

    def __init__(self, model: str, settings: Settings, key: str, base_url: str | None, timeout: float) -> None:
        self._sdk = require("anthropic", extra="llm", purpose="the anthropic backend")
        self.model = model
        self._settings = settings
        self._client = self._sdk.Anthropic(api_key=key, base_url=base_url, max_retries=0, timeout=timeout)
        # Recent SDKs dropped the sampling parameters from Messages.create (recent models fix them);
        # older ones take `temperature`. Send it only where the SDK has it, and say so otherwise.
        self._sampling: dict[str, Any] = {}
        if "temperature" in inspect.signature(self._client.messages.create).parameters:
            self._sampling["temperature"] = settings.temperature
        else:
            print(f"goldeval: note: anthropic SDK {getattr(self._sdk, '__version__', '?')} takes no temperature; "
                  "the model's own sampling applies", file=sys.stderr)

    def generate(self, prompt: str) -> str:
        message = self._client.messages.create(
            model=self.model,
            max_tokens=self._settings.max_tokens,
            messages=[{"role": "user", "content": prompt}],
            **self._sampling,
        )
        return "".join(getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text")

    def classify(self, exc: BaseException) -> Verdict:
        return classify_sdk_error(self._sdk, exc)


class OpenAIBackend:
    """`openai:MODEL`: one user message to /chat/completions, the first choice's content back."""

    kind = "openai"
    max_concurrency: int | None = None

    def __init__(self, model: str, settings: Settings, key: str, base_url: str | None, timeout: float,
                 tokens_field: str) -> None:
        self._sdk = require("openai", extra="llm", purpose="the openai backend")
        self.model = model
        self._settings = settings
        self._tokens_field = tokens_field
        self._client = self._sdk.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=timeout)

    def generate(self, prompt: str) -> str:
        limit: dict[str, Any] = {self._tokens_field: self._settings.max_tokens}
        completion = self._client.chat.completions.create(
            model=self.model,
            messages=[{"role": "user", "content": prompt}],
            temperature=self._settings.temperature,
            **limit,
        )
        if not completion.choices:
            return ""
        return completion.choices[0].message.content or ""

    def classify(self, exc: BaseException) -> Verdict:
        return classify_sdk_error(self._sdk, exc)


def _timeout(spec: BackendSpec) -> float:
    raw = spec.options.get("timeout")
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise InputError(f"timeout={raw!r} in {spec.spec!r} is not a positive number of seconds", value=raw,
                         hint="e.g. timeout=60")
    return value
