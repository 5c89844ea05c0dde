"""Public names imported on first use (PEP 562), so `import goldeval` and `goldeval --help` stay cheap.

A package's `__init__` declares `_LAZY = {name: "goldeval.module.that.defines.it"}` and sets
`__getattr__ = exports(__name__, _LAZY)`: each name has one home, its defining module, and the package
only points at it. `renamed` maps an old spelling to its new one for one release: using it still works
and warns once, naming the new spelling (CHANGELOG.md, "Migration").
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import Any


def exports(package: str, table: Mapping[str, str], *, renamed: Mapping[str, str] | None = None,
            subpackages: Collection[str] = ()) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports `table[name]` and returns its `name`; a name in
    `subpackages` (full dotted names) is that subpackage, so `goldeval.testing` works after `import goldeval`."""
    old_names = dict(renamed or {})

    def __getattr__(name: str) -> Any:
        if name in table:
            return getattr(importlib.import_module(table[name]), name)
        if f"{package}.{name}" in subpackages:
            return importlib.import_module(f"{package}.{name}")
        if name in old_names:
            new = old_names[name]
            warnings.warn(f"{package}.{name} is now {new}; the old name goes away in the next release",
                          FutureWarning, stacklevel=2)
            module, _, attr = new.rpartition(".")
            return getattr(importlib.import_module(module), attr)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
