"""The public surface: what the README and the examples import is public, and names mean one thing (issue 22).

Public means a name in `goldeval.__all__`, or in the `__all__` of a package of `goldeval.PUBLIC_PACKAGES`
(imported as `from goldeval.corpus import load_corpus`, or reached as `goldeval.testing.assert_no_regression`).
A deeper module (`goldeval.golden.io`, `goldeval.retrievers.bm25`) is internal: an example that imports
one teaches users something that may change without notice.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import types
import warnings
from pathlib import Path

import pytest

import goldeval

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.py"))


def public_names(module: str) -> set[str]:
    """The names `module` makes public, or an empty set for a module that is not public."""
    if module != "goldeval" and module not in goldeval.PUBLIC_PACKAGES:
        return set()
    return set(importlib.import_module(module).__all__)


def readme_blocks() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    return [(f"README.md python block {i + 1}", block) for i, block in enumerate(blocks)]


def sources() -> list[tuple[str, str]]:
    found = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in EXAMPLES]
    return found + readme_blocks()


def private_uses(source: str) -> list[str]:
    """Every import or `goldeval.X.Y` attribute chain of `source` that reaches past the public surface."""
    tree = ast.parse(source)
    bad: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "goldeval":
            allowed = public_names(node.module)
            bad += [f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names
                    if a.name not in allowed]
        elif isinstance(node, ast.Import):
            bad += [f"line {node.lineno}: import {a.name}" for a in node.names
                    if a.name.split(".")[0] == "goldeval" and a.name != "goldeval"
                    and a.name not in goldeval.PUBLIC_PACKAGES]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "goldeval":
            package = f"goldeval.{node.attr}"
            if node.attr not in public_names("goldeval") and package not in goldeval.PUBLIC_PACKAGES:
                bad.append(f"line {node.lineno}: goldeval.{node.attr}")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
              and isinstance(node.value.value, ast.Name) and node.value.value.id == "goldeval"):
            package = f"goldeval.{node.value.attr}"
            if package in goldeval.PUBLIC_PACKAGES and node.attr not in public_names(package):
                bad.append(f"line {node.lineno}: {package}.{node.attr}")
    return sorted(bad, key=lambda text: int(text.split()[1].rstrip(":")))


def test_there_is_something_to_check() -> None:
    assert len(EXAMPLES) >= 20, EXAMPLES
    assert len(readme_blocks()) >= 3


@pytest.mark.parametrize("where, source", sources(), ids=[w for w, _ in sources()])
def test_examples_and_readme_use_only_public_names(where: str, source: str) -> None:
    assert private_uses(source) == [], f"{where} uses internal names"


def test_the_check_catches_private_imports() -> None:
    source = ("import goldeval\nimport goldeval.golden.io\nfrom goldeval.golden.io import load_golden\n"
              "from goldeval.golden import load_golden as ok\nfrom goldeval import evaluate, scorecard\n"
              "goldeval.evaluation.evaluate\ngoldeval.testing.assert_no_regression\ngoldeval.report.terminal\n")
    assert private_uses(source) == [
        "line 2: import goldeval.golden.io", "line 3: from goldeval.golden.io import load_golden",
        "line 5: from goldeval import scorecard", "line 6: goldeval.evaluation", "line 8: goldeval.report.terminal",
    ]


def test_the_readme_quickstart_needs_only_import_goldeval() -> None:
    _, quickstart = readme_blocks()[0]
    assert [line for line in quickstart.splitlines() if "import" in line] == ["import goldeval"]


@pytest.mark.parametrize("package", ["goldeval", *goldeval.PUBLIC_PACKAGES])
def test_every_public_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert missing == []


def test_no_package_shadows_a_submodule_with_a_re_export() -> None:
    """`import goldeval.stats.compare` once gave the function `compare` (re-exported by `goldeval.stats`)."""
    shadowed = []
    for info in pkgutil.walk_packages(goldeval.__path__, "goldeval."):
        if not info.ispkg:
            continue
        package = importlib.import_module(info.name)
        for sub in pkgutil.iter_modules(package.__path__):
            if sub.name in getattr(package, "__all__", ()) or not isinstance(
                    package.__dict__.get(sub.name, types.ModuleType(sub.name)), types.ModuleType):
                shadowed.append(f"{info.name}.{sub.name}")
    assert shadowed == []
    names: dict[str, object] = {}
    exec("import goldeval.stats.compare\nfrom goldeval.stats import compare", names)
    assert isinstance(names["compare"], types.ModuleType) and names["compare"].__name__ == "goldeval.stats.compare"
    assert callable(goldeval.compare) and not isinstance(goldeval.compare, types.ModuleType)


def test_qrels_is_one_name_with_one_meaning() -> None:
    import goldeval.types

    assert isinstance(goldeval.Qrels, type) and goldeval.Qrels.__module__ == "goldeval.golden.model"
    assert goldeval.types.QrelsDict.__origin__.__name__ == "Mapping"  # type: ignore[attr-defined]
    with pytest.warns(FutureWarning, match=r"goldeval\.types\.Qrels is now goldeval\.types\.QrelsDict"):
        old = goldeval.types.Qrels
    assert old is goldeval.types.QrelsDict
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        goldeval.types.QrelsDict  # noqa: B018 - the new name does not warn
