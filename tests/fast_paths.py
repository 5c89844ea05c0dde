"""A step that an optional module only makes faster is tested both ways: orjson (the `fast` extra) with
`@pytest.mark.parametrize("orjson", ORJSON)` and `use_orjson(module, orjson, monkeypatch)`; the C reader of dicts
with `C_READER` and `use_c_reader(on, monkeypatch)`.

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


C_READER = [True, False]
"""With the C reader of Python dicts (`goldeval.metrics._locate`, built by `pip install` wherever a C compiler is
found, so in every environment our Makefile makes), and with the Python reader it falls back to."""


def use_c_reader(on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """`goldeval.metrics.judge` with its C reader, asserted built (so a missing build fails, never passes as the
    Python reader), or without it, as an install without a C compiler runs."""
    from goldeval.metrics import judge

    if on:
        assert judge._clocate is not None, "goldeval.metrics._locate is not built: `pip install -e .` needs a C compiler"
    else:
        monkeypatch.setattr(judge, "_clocate", None)
