"""Class 9: bounds (issue 20). Every number a user gives has an upper bound, declared once in `goldeval.limits`
and named in the error with the fix; every file goes through the one reader (a regular file, its size, UTF-8
with the line of a bad byte, nesting); the history's own damage is named; a full or read-only disk is one
error; a retriever's answer is read up to what was asked for, a service's reply up to `REPLY_BYTES` and only
until the question's time is up.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import threading
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hostile_cases import (
    EVAL,
    Outcome,
    assert_clean,
    assert_refused,
    fill_up,
    leftovers,
    run_process,
    snapshot,
    tmpfs,
)

from goldeval.limits import REPLY_BYTES
from hang_guard import HANG_GUARD

SWEEP = 'corpus = "docs"\ngolden = "golden.jsonl"\n'
# (case, the sweep file's bytes, or a kind of file; what the one error line says)
SWEEP_FILES: list[tuple[str, bytes | str, str]] = [
    ("Latin-1", SWEEP.encode() + "# café\nk = [1]\n".encode("latin-1"),
     "sweep.toml:3: sweep file: not valid UTF-8 (byte 0xe9"),
    ("a folder", "folder", "sweep.toml: sweep file is a folder, not a file"),
    ("a FIFO", "fifo", "sweep.toml: sweep file is not a regular file (a FIFO"),
    ("nested 100,000 deep", ("a = " + "[" * 100_000 + "]" * 100_000 + "\n").encode(), "nested too deeply to read"),
    ("nested 70 deep", ("a = " + "[" * 70 + "]" * 70 + "\n").encode(), "nested more than 64 levels deep"),
    ('confidence = "high"', (SWEEP + 'confidence = "high"\n').encode(),
     "sweep.toml: confidence must be a number in [0.5, 1), got high"),
    ("depth = 1000000000", (SWEEP + "depth = 1000000000\n").encode(),
     "sweep.toml: depth must be between 1 and 10,000, got 1000000000"),
    ("k of a billion", (SWEEP + "k = [1, 1000000000]\n").encode(), "k must be between 1 and 10,000"),
    ("seed = -1", (SWEEP + "seed = -1\n").encode(), "seed must be between 0 and 4,294,967,295, got -1"),
]


@pytest.mark.parametrize(("case", "content", "says"), SWEEP_FILES, ids=[row[0] for row in SWEEP_FILES])
def test_a_sweep_file_that_cannot_be_read_is_one_error(inputs: Path, case: str, content: bytes | str,
                                                        says: str) -> None:
    sweep = inputs / "sweep.toml"
    if content == "folder":
        sweep.mkdir()
    elif content == "fifo":
        os.mkfifo(sweep)  # opened, it would wait for a writer forever: a process of its own, with a hang guard
    else:
        sweep.write_bytes(content)  # type: ignore[arg-type]
    before = snapshot(inputs)
    outcome = run_process(["sweep", sweep, "--quiet"], cwd=inputs, timeout=120)
    assert_refused(outcome, says)
    assert snapshot(inputs) == before  # refused before anything was written


# (case, flags, what argparse or the one check says): refused before the corpus is read
NUMBERS: list[tuple[str, list[str], str]] = [
    ("--k a billion", ["--k", "1,1000000000"], "--k must be between 1 and 10,000, got 1000000000"),
    ("--depth a billion", ["--depth", "1000000000"], "depth must be between 1 and 10,000, got 1000000000"),
    ("--metric recall@a billion", ["--metric", "recall@1000000000"],
     "the cut-off of 'recall@1000000000' must be between 1 and 10,000"),
    ("--seed of 40 digits", ["--seed", "9" * 40], "seed must be between 0 and 4,294,967,295"),
    ("hybrid depth of 100,000", ["--retriever", "hybrid:bm25+bm25?depth=100000"], "depth=100000 in 'hybrid:bm25+bm25"
     "?depth=100000' is outside [1, 10000]"),
]


@pytest.mark.parametrize(("case", "flags", "says"), NUMBERS, ids=[row[0] for row in NUMBERS])
def test_a_number_past_its_bound_is_refused_naming_the_bound_and_the_fix(
        inputs: Path, cli: Callable[..., Outcome], case: str, flags: list[str], says: str) -> None:
    outcome = cli(*EVAL, *flags)
    assert_refused(outcome, says)
    assert "e.g." in outcome.err or "results fetched from each part" in outcome.err  # the fix, or what it means
    assert not [p for p in (inputs / ".goldeval").rglob("*") if p.is_file()]  # refused before any index or run


def test_the_api_holds_the_same_bounds(inputs: Path) -> None:
    from goldeval import evaluate
    from goldeval.errors import InputError

    with pytest.raises(InputError, match="k must be between 1 and 10,000, got 1000000000"):
        evaluate(lambda q, k: [], inputs / "golden.jsonl", k=[1, 1_000_000_000])
    with pytest.raises(InputError, match="depth must be between 1 and 10,000, got 20000"):
        evaluate(lambda q, k: [], inputs / "golden.jsonl", depth=20_000)


@pytest.fixture
def history(inputs: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace whose history holds two runs."""
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")
    assert_clean(cli(*EVAL), 0)
    assert_clean(cli(*EVAL), 0)
    return inputs / ".goldeval" / "history.sqlite"


