"""Lifecycle files (issue 20): the golden set, its changelog, its versions and a candidates file change
in one transaction: one lock, re-read under it, all files or none, the file's own lines kept, no signal
midway (`goldeval.store.transaction`).

Each case asserts the outcome (exit code or HTTP status, one line naming the file and the value), that
no temp file is left, that refused changes leave every file byte for byte as it was, and that accepted
changes keep comments, blank lines and `_` fields. Signals are sent from a hook at the exact moment of
the first rename, in a process of its own, never after a sleep.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_cases import Outcome, assert_refused, leftovers, snapshot

import goldeval.store.transaction as transaction_module
from goldeval.errors import InputError, WriteError
from goldeval.golden.changelog import read_changes
from goldeval.golden.io import load_golden
from goldeval.golden.versions import freeze
from goldeval.judging.edits import GoldenFile
from goldeval.judging.pool import Found, Pool, PoolItem
from goldeval.synth.candidates import keep_reviews, read_candidates
from goldeval.synth.review import ReviewSession
from goldeval.web.app import make_server, start_in_thread
from goldeval.web.handler import TOKEN_HEADER
from goldeval.web.items import ItemStore
from goldeval.web.pool import PoolStore

HAND = (
    '{"_notes": "git help questions", "_owner": "docs team"}\n'
    "# hand-written; keep this comment\n"
    "\n"
    '{"id": "q1", "question": "stash my changes", "expected": ["git/stash.md"], "_ticket": "DOC-7"}\n'
    "// the branch questions\n"
    '{"id": "q2",  "question": "delete a branch", "expected": ["git/branch.md"]}\n'
)
"""A golden set as people write it: a header, a comment, a blank line, `_` fields, odd spacing."""
CORPUS = ("git/stash.md", "git/branch.md", "git/rebase.md")


def candidate(qid: str, doc: str) -> dict[str, Any]:
    return {"id": qid, "question": f"question {qid} about {doc}", "expected": [doc], "intent": "answerable",
            "provenance": {"kind": "synthetic", "generator": "test", "model": "m", "created": "2026-11-30",
                           "status": "unreviewed", "history": []},
            "_source": {"doc": doc, "title": doc, "text": f"the text of {doc}"}}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """golden.jsonl (HAND) and candidates.jsonl (three unreviewed candidates) in a folder."""
    (tmp_path / "golden.jsonl").write_text(HAND, encoding="utf-8")
    rows = [candidate("syn-1", "git/stash.md"), candidate("syn-2", "git/branch.md"), candidate("syn-3", "git/rebase.md")]
    (tmp_path / "candidates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def contents(folder: Path) -> dict[str, bytes]:
    """Every file but the lock files (empty files the writers hold their locks on)."""
    return {name: data for name, data in snapshot(folder).items() if not name.endswith(".lock")}


def lines_kept(before: str, after: str, changed: set[str]) -> None:
    """Every line of `before` is in `after` as written, except the records of `changed` questions."""
    after_lines = after.split("\n")
    for line in before.split("\n"):
        ident = re.search(r'"id": "([^"]+)"', line)
        if ident is None or ident.group(1) not in changed:
            assert line in after_lines, f"{line!r} was not kept:\n{after}"


# --- accepted changes keep the file's own lines --------------------------------------------------------


def test_golden_add_keeps_comments_blank_lines_and_own_fields(files: Path, cli: Callable[..., Outcome]) -> None:
    golden = files / "golden.jsonl"
    done = cli("golden", "add", "--golden", golden, "--question", "rebase onto main", "--expected", "git/rebase.md",
               "--incident", "INC-1", "--by", "ana")
    assert done.code == 0, done.err
    text = golden.read_text(encoding="utf-8")
    assert text.startswith(HAND)  # byte for byte, the new question appended after it
    assert json.loads(text[len(HAND):])["id"] == "inc-001"
    assert [c.action for c in read_changes(golden)] == ["added"] and leftovers(files) == []


def test_a_verdict_rewrites_only_its_own_record(files: Path) -> None:
    golden = files / "golden.jsonl"
    GoldenFile(golden, judge="ana").judge_passage("q1", "git/rebase.md", 0, pool="pool-1")
    text = golden.read_text(encoding="utf-8")
    lines_kept(HAND, text, {"q1"})
    q1 = json.loads(text.split("\n")[3])  # still on its own line, with its `_` field
    assert q1["id"] == "q1" and q1["_ticket"] == "DOC-7"
    assert {j["doc"]: j["grade"] for j in q1["judgments"]} == {"git/rebase.md": 0}
    assert load_golden(golden).grades("q1") == {"git/stash.md": 1, "git/rebase.md": 0}
    GoldenFile(golden, judge="ana").not_covered("q2", "the corpus has no branch page", pool="pool-1")
    lines_kept(HAND, golden.read_text(encoding="utf-8"), {"q1", "q2"})
    assert [c.action for c in read_changes(golden)] == ["judged", "not_covered"] and leftovers(files) == []


def test_a_verdict_keeps_windows_line_endings_and_a_missing_final_newline(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    text = HAND.replace("\n", "\r\n").rstrip("\r\n")  # CRLF, and no newline after the last line
    golden.write_bytes(text.encode())
    GoldenFile(golden, judge="ana").judge_passage("q1", "git/rebase.md", 0)
    after = golden.read_bytes().decode()
    assert after.split("\r\n")[:3] == text.split("\r\n")[:3] and after.endswith(text.split("\r\n")[-1])
    assert json.loads(after.split("\r\n")[3])["_ticket"] == "DOC-7"
    assert load_golden(golden).grades("q1") == {"git/stash.md": 1, "git/rebase.md": 0}


def test_a_review_accept_keeps_the_golden_sets_own_lines(files: Path) -> None:
    golden = files / "golden.jsonl"
    session = ReviewSession(files / "candidates.jsonl", golden, reviewer="ana")
    session.apply("syn-1", {"action": "accept"})
    session.apply("syn-2", {"action": "accept"})
    session.apply("syn-1", {"action": "edit", "question": "how do I put my changes aside"})
    text = golden.read_text(encoding="utf-8")
    assert text.startswith(HAND)
    assert [json.loads(line)["id"] for line in text[len(HAND):].splitlines()] == ["syn-1", "syn-2"]  # edited in place
    assert [c.action for c in read_changes(golden)] == ["added", "added", "edited"]


def test_freeze_keeps_earlier_version_lines_as_written(files: Path) -> None:
    golden = files / "golden.jsonl"
    freeze(load_golden(golden), by="ana")
    versions = files / "golden.versions.jsonl"
    first = versions.read_text(encoding="utf-8").rstrip("\n")
    mine = json.dumps({**json.loads(first), "_signed_off": "bo"})
    versions.write_text(mine + "\n", encoding="utf-8")
    GoldenFile(golden, judge="ana").judge_passage("q2", "git/rebase.md", 0)
    version, created = freeze(load_golden(golden), by="ana")
    assert created and version.version == 2
    assert versions.read_text(encoding="utf-8").split("\n")[0] == mine


# --- refused changes change nothing --------------------------------------------------------------------


def test_an_unwritable_changelog_refuses_the_whole_change(files: Path, cli: Callable[..., Outcome]) -> None:
    (files / "golden.changes.jsonl").mkdir()  # the changelog cannot be written: the judgment must not be
    before = contents(files)
    done = cli("golden", "add", "--golden", files / "golden.jsonl", "--question", "rebase onto main",
               "--expected", "git/rebase.md")
    assert_refused(done, "golden.changes.jsonl", "it is a folder")
    assert contents(files) == before and leftovers(files) == []


def test_a_fifo_changelog_is_refused_before_anything_is_written(files: Path) -> None:
    os.mkfifo(files / "golden.changes.jsonl")
    before = contents(files)
    with pytest.raises(WriteError, match=r"golden\.changes\.jsonl: cannot write: it is not a regular file"):
        GoldenFile(files / "golden.jsonl", judge="ana").judge_passage("q1", "git/rebase.md", 0)
    assert contents(files) == before and leftovers(files) == []


def test_a_changelog_that_is_not_utf8_is_one_line_and_no_change(files: Path, cli: Callable[..., Outcome]) -> None:
    (files / "golden.changes.jsonl").write_bytes(b'{"at": "2026-11-30", "by": "\xff"}\n')
    before = contents(files)
    done = cli("golden", "add", "--golden", files / "golden.jsonl", "--question", "rebase onto main",
               "--expected", "git/rebase.md")
    assert_refused(done, "golden.changes.jsonl:1", "not valid UTF-8", "byte 0xff")
    assert contents(files) == before and leftovers(files) == []


def test_a_rename_that_fails_puts_back_the_files_already_renamed(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = contents(files)
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if str(dst).endswith("golden.changes.jsonl"):
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(transaction_module.os, "replace", replace)
    with pytest.raises(WriteError, match=r"golden\.changes\.jsonl: cannot write: no space left on the device"):
        GoldenFile(files / "golden.jsonl", judge="ana").judge_passage("q1", "git/rebase.md", 0)
    assert contents(files) == before and leftovers(files) == []


def test_a_refused_accept_answers_400_and_writes_nothing(files: Path) -> None:
    (files / "golden.changes.jsonl").mkdir()
    before = contents(files)
    with serving(ReviewSession(files / "candidates.jsonl", files / "golden.jsonl", reviewer="ana")) as post:
        status, body = post("syn-1", {"action": "accept"})
    assert status == 400 and "golden.changes.jsonl: cannot write: it is a folder" in json.loads(body)["error"]
    assert contents(files) == before and leftovers(files) == []


@pytest.mark.parametrize("changelog_ok", [True, False])
def test_a_pool_page_verdict_is_whole_or_refused(files: Path, changelog_ok: bool) -> None:
    item = PoolItem("q1::git/rebase.md", "q1", "stash my changes", "git/rebase.md", [Found("bm25", 2)], miss=False)
    store = PoolStore(Pool("pool-1", 5, "doc", ["bm25"], [item]), GoldenFile(files / "golden.jsonl", judge="ana"))
    if not changelog_ok:
        (files / "golden.changes.jsonl").mkdir()
    before = contents(files)
    with serving(store, "pool") as post:
        status, body = post(item.id, {"action": "not_relevant"})
    if changelog_ok:
        assert status == 200, body
        lines_kept(HAND, (files / "golden.jsonl").read_text(encoding="utf-8"), {"q1"})
        assert [(c.action, c.doc) for c in read_changes(files / "golden.jsonl")] == [("judged", "git/rebase.md")]
    else:
        assert status == 400 and "golden.changes.jsonl: cannot write: it is a folder" in json.loads(body)["error"]
        assert contents(files) == before
    assert leftovers(files) == []


def test_review_refuses_a_document_the_corpus_does_not_have(files: Path) -> None:
    """The weak case: an expected id typed wrong was accepted silently; now one line names it and the
    nearest corpus id, and nothing is written."""
    before = contents(files)
    session = ReviewSession(files / "candidates.jsonl", files / "golden.jsonl", reviewer="ana", corpus=set(CORPUS))
    with pytest.raises(InputError, match=r"expected id `git/rebse.md` is not in the corpus; did you mean `git/rebase.md`"):
        session.apply("syn-1", {"action": "expected", "docs": ["git/rebse.md"]})
    with serving(session) as post:
        status, body = post("syn-1", {"action": "expected", "docs": ["gti/branch.md"]})
    assert status == 400 and "did you mean `git/branch.md`?" in json.loads(body)["error"].split("\n")[0]
    assert contents(files) == before and leftovers(files) == []
    session.apply("syn-1", {"action": "expected", "docs": ["git/branch.md"]})  # a corpus id is taken
    assert read_candidates(files / "candidates.jsonl")[0]["expected"] == ["git/stash.md", "git/branch.md"]


# --- concurrent writers --------------------------------------------------------------------------------


def test_two_review_pages_on_one_candidates_file_keep_each_others_accepts(files: Path) -> None:
    pages = [ReviewSession(files / "candidates.jsonl", files / "golden.jsonl", reviewer=who) for who in ("ana", "bo")]
    pages[0].apply("syn-1", {"action": "accept"})
    pages[1].apply("syn-2", {"action": "accept"})  # this page loaded the file before ana's accept
    pages[0].apply("syn-3", {"action": "reject"})
    statuses = {r["id"]: r["provenance"]["status"] for r in read_candidates(files / "candidates.jsonl")}
    assert statuses == {"syn-1": "accepted", "syn-2": "accepted", "syn-3": "rejected"}
    assert {q.id for q in load_golden(files / "golden.jsonl")} == {"q1", "q2", "syn-1", "syn-2"}
    assert [(c.by, c.question) for c in read_changes(files / "golden.jsonl")] == [("ana", "syn-1"), ("bo", "syn-2")]


def test_a_synth_run_keeps_the_accepts_a_review_page_made_meanwhile(files: Path) -> None:
    """`goldeval synth --out` reads the candidates, generates (minutes), then writes: it reads the file
    again under its lock and keeps what a review page did in between."""
    ours = read_candidates(files / "candidates.jsonl")  # what synth read before generating
    for record in ours:
        record["_leakage"] = {"overlap": 0.5}
    ReviewSession(files / "candidates.jsonl", files / "golden.jsonl", reviewer="ana").apply("syn-2", {"action": "accept"})
    merged = keep_reviews([*ours, candidate("syn-4", "git/stash.md")], read_candidates(files / "candidates.jsonl"))
    assert [(r["id"], r["provenance"]["status"]) for r in merged] == [
        ("syn-1", "unreviewed"), ("syn-2", "accepted"), ("syn-3", "unreviewed"), ("syn-4", "unreviewed")]
    assert all(r.get("_leakage") == {"overlap": 0.5} for r in merged[:3])


def test_threads_adding_at_once_all_keep_their_question_and_changelog_line(files: Path) -> None:
    golden = files / "golden.jsonl"
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def add(n: int) -> None:
        start.wait()
        try:
            GoldenFile(golden, judge=f"judge{n}").add_question(f"question number {n}", expected=["git/stash.md"],
                                                               off_topic=False, qid=f"t{n}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert {q.id for q in load_golden(golden)} == {"q1", "q2", *(f"t{n}" for n in range(6))}
    assert sorted(c.question for c in read_changes(golden)) == [f"t{n}" for n in range(6)]
    assert golden.read_text(encoding="utf-8").startswith(HAND) and leftovers(files) == []


def test_two_processes_adding_at_once_both_keep_their_question(files: Path) -> None:
    args = [[sys.executable, "-m", "goldeval", "golden", "add", "--golden", "golden.jsonl", "--question",
             f"process question {n}", "--expected", "git/stash.md", "--id", f"p{n}"] for n in (1, 2)]
    procs = [subprocess.Popen(a, cwd=files, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for a in args]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert {q.id for q in load_golden(files / "golden.jsonl")} >= {"p1", "p2"}
    assert sorted(c.question for c in read_changes(files / "golden.jsonl")) == ["p1", "p2"]


# --- signals in the middle of a write ------------------------------------------------------------------

HOOK = '''\
"""Send SIGNAL to this process at the first rename of a transaction (between a file and its changelog)."""
import os, signal, sys, threading
import goldeval.store.transaction as t
real, fired = os.replace, []
def replace(src, dst):
    if not fired:
        fired.append(dst)
        open(sys.argv[2], "w").close()  # the ready file: the signal is on its way
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        if threading.current_thread() is not threading.main_thread():
            with t._state:  # a server's request thread: go on once the main thread is stopping
                t._state.wait_for(lambda: t._stopping)
    real(src, dst)
t.os.replace = replace
from goldeval.cli import main
sys.exit(main(sys.argv[3:]))
'''


@pytest.mark.parametrize(("signame", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_mid_write_waits_for_the_changelog(files: Path, signame: str, code: int) -> None:
    (files / "hook.py").write_text(HOOK, encoding="utf-8")
    done = subprocess.run([sys.executable, "hook.py", signame, "ready", "golden", "add", "--golden", "golden.jsonl",
                           "--question", "rebase onto main", "--expected", "git/rebase.md"], cwd=files,
                          capture_output=True, text=True, timeout=120)
    assert (files / "ready").exists()  # the signal came mid-transaction
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert "q-001" in {q.id for q in load_golden(files / "golden.jsonl")}  # the question and its line, both
    assert [c.question for c in read_changes(files / "golden.jsonl")] == ["q-001"]
    assert leftovers(files) == []


def test_ctrl_c_while_the_review_page_writes_lets_the_write_finish(files: Path) -> None:
    (files / "hook.py").write_text(HOOK, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "hook.py", "SIGINT", "ready", "review", "candidates.jsonl", "--golden",
                             "golden.jsonl", "--port", "0", "--by", "ana"], cwd=files,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "GOLDEVAL_NO_HISTORY": "1"})
    try:
        assert proc.stdout is not None
        url = re.search(r"http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
        assert url is not None
        port = int(url.group(1))
        token = re.search(r'name="goldeval-token" content="([^"]+)"', _get(port, "/review"))
        assert token is not None
        with contextlib.suppress(OSError, http.client.HTTPException):  # the answer may come after the end
            _post(port, token.group(1), "syn-1", {"action": "accept"})
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (files / "ready").exists() and proc.returncode == 0, err
    assert "Traceback" not in err
    assert read_candidates(files / "candidates.jsonl")[0]["provenance"]["status"] == "accepted"
    assert "syn-1" in {q.id for q in load_golden(files / "golden.jsonl")}
    assert [c.question for c in read_changes(files / "golden.jsonl")] == ["syn-1"] and leftovers(files) == []


# --- helpers -------------------------------------------------------------------------------------------


def _get(port: int, path: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path)
    text = conn.getresponse().read().decode()
    conn.close()
    return text


def _post(port: int, token: str, item: str, body: dict[str, Any], page: str = "review") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", f"/api/{page}/items/{item}", body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json", TOKEN_HEADER: token})
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, text


class serving:  # noqa: N801 - used as `with serving(session) as post`
    """The one server on a free port with `session` as its review page (or, `page="pool"`, its pool page);
    yields `post(item, action) -> (status, body)`."""

    def __init__(self, session: ItemStore, page: str = "review") -> None:
        self.page = page
        self.server = make_server(port=0, **{page: session})

    def __enter__(self) -> Callable[[str, dict[str, Any]], tuple[int, str]]:
        self.thread = start_in_thread(self.server)
        token = self.server.RequestHandlerClass.token  # type: ignore[attr-defined]
        port = self.server.server_address[1]
        return lambda item, body: _post(port, token, item, body, self.page)

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

