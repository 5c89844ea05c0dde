"""API keys: read from environment variables only, and never shown.

A key is read when a backend is built, from the variable its spec names (`ANTHROPIC_API_KEY`,
`OPENAI_API_KEY`, or `?key_env=NAME`), and registered with the one redaction rule
(`goldeval.textsafe.keep_secret`); `textsafe.redact` replaces every registered key in a text with `***`,
and every message goldeval builds from a backend's error goes through it, so a server that
echoes the key back in an error body cannot put it on the screen. Keys are never part of a cache key, a
file, a log line or an error message (tests/test_synth_sdk.py searches all of them for the key).
"""

from __future__ import annotations

import os
import re

from goldeval.errors import InputError
from goldeval.textsafe import keep_secret

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key_from_env(variable: str, *, backend: str, required: bool = True) -> str | None:
    """The key in environment variable `variable`, registered for redaction; None when it is unset and
    not required (a local OpenAI-compatible server that needs no key)."""
    if not _ENV_NAME.match(variable):
        raise InputError(f"key_env={variable!r} is not an environment variable name", value=variable,
                         hint="name the variable that holds the key, e.g. key_env=MY_LLM_KEY")
    value = os.environ.get(variable, "").strip()
    if not value:
        if not required:
            return None
        raise InputError(f"the {backend} backend needs an API key in the environment variable {variable}, "
                         "which is not set", value=variable,
                         hint=f"export {variable}=... (goldeval reads keys from the environment only), or name "
                         "another variable with ?key_env=NAME")
    keep_secret(value)
    return value


