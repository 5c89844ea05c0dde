"""`pytest --core` (tests/needs.py, what `make test-core` runs): tests marked with an extra are deselected,
never skipped, and a module marked as a whole is not imported, so its optional imports cannot fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

FILES = {
    "conftest.py": f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                   "from needs import (pytest_addoption, pytest_collection_modifyitems, pytest_configure,  # noqa\n"
                   "                   pytest_ignore_collect, pytest_terminal_summary)\n",
    "test_plain.py": "def test_core():\n    pass\n",
    "test_whole_module.py": "import pytest\nimport a_package_nobody_installed\n\npytestmark = [pytest.mark.fast]\n\n"
                            "def test_numba():\n    pass\n",
    "test_some.py": "import pytest\n\n@pytest.mark.dense\ndef test_model():\n    raise AssertionError('ran')\n\n"
                    "@pytest.mark.parametrize('kernel', [pytest.param('numba', marks=pytest.mark.fast), 'numpy'])\n"
                    "def test_kernel(kernel):\n    assert kernel == 'numpy'\n",
}


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
                           *args, str(folder)], capture_output=True, text=True, cwd=folder, timeout=300)


def test_core_deselects_marked_tests_and_leaves_marked_modules_unimported(tmp_path: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    core = run(tmp_path, "--core")
    assert core.returncode == 0, core.stdout
    assert "2 passed, 2 deselected" in core.stdout and "skipped" not in core.stdout
    assert "--core: 1 module(s) marked as a whole for an extra were not collected: test_whole_module.py" in core.stdout
    whole = run(tmp_path)  # without --core everything runs: the marked module's import fails, the marked test fails
    assert whole.returncode != 0 and "a_package_nobody_installed" in whole.stdout


def test_the_markers_are_registered() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "--markers"], capture_output=True, text=True,
                          cwd=TESTS.parent, timeout=300)
    from needs import NEEDS

    assert [name for name in NEEDS if f"@pytest.mark.{name}:" not in done.stdout] == []
