"""Label fixes and verdicts written into a golden-set file: provenance, changelog, reasons, the pool
command line, the page server's write protection, and the model pre-label kept a suggestion."""

from __future__ import annotations

import json
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.golden.changelog import changes_summary, read_changes
from goldeval.golden.io import load_golden
from goldeval.golden.versions import freeze
from goldeval.judging.edits import GoldenFile
from goldeval.judging.pool import PoolItem, build_pool
from goldeval.judging.prelabel import prelabel
from goldeval.scorecard.model import Hit, QuestionResult, RetrieverResult, Scorecard
from goldeval.web.app import make_server, start_in_thread
from goldeval.web.pool import PoolStore
from hang_guard import HANG_GUARD

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "examples" / "data" / "golden_example.jsonl"


@pytest.fixture()
def golden_path(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    shutil.copy(GOLDEN, path)
    freeze(load_golden(path), by="ana")
    return path


def _card(tops: dict[str, list[str]], name: str = "bm25") -> Scorecard:
    golden = load_golden(GOLDEN)
    questions = []
    for q in golden:
        expected = golden.relevant(q.id)
        docs = tops.get(q.id, [])
        ranks = {e: (docs.index(e) + 1 if e in docs else None) for e in expected}
        found = [r for r in ranks.values() if r is not None]
        questions.append(QuestionResult(q.id, q.question, expected, q.off_topic, min(found) if found else None, ranks,
                                        [Hit(d, 1.0 / (i + 1), d) for i, d in enumerate(docs)], {}))
    return Scorecard([RetrieverResult(name, questions, {})], [], [1, 5], 5, [], snippets={
        d: {"doc": d, "title": d, "text": f"text of {d}"} for docs in tops.values() for d in docs})


def test_fixes_from_a_miss_are_recorded_with_their_reasons(golden_path: Path) -> None:
    file = GoldenFile(golden_path, judge="ana")
    file.judge_passage("h05", "git/git-reset.md", 1, pool="p1", fix=True, reason="reset --soft rewrites the message too")
    file.wrong_expected("h04", "claude/claude-git-workflow.md", "it never says how to create a branch")
    file.not_covered("h07", "the venv page was removed from the docs")
    golden = load_golden(golden_path)
    reset = next(j for j in golden.qrels.judgments("h05") if j.doc_id == "git/git-reset.md")
    assert (reset.grade, reset.judge) == (1, "ana") and "pool p1" in reset.note and "reset --soft" in reset.note
    assert golden.grades("h04")["claude/claude-git-workflow.md"] == 0 and golden.relevant("h04") == {"git/git-branch.md": 1}
    assert golden["h07"].off_topic and golden.grades("h07") == {"python/venv.md": 0}
    changes = read_changes(golden_path)
    assert [(c.action, c.question, c.reason != "", c.version) for c in changes] == [
        ("also_answers", "h05", True, 1), ("wrong_expected", "h04", True, 1), ("not_covered", "h07", True, 1)]
    assert changes[1].before == 1 and changes[2].before == "answerable"
    summary = changes_summary(golden_path, golden.version)
    assert summary["text"] == "3 labels fixed since version 1 (not frozen yet)"
    freeze(golden, by="ana")
    assert changes_summary(golden_path, load_golden(golden_path).version)["text"] == "3 labels fixed since version 1"


def test_a_fix_without_a_reason_is_refused_and_nothing_is_written(golden_path: Path) -> None:
    before = golden_path.read_bytes()
    file = GoldenFile(golden_path, judge="ana")
    with pytest.raises(InputError, match="a label fix needs a reason"):
        file.not_covered("h07", "  ")
    with pytest.raises(InputError, match="`git/git-stash.md` is not an expected document"):
        file.wrong_expected("h04", "git/git-stash.md", "wrong")
    with pytest.raises(InputError, match="question `o01` is already off-topic"):
        file.not_covered("o01", "no page about Word")
    with pytest.raises(InputError, match="question `nope` is not in the golden set"):
        file.judge_passage("nope", "git/git-stash.md", 1)
    assert golden_path.read_bytes() == before and read_changes(golden_path) == []
    assert not [p for p in golden_path.parent.iterdir() if p.name.endswith(".tmp")]


def test_concurrent_verdicts_are_all_kept(golden_path: Path) -> None:
    file = GoldenFile(golden_path, judge="ana")
    docs = ["git/git-branch.md", "git/git-commit.md", "git/git-reset.md", "git/git-revert.md", "python/venv.md"]
    threads = [threading.Thread(target=file.judge_passage, args=("h01", d, 0)) for d in docs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(load_golden(golden_path).grades("h01")[d] == 0 for d in docs)
    assert len(read_changes(golden_path)) == len(docs)


def test_pool_keeps_only_unjudged_passages_and_marks_misses(golden_path: Path) -> None:
    base = _card({"h01": ["git/git-stash.md", "git/git-branch.md"], "h05": ["git/git-reset.md", "git/git-revert.md"]})
    new = _card({"h01": ["git/git-branch.md", "python/venv.md"], "h05": ["git/git-commit.md"]})
    golden = load_golden(golden_path)
    pool = build_pool([base, new], ["base", "new"], golden, k=5)
    assert pool.systems == ["base/bm25", "new/bm25"]
    pairs = [(i.question_id, i.passage, [(f.system, f.rank) for f in i.found_by], i.miss) for i in pool.items]
    assert pairs == [
        ("h01", "git/git-branch.md", [("base/bm25", 2), ("new/bm25", 1)], True),  # new/bm25 misses h01
        ("h01", "python/venv.md", [("new/bm25", 2)], True),
        ("h05", "git/git-reset.md", [("base/bm25", 1)], True),
        ("h05", "git/git-revert.md", [("base/bm25", 2)], True),
    ]
    assert pool.unjudged == {"base/bm25": 3, "new/bm25": 2}
    assert pool.items[0].text == "text of git/git-branch.md"
    assert "results keep their top 5 only" in build_pool([base], ["base"], golden, k=50).notes[0]


def test_page_server_refuses_writes_without_its_token(golden_path: Path) -> None:
    pool = build_pool([_card({"h01": ["git/git-branch.md"]})], ["r"], load_golden(golden_path), k=5)
    server = make_server(pool=PoolStore(pool, GoldenFile(golden_path, judge="ana")), port=0)
    thread = start_in_thread(server)
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:  # the items are read with the page's token too
            urllib.request.urlopen(server.url + "api/pool/items")
        assert refused.value.code == 403
        page = urllib.request.urlopen(server.url + "pool").read().decode()
        token = page.split('name="goldeval-token" content="')[1].split('"')[0]
        read = urllib.request.Request(server.url + "api/pool/items", headers={"X-Goldeval-Token": token})
        with urllib.request.urlopen(read) as response:
            items = json.load(response)["items"]
        assert [(i["question_id"], i["passage"], i["status"]) for i in items] == [("h01", "git/git-branch.md", "unjudged")]
        body = json.dumps({"action": "relevant", "grade": 1}).encode()
        for headers in ({"Content-Type": "application/json"},
                        {"Content-Type": "application/json", "X-Goldeval-Token": "guess", "Origin": "http://evil.example"}):
            request = urllib.request.Request(server.url + "api/pool/items/p1", data=body, headers=headers, method="POST")
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(request)
            assert caught.value.code == 403
        assert load_golden(golden_path).grades("h01") == {"git/git-stash.md": 1}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=HANG_GUARD)


def test_pool_command_lists_candidates_from_files(golden_path: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.json"
    _card({"h02": ["git/git-reset.md", "git/git-stash.md"]}).save(results)
    out = tmp_path / "pool.json"
    assert main(["pool", str(results), "--golden", str(golden_path), "--list", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "question\tpassage\tfound_by\tmiss\tquestion_text"
    assert lines[1].startswith("h02\tgit/git-stash.md\tbm25#2\t0\t")
    assert "1 unjudged passage(s) for 1 question(s)" in captured.err
    assert json.loads(out.read_text())["items"][0]["passage"] == "git/git-stash.md"
    assert main(["pool", str(results), "--golden", str(tmp_path / "missing.jsonl"), "--list"]) == 2


def stand_in(prompt: str) -> str:
    """The backend `test_pool_edits:stand_in`: a grade for stash pages, prose (no grade) for anything else."""
    return "3" if "Passage (git/git-stash.md)" in prompt else "I think it is relevant"


def test_prelabel_suggests_the_judges_grade_and_never_guesses(tmp_path: Path) -> None:
    items = [PoolItem("p1", "h01", "stash my changes", "git/git-stash.md", [], False, "", "git stash"),
             PoolItem("p2", "h02", "undo a commit", "git/git-commit.md", [], False, "", "git commit")]
    suggestions = prelabel(items, "test_pool_edits:stand_in", tmp_path / "ws")
    assert {k: (s.grade, s.by) for k, s in suggestions.items()} == {"p1": (3, "test_pool_edits:stand_in")}