@pytest.mark.parametrize(("ref", "says"), [
    ("@99999999999999999999999", "@99999999999999999999999: the run id must be between 1 and 9,223,372,036,854,775,807"),
    ("@last~99999999999999999999999", "the N of @last~N must be between 0 and 9,223,372,036,854,775,807"),
])
def test_a_history_reference_past_sqlites_integers_is_one_error(history: Path, cli: Callable[..., Outcome],
                                                                ref: str, says: str) -> None:
    before = history.read_bytes()
    assert_refused(cli("compare", ref, "@last", "--resamples", "200"), says, "goldeval history")
    assert history.read_bytes() == before


@pytest.mark.parametrize(("case", "blob", "says"), [
    ("damaged", b"\x78\x9c not zlib any more", "history.sqlite: run 1 cannot be read: Error -3"),
    ("mistyped", "a text value where the blob was", "history.sqlite: run 1 cannot be read: a str, not compressed"),
    ("truncated JSON", zlib.compress(b'{"retrievers": [1, 2'), "run 1: malformed JSON"),
])
def test_a_damaged_stored_run_is_one_error_naming_it(history: Path, cli: Callable[..., Outcome], case: str,
                                                     blob: bytes | str, says: str) -> None:
    with sqlite3.connect(history) as conn:
        conn.execute("UPDATE runs SET scorecard = ? WHERE id = 1", (blob,))
    conn.close()
    outcome = cli("compare", "@1", "@last", "--resamples", "200")
    assert_refused(outcome, says, "run 1 is damaged")
    assert_clean(cli("compare", "@2", "@last", "--resamples", "200"), 0)  # the other runs still read


