"""A step that an optional module only makes faster (orjson, the `fast` extra) is tested both ways:
`@pytest.mark.parametrize("orjson", ORJSON)` and `use_orjson(module, orjson, monkeypatch)`.

Import it as `from fast_paths import ORJSON, use_orjson` (tests/ is on sys.path under pytest)."""

from __future__ import annotations

from types import ModuleType

import pytest

ORJSON = [pytest.param(True, marks=pytest.mark.fast), False]
"""With orjson (the `fast` extra: deselected by `--core`), and without it."""


def use_orjson(module: ModuleType, on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """`module` (which keeps orjson as `_orjson`, `errors.optional`'s) with orjson, asserted installed so the
    `fast` extra's way is the one tested, or without it, as a core install runs."""
    if on:
        assert module._orjson is not None
    else:
        monkeypatch.setattr(module, "_orjson", None)
