"""`goldeval judge`'s calls: cached and counted, checksummed, unreadable replies asked again then failed,
and its bad input refused in one line. The judge here is a `module:function` backend (no SDK needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.judging.grader import Ask, Grader
from goldeval.store.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "examples" / "data" / "golden_example.jsonl"
CALLS: list[str] = []


def reply(prompt: str) -> str:
    """The backend `test_judge_cache:reply`: prose for `prose`, prose until reminded for `late`, else 2."""
    CALLS.append(prompt)
    if "Passage (prose)" in prompt:
        return "This passage is quite relevant."
    if "Passage (late)" in prompt and "could not be read" not in prompt:
        return "Hmm, a two, I think."
    return "2"


ASKS = [Ask("q1", "how do I stash", "good", "git stash saves changes"), Ask("q1", "how do I stash", "prose", "text"),
        Ask("q2", "undo a commit", "late", "git reset --soft HEAD~1")]


def test_calls_are_cached_counted_and_unreadable_replies_failed_not_guessed(tmp_path: Path) -> None:
    CALLS.clear()
    grading = Grader("test_judge_cache:reply", Workspace(tmp_path)).grade(ASKS)
    assert [(x.passage, x.grade, x.status) for x in grading.labels] == [
        ("good", 2, "graded"), ("prose", None, "failed"), ("late", 2, "graded")]
    assert grading.labels[1].reply == "This passage is quite relevant." and "twice" in grading.labels[1].reason
    assert grading.calls == len(CALLS) == 5  # three asks, and the two unreadable ones asked once more
    again = Grader("test_judge_cache:reply", Workspace(tmp_path)).grade(ASKS)
    assert again.calls == 0 and len(CALLS) == 5 and again.labels == grading.labels


def test_a_damaged_cache_file_is_asked_again_never_served(tmp_path: Path) -> None:
    CALLS.clear()
    grader = Grader("test_judge_cache:reply", Workspace(tmp_path))
    grader.grade(ASKS[:1])
    [stored] = list((tmp_path / "judge" / "replies").rglob("*.json"))
    body = json.loads(stored.read_text())
    stored.write_text(json.dumps({**body, "reply": "3"}))  # edited by hand: its checksum no longer matches
    redo = Grader("test_judge_cache:reply", Workspace(tmp_path)).grade(ASKS[:1])
    assert redo.calls == 1 and redo.labels[0].grade == 2


def test_a_pool_file_is_graded_and_nothing_is_written_into_the_golden_set(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps({"id": "pool-1", "items": [
        {"question_id": "h01", "question": "stash my changes", "passage": "git/git-stash.md", "text": "git stash"},
        {"question_id": "h02", "question": "undo a commit", "passage": "prose", "text": "..."}]}))
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(GOLDEN.read_bytes())
    out = tmp_path / "labels.jsonl"
    assert main(["judge", "--pool", str(pool), "--golden", str(golden), "--llm", "test_judge_cache:reply",
                 "--workspace", str(tmp_path / "ws"), "--labels", str(out)]) == 0
    labels = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["passage"], x["grade"], x["judge"]) for x in labels] == [
        ("git/git-stash.md", 2, "machine:test_judge_cache:reply"), ("prose", None, "machine:test_judge_cache:reply")]
    assert golden.read_bytes() == GOLDEN.read_bytes()
    assert "nothing both graded" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--pool", "POOL", "RESULTS"], "give results files or --pool, one of the two"),
    (["--pool", "POOL"], "this is not a pool file: it has no `items` list"),
    (["--pool", "POOL", "--demo-golden"], "give --golden FILE or --demo-golden, one of the two"),
    (["--pool", "POOL", "--coverage"], "--coverage reads each question's top passages from results files"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                         message: str) -> None:
    pool = tmp_path / "pool.json"
    pool.write_text('{"k": 10}')
    args = [str(pool) if a == "POOL" else str(tmp_path / "r.json") if a == "RESULTS" else a for a in args]
    assert main(["judge", *args, "--golden", str(GOLDEN), "--llm", "test_judge_cache:reply", "--workspace", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) <= 3