def test_a_folder_in_place_of_the_history_is_one_error(inputs: Path, cli: Callable[..., Outcome],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (inputs / ".goldeval" / "history.sqlite").mkdir(parents=True)
    assert_refused(cli("history"), "history.sqlite: the run history is a folder or a device, not a database file")
    monkeypatch.delenv("GOLDEVAL_NO_HISTORY")
    outcome = cli(*EVAL, "--json", "results.json")  # the evaluation's own outputs are not lost to it
    assert_clean(outcome, 0, "not recorded in the history", "the run history is a folder")
    assert (inputs / "results.json").exists()


def test_freeze_on_a_read_only_disk_is_one_error_and_changes_nothing(inputs: Path, tmp_path: Path,
                                                                     cli: Callable[..., Outcome]) -> None:
    with tmpfs(tmp_path / "ro", "size=1m") as folder:
        (folder / "golden.jsonl").write_bytes((inputs / "golden.jsonl").read_bytes())
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        before = snapshot(folder)
        outcome = cli("golden", "freeze", folder / "golden.jsonl")
        assert_refused(outcome, ".golden.jsonl.lock: cannot write: the file system is read-only")
        assert snapshot(folder) == before


@pytest.mark.models  # converts minilm to int8 (extra `dense`)
def test_a_full_user_cache_disk_names_the_room_the_model_conversion_needs(inputs: Path, tmp_path: Path,
                                                                          cli: Callable[..., Outcome],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # onnxruntime said INVALID_PROTOBUF ("Protobuf serialization failed") and left the lock behind; the int8
    # copy is made in the user cache, once per machine (issue 19)
    with tmpfs(tmp_path / "cache", "size=2m") as cache:
        monkeypatch.setenv("GOLDEVAL_CACHE", str(cache))
        outcome = cli(*EVAL, "--retriever", "dense:minilm")
        assert_refused(outcome, "cannot make the int8 version of the embedding model 'minilm': the disk has",
                       "set GOLDEVAL_CACHE to a folder on a disk with room")
        left = sorted(p.name for p in cache.rglob("*") if p.is_file() or p.name.startswith(".quantize-"))
        assert left == [] and leftovers(cache) == []
        fill_up(cache)  # a disk that is full from the start: the same one line
        assert_refused(cli(*EVAL, "--retriever", "dense:minilm"), "the disk has 0.0 MB free")


@pytest.mark.adapters  # the endless module is also a LangChain retriever
def test_a_search_function_that_never_stops_yielding_is_read_up_to_k(inputs: Path, cli: Callable[..., Outcome]) -> None:
    (inputs / "endless.py").write_text(
        "import itertools\nfrom langchain_core.documents import Document\nfrom langchain_core.retrievers import "
        "BaseRetriever\n\nDOCS = ['git/stash.md', 'git/branch.md', 'git/rebase.md']\n\n"
        "def search(question, k):\n    yield from DOCS\n    yield from (f'more/{i}.md' for i in itertools.count())\n\n"
        "class Endless(BaseRetriever):\n    def _get_relevant_documents(self, query, *, run_manager):\n"
        "        return (Document(page_content='', metadata={'doc_id': d}) for d in itertools.chain(DOCS, "
        "(f'more/{i}.md' for i in itertools.count())))\n\nendless = Endless()\n", encoding="utf-8")
    for spec in ("endless:search", "endless:endless", "langchain:endless:endless"):
        outcome = cli(*EVAL, "--retriever", spec, "--depth", "20", "--timeout", "60", "--json", "results.json")
        assert_clean(outcome, 0)
        questions = json.loads((inputs / "results.json").read_text())["retrievers"][0]["questions"]
        assert questions[0]["rank"] == 1 and not any(q.get("error") for q in questions)
        assert (inputs / "results.json").stat().st_size < 200_000


class _Hostile(BaseHTTPRequestHandler):
    """/big: a 100 MB JSON answer (one id of 100 MB); /declared: a Content-Length of 100 MB; /forever: a
    reply that never ends (a space every 50 ms is still valid JSON whitespace)."""

    stop = threading.Event()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        try:
            if self.path.startswith("/declared"):
                self.send_header("Content-Length", str(100_000_000))
            self.end_headers()
            if self.path.startswith("/forever"):
                self.wfile.write(b'{"results": [')
                while not self.stop.wait(0.05):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                return
            self.wfile.write(b'{"results": [{"id": "')
            for _ in range(100):
                self.wfile.write(b"x" * 1_000_000)
            self.wfile.write(b'"}]}')
        except OSError:
            pass  # goldeval hung up, as it should

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def service() -> Iterator[str]:
    _Hostile.stop.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    _Hostile.stop.set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("path", "says"), [
    ("big", f"the answer is over the {REPLY_BYTES:,}-byte limit of one reply"),
    ("declared", f"the answer is 100,000,000 bytes, over the {REPLY_BYTES:,}-byte limit of one reply"),
    ("forever", "1 s (raise it with --timeout SECONDS)"),  # the question's timer or the reply's deadline
])
def test_a_service_that_answers_too_much_or_forever_is_cut_off_per_question(
        inputs: Path, service: str, cli: Callable[..., Outcome], path: str, says: str) -> None:
    before = set(threading.enumerate())  # a page server another test module keeps for its session is not ours
    outcome = cli(*EVAL, "--retriever", f"{service}/{path}?q={{question}}#timeout=1", "--json", "results.json")
    assert_clean(outcome, 3, "failed on 6 questions", says)
    assert (inputs / "results.json").stat().st_size < 50_000  # the 100 MB id was written into a 307 MB file
    for thread in set(threading.enumerate()) - before:  # a timed-out request stops reading too (a hang guard, not a timing)
        if thread.name.startswith("goldeval-"):
            thread.join(HANG_GUARD)
            assert not thread.is_alive(), thread.name


def test_the_reliability_page_lists_every_limit() -> None:
    from goldeval import limits

    page = (Path(__file__).resolve().parents[2] / "docs" / "reliability.md").read_text(encoding="utf-8")
    for limit in limits.NUMBERS.values():
        assert f"| {limit.name} | {limit.bounds()} |" in page, limit.name
    for name in ("INPUT_BYTES", "SETTINGS_FILE_BYTES", "LINE_CHARS", "NESTING", "REPLY_BYTES"):
        assert f"| `{name}` | {getattr(limits, name):,} |" in page, name
