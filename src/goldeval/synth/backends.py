"""Question generators, chosen by a spec as retrievers are:

    anthropic:MODEL[?key_env=VAR&base_url=URL&timeout=S]   the Anthropic Messages API (`anthropic` SDK)
    openai:MODEL[?base_url=URL&key_env=VAR&timeout=S&tokens_field=max_completion_tokens]
                                                           any OpenAI-compatible chat server (`openai` SDK):
                                                           OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio
    transformers:FOLDER                                    a local causal language model folder
    module:function                                        your own `generate(prompt) -> str`

A spec is parsed without importing or calling anything (`parse_backend`), so `--dry-run` and the reply
cache's keys need no SDK, no key and no network; `BackendSpec.build` makes the working backend.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from goldeval.errors import InputError
from goldeval.fingerprint import Fingerprinter
from goldeval.remote.retry import Verdict

KINDS = ("anthropic", "openai", "transformers")
OPTIONS: dict[str, dict[str, str]] = {
    "anthropic": {"key_env": "environment variable holding the key (default ANTHROPIC_API_KEY)",
                  "base_url": "API address (default: Anthropic's)", "timeout": "seconds per request (default 60)"},
    "openai": {"key_env": "environment variable holding the key (default OPENAI_API_KEY; optional with base_url)",
               "base_url": "an OpenAI-compatible server, e.g. http://localhost:11434/v1",
               "timeout": "seconds per request (default 60)",
               "tokens_field": "max_tokens (default) or max_completion_tokens (newer OpenAI models)"},
    "transformers": {},
}
HINT = ("use anthropic:MODEL, openai:MODEL[?base_url=URL], transformers:FOLDER or module:function, e.g. "
        "openai:gpt-4o-mini or openai:llama3.1?base_url=http://localhost:11434/v1")


@dataclass(frozen=True)
class Settings:
    """Generation settings: part of every reply's cache key and of every question's provenance."""

    temperature: float = 0.7
    max_tokens: int = 64
    seed: int = 0


class Backend(Protocol):
    """One model behind one spec: `generate(prompt)` makes one attempt; `classify` sorts its failures."""

    kind: str
    model: str
    max_concurrency: int | None

    def generate(self, prompt: str) -> str: ...

    def classify(self, exc: BaseException) -> Verdict: ...


@dataclass(frozen=True)
class BackendSpec:
    """A parsed backend spec; nothing imported, no key read."""

    spec: str
    kind: str
    """anthropic, openai, transformers or function."""
    target: str
    """The model name, the model folder, or `module:function`."""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def paid(self) -> bool:
        """Whether calls go to a hosted API that may bill per token (a base_url may point at a local one)."""
        return self.kind == "anthropic" or (self.kind == "openai" and "base_url" not in self.options)

    @property
    def model(self) -> str:
        return Path(self.target).name if self.kind == "transformers" else self.target

    def identity(self, settings: Settings) -> str:
        """What a reply depends on besides the prompt: kind, model, endpoint, settings (never a key)."""
        parts: dict[str, object] = {"kind": self.kind, "model": self.target,
                                    "base_url": self.options.get("base_url", ""),
                                    "temperature": settings.temperature, "max_tokens": settings.max_tokens}
        if self.kind == "transformers":
            parts["folder"] = folder_fingerprint(Path(self.target))
            parts["seed"] = settings.seed
        return json.dumps(parts, sort_keys=True)

    def build(self, settings: Settings) -> Backend:
        """The working backend: imports its SDK or model, reads its key."""
        if self.kind in ("anthropic", "openai"):
            from goldeval.synth.llm_clients import build_client_backend

            return build_client_backend(self, settings)
        if self.kind == "transformers":
            from goldeval.synth.local_model import TransformersBackend

            return TransformersBackend(Path(self.target), settings)
        return FunctionBackend(self.target, load_function(self.target))


def parse_backend(spec: str) -> BackendSpec:
    """Parse `kind:target[?options]`; any other `module:function` is the user's own generator."""
    spec = spec.strip()
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError(f"cannot read backend spec {spec!r}", value=spec, hint=HINT)
    if kind not in KINDS:
        if "?" in spec or "/" in kind:
            raise InputError(f"unknown backend {kind!r} in {spec!r}", value=spec, hint=HINT)
        return BackendSpec(spec, "function", spec)
    body, options = split_options(spec, rest) if kind != "transformers" else (rest, {})
    unknown = sorted(set(options) - set(OPTIONS[kind]))
    if unknown:
        known = "; ".join(f"{k}: {v}" for k, v in OPTIONS[kind].items())
        raise InputError(f"unknown option(s) {', '.join(unknown)} in backend {spec!r}", value=spec, hint=known)
    if not body:
        raise InputError(f"backend spec {spec!r} names no model", value=spec, hint=HINT)
    if kind == "transformers" and not Path(body).is_dir():
        raise InputError("transformers backend: model folder not found", path=body,
                         hint="give a folder holding config.json, the weights and the tokenizer files")
    return BackendSpec(spec, kind, body, options)


def split_options(spec: str, rest: str) -> tuple[str, dict[str, str]]:
    """`MODEL?key=value&key=value` -> (MODEL, options); values stay strings."""
    body, sep, query = rest.partition("?")
    options: dict[str, str] = {}
    for part in filter(None, query.split("&")) if sep else ():
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise InputError(f"cannot read option {part!r} in backend {spec!r}", value=spec,
                             hint="options look like openai:MODEL?base_url=http://localhost:8000/v1&key_env=VAR")
        options[key.strip()] = value.strip()
    return body, options


def folder_fingerprint(folder: Path) -> str:
    """A hash of the model folder's file names, sizes and modification times: new weights, new replies."""
    digest = Fingerprinter()
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                stat = path.stat()
                digest.value([path.relative_to(folder).as_posix(), stat.st_size, stat.st_mtime_ns])
    return digest.hexdigest(length=16)


GenerateFn = Callable[[str], str]
"""A user's generator: `generate(prompt) -> the reply text`."""


class FunctionBackend:
    """Your own generator, `module:function`: called with the prompt, returns the reply."""

    kind = "function"
    max_concurrency: int | None = None

    def __init__(self, name: str, fn: GenerateFn) -> None:
        self.model = name
        self._fn = fn

    def generate(self, prompt: str) -> str:
        reply = self._fn(prompt)
        if not isinstance(reply, str):
            raise TypeError(f"{self.model} returned {type(reply).__name__}, expected the reply as a str")
        return reply

    def classify(self, exc: BaseException) -> Verdict:
        status = getattr(exc, "status_code", None)
        if isinstance(status, int):
            from goldeval.remote.retry import classify_status

            return classify_status(status, str(exc), None)
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return Verdict("transient", f"{type(exc).__name__}: {exc}")
        return Verdict("skip", f"{self.model} raised {type(exc).__name__}: {exc}")


def load_function(spec: str) -> GenerateFn:
    """Import `module:function` (the current folder is searched too, as for search functions)."""
    module_name, _, attr = spec.partition(":")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"cannot import module {module_name!r} for backend {spec!r}: {exc}", value=spec,
                         hint="run from the folder that holds the module, or install it; " + HINT) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"{module_name} has no function {attr!r}", value=spec,
                         hint="expected module:function with generate(prompt) -> str")
    return fn  # type: ignore[no-any-return]
