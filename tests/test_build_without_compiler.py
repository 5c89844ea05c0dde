"""The C reader of dicts is optional in the build: where no C compiler is found, the wheel is still made, without
it, and the package gives the same numbers through its Python reader (README: "Evaluate your own retrieval")."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import json, sys
from goldeval.metrics import judge
from goldeval.metrics.compute import evaluate_scores
from goldeval.metrics.definitions import parse_metric
assert judge.__file__.startswith(sys.argv[1]), judge.__file__
values = evaluate_scores({"q": {"a": 1, "b": 2}, "r": {"x": 1}}, {"q": {"a": 0.5, "b": 0.7, "c": 0.7}, "r": {"y": 1.0}},
                         [parse_metric("ndcg@10"), parse_metric("mrr")])
print(json.dumps({"built": judge._clocate is not None, "values": {str(m): v.tolist() for m, v in values.items()}}))
"""


def _source(into: Path) -> Path:
    """The project's source as an sdist holds it (no build, no .so, no virtual environment): the build then
    writes its build/ folder there, never in the checkout."""
    skip = shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "*.egg-info")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, into / name)
    for folder in ("src", "docs"):  # docs: the package's manual/ links to it
        shutil.copytree(ROOT / folder, into / folder, symlinks=True, ignore=skip)
    return into


def test_a_wheel_built_without_a_c_compiler_works(tmp_path: Path) -> None:
    env = {**os.environ, "CC": "/bin/false"}  # setuptools' compiler (and linker): every compile fails
    (tmp_path / "source").mkdir()
    source = _source(tmp_path / "source")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", "-w", str(tmp_path / "wheel"), str(source)],
                           env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("goldeval-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "goldeval/metrics/judge.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd"))], "a C extension was built without a compiler"
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    ran = subprocess.run([sys.executable, "-c", CHECK, str(site)], env={**os.environ, "PYTHONPATH": str(site)},
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    out = json.loads(ran.stdout)
    assert out["built"] is False
    # q: b (grade 2) ranks 2nd (tied with c at 0.7, c's id sorts after b's), a (grade 1) 3rd; trec_eval's gain is
    # the grade; r: nothing found
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert out["values"]["ndcg@10"] == [pytest.approx(dcg / ideal, abs=1e-15), 0.0]
    assert out["values"]["mrr"] == [0.5, 0.0]
