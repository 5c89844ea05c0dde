"""The user cache (goldeval.usercache): what is made once per machine is made once, whatever the folder.

Issue 19: the workspace is `.goldeval` in the current folder, so every new project folder quantized the
default model again (about 40 s) and compiled the numba BM25 kernel again, although the docs said "once per
machine". The BM25 kernel's case is in tests/test_bm25_search.py (a process in another folder loads it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from goldeval.usercache import user_cache
from hang_guard import HANG_GUARD


def test_the_user_cache_is_goldeval_cache_else_xdg_else_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOLDEVAL_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache() == tmp_path / "home" / ".cache" / "goldeval"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache() == tmp_path / "xdg" / "goldeval"
    monkeypatch.setenv("GOLDEVAL_CACHE", str(tmp_path / "mine"))
    assert user_cache() == tmp_path / "mine"
    monkeypatch.setenv("GOLDEVAL_CACHE", "")  # set but empty: as if unset, like GOLDEVAL_WORKSPACE
    assert user_cache() == tmp_path / "xdg" / "goldeval"


# A project process: count each conversion (one line in a file both processes append to), embed one text.
_PROJECT = """
import json, sys
from pathlib import Path
from goldeval.retrievers.encoders import quantize
from goldeval.retrievers.encoders.registry import load_encoder

convert = quantize._convert
def counted(*args):
    with open(sys.argv[1], "a") as count:
        count.write("converted\\n")
    convert(*args)
quantize._convert = counted
print(json.dumps(load_encoder("minilm", progress=False).encode(["how do I wait two seconds"])[0].tolist()))
"""


@pytest.mark.models  # minilm's int8 copy (extra `dense`)
def test_two_project_folders_at_once_share_one_quantized_model_made_once(tmp_path: Path) -> None:
    cache, count = tmp_path / "user-cache", tmp_path / "conversions.txt"
    env = {**os.environ, "GOLDEVAL_CACHE": str(cache)}
    env.pop("GOLDEVAL_WORKSPACE", None)
    projects = [tmp_path / "project-a", tmp_path / "project-b"]
    started = []
    for folder in projects:  # both at once: one converts, the other waits on the lock and reads its file
        folder.mkdir()
        started.append(subprocess.Popen([sys.executable, "-c", _PROJECT, str(count)], cwd=folder, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = [p.communicate(timeout=HANG_GUARD) for p in started]
    assert [p.returncode for p in started] == [0, 0], [err[-2000:] for _, err in outputs]
    assert count.read_text().splitlines() == ["converted"]  # quantized once, for both folders
    vectors = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert vectors[0] == vectors[1] and len(vectors[0]) == 384
    made = sorted(p.name for p in (cache / "models").iterdir())
    assert len(made) == 1 and made[0].startswith("minilm-int8-dynamic-") and made[0].endswith(".onnx"), made
    for folder in projects:  # nothing of the machine's was written into a project's workspace
        assert not (folder / ".goldeval" / "models").exists()
    # a third folder, later: loads the same file, converts nothing
    third = tmp_path / "project-c"
    third.mkdir()
    done = subprocess.run([sys.executable, "-c", _PROJECT, str(count)], cwd=third, env=env, capture_output=True,
                          text=True, timeout=HANG_GUARD, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == vectors[0]
    assert count.read_text().splitlines() == ["converted"]


def test_old_workspace_model_and_numba_folders_are_named_once_and_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: `<workspace>/models` and `<workspace>/numba` (where an older goldeval kept model copies and
    compiled kernels) were no longer read and nothing said so: they sat there taking room. Checking the
    workspace now says it once, in one line on stderr (what, how much, that they can go), and deletes nothing."""
    from goldeval.store.workspace import Workspace

    monkeypatch.setenv("GOLDEVAL_CACHE", str(tmp_path / "user-cache"))
    workspace = tmp_path / "project" / ".goldeval"
    (workspace / "models" / "minilm").mkdir(parents=True)
    (workspace / "models" / "minilm" / "model.onnx").write_bytes(b"m" * 2_000_000)
    (workspace / "models" / "note.txt").write_bytes(b"n" * 500_000)
    (workspace / "numba").mkdir()
    (workspace / "numba" / "kernels.split_block-155.py311.nbi").write_bytes(b"k" * 300_000)
    (workspace / "embeddings").mkdir()  # the workspace's own: not named
    Workspace(workspace).check()
    Workspace(workspace).check()  # once per process and workspace
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("goldeval: note: ")
    assert f"{workspace / 'models'} (model copies, 2.5 MB)" in err and f"{workspace / 'numba'} (compiled kernels, 0.3 MB)" in err
    assert "no longer read" in err and "delete them" in err and str(tmp_path / "user-cache") in err
    assert "embeddings" not in err
    assert (workspace / "models" / "minilm" / "model.onnx").stat().st_size == 2_000_000  # nothing deleted
    assert (workspace / "numba" / "kernels.split_block-155.py311.nbi").exists()

    clean = tmp_path / "new-project" / ".goldeval"  # a workspace without them: not a word
    Workspace(clean).check()
    assert capsys.readouterr().err == ""
    only = tmp_path / "third" / ".goldeval"
    (only / "numba").mkdir(parents=True)
    Workspace(only).check()
    assert capsys.readouterr().err == f"goldeval: note: {only / 'numba'} (compiled kernels, 0.0 MB): an older " \
        f"goldeval's, no longer read (they are made once per machine in {tmp_path / 'user-cache'} now); delete it " \
        "to get the space back\n"
