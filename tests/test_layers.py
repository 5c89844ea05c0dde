"""The package layers read as the data flows, and no lower layer imports a higher one (issue 8).

Every `goldeval.X` import counts, lazy ones inside functions included: a lazy import is still a cycle,
only a hidden one. A new top-level module or package must be placed in LAYERS on purpose.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "goldeval"

LAYERS: list[set[str]] = [
    {"types", "errors", "ranking", "ids", "progress", "trecio", "textsafe", "jit", "words", "fingerprint", "limits",
     "_lazy", "usercache", "remote", "memory", "arrays"},  # words every layer uses
    {"store"},  # persistence: atomic writes, the workspace, caches
    {"corpus"},  # documents and passages
    {"golden"},  # questions and judgments
    {"metrics"},  # what a metric is, and the one engine
    {"run", "retrievers", "runstore"},  # what searches, what it returned, and runs kept by content
    {"scorecard"},  # typed results of an evaluation
    {"evaluation"},  # evaluate(): retrievers x golden set -> scorecard
    {"stats", "synth", "judging", "history", "sweep"},  # what is made of scorecards and golden sets
    {"report"},  # renderers: terminal, Markdown, HTML page
    {"web", "testing"},  # local servers for the pages; the pytest helper
    {"cli", "__main__", "__init__"},  # the command line and the package surface
]


def layer_of(name: str) -> int:
    for index, names in enumerate(LAYERS):
        if name in names:
            return index
    raise AssertionError(f"goldeval.{name} is in no layer: add it to LAYERS in {__file__}")


def top_level(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def imported(path: Path) -> set[str]:
    """The top-level goldeval modules `path` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from goldeval import __version__` reads a constant, not a layer
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                     if node.module == "goldeval" and a.name != "__version__"]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) for k in node.keys):
            # a package's `_LAZY` table (goldeval._lazy.exports): each value is a module imported on first use
            names = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
                     and v.value.startswith("goldeval.")]
        for name in names:
            parts = name.split(".")
            if parts[0] == "goldeval" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_every_module_is_placed() -> None:
    for path in SRC.rglob("*.py"):
        layer_of(top_level(path))


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    own = top_level(path)
    if own == "__init__":
        return  # the package surface re-exports every noun lazily
    higher = sorted(m for m in imported(path) if layer_of(m) > layer_of(own))
    assert not higher, f"{path.relative_to(SRC)} (layer {own}) imports higher layer(s): {higher}"
