"""Fixtures for the web page tests: a real evaluation on a tiny corpus, a live server, a real Chromium.

Import what a test module needs: `from browser_fixtures import browser, scorecard_dict, ...`.
Nothing here is hand-written results JSON: every scorecard comes from `goldeval.evaluate` run with BM25
and a plain search function over the tiny corpus below (one document is hostile: it carries HTML and
script in its title and text, as does one question).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import hang_guard
from goldeval.corpus.model import Corpus, Document
from goldeval.golden.model import GoldenSet, Qrels, Question
from hang_guard import HANG_GUARD, HANG_GUARD_MS

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]

XSS_TITLE = '<img src=x onerror="window.__xss=1">Evil title'
XSS_TEXT = "<script>window.__xss=2</script> The payload document about stash poisoning <b>bold</b>."
XSS_QUESTION = "<script>window.__xss=3</script> what is stash poisoning <img src=x onerror=window.__xss=4>"

DOCS = {
    "git/stash.md": ("git stash", "Stash saves your uncommitted changes aside in a stack so the working tree is clean; "
                     "git stash pop brings them back later."),
    "git/branch.md": ("git branch and switch", "Switch branches with git switch; create a branch with git branch. "
                      "Switching branches with uncommitted changes may fail; switch branches carefully, switch often."),
    "git/commit.md": ("git commit", "Record changes to the repository with a commit message."),
    "python/json.md": ("json", "Encode and decode JSON: json.dumps turns objects into JSON strings, json.loads parses them."),
    "python/csv.md": ("csv", "Read and write comma separated values files, spreadsheets exported as CSV rows."),
    "python/time.md": ("time", "time.sleep pauses the program for a number of seconds; time.time gives the clock."),
    "python/re.md": ("re", "Regular expressions: match, search and replace text patterns."),
    "python/pathlib.md": ("pathlib", "Object-oriented file system paths: join paths, list a folder, read a file."),
    "python/os.md": ("os", "Operating system interfaces: environment variables, processes, file paths and folders."),
    "evil/payload.md": (XSS_TITLE, XSS_TEXT),
}
# Filler pages that share the words of a vague question, so its answer lands deep in the ranking.
for _i, _topic in enumerate(["sockets", "threads", "logging", "sqlite", "zipfile", "hashlib", "argparse"]):
    DOCS[f"python/{_topic}.md"] = (
        _topic, f"The python module {_topic}: which python module to use for {_topic}, the python module docs, the examples.",
    )

QUESTIONS: list[tuple[str, str, Any, list[str]]] = [
    ("q01", "How do I switch branches without losing my uncommitted changes?", ["git/stash.md"], ["git"]),
    ("q02", "put my uncommitted changes aside", ["git/stash.md"], ["git"]),
    ("q03", "record my changes with a message", ["git/commit.md"], ["git"]),
    ("q04", "parse a JSON string into objects", ["python/json.md"], ["formats"]),
    ("q05", "open a spreadsheet saved as comma separated values", ["python/csv.md"], ["formats"]),
    ("q06", "make my script wait two seconds", ["python/time.md"], ["time"]),
    ("q07", "find text patterns with regex", ["python/re.md"], ["text"]),
    ("q08", "list the files in a folder", {"python/pathlib.md": 2, "python/os.md": 1}, ["files"]),  # graded
    ("q09", "read an environment variable", ["python/os.md"], ["files"]),
    ("q10", "how to search and replace text in a file", ["python/re.md"], ["text", "hard"]),
    ("q15", "which python module gives the clock", ["python/time.md"], ["time", "hard"]),
    ("q16", "let it snooze a bit", ["python/time.md"], ["time", "hard"]),
    ("q11", XSS_QUESTION, ["evil/payload.md"], ["evil"]),
    ("q12", "What is the capital of France?", [], ["offtopic"]),
    ("q13", "best pizza dough recipe with a long rise", [], ["offtopic"]),
    ("q14", "how do I file my taxes and switch accountants", [], ["offtopic"]),
]


def tiny_corpus() -> Corpus:
    return Corpus({d: Document(d, text, title) for d, (title, text) in DOCS.items()}, name="tiny", path="tiny/")


def tiny_golden() -> GoldenSet:
    questions = [Question(qid, text, "answerable" if expected else "off_topic", tuple(tags), line=i + 1)
                 for i, (qid, text, expected, tags) in enumerate(QUESTIONS)]
    grades = {qid: dict(expected) if isinstance(expected, dict) else {e: 1 for e in expected}
              for qid, _, expected, _ in QUESTIONS if expected}
    return GoldenSet(questions, Qrels.from_grades(grades), path="tiny-golden.jsonl")


def overlap_search(question: str, k: int) -> list[tuple[str, float]]:
    """A user's own search function: shared words between question and document (title + text).
    It fails on one question, as user code does, so the page has a retriever error to show."""
    if "snooze" in question:
        raise ConnectionError("search backend unavailable for this query")
    words = set(re.findall(r"[a-z]{3,}", question.lower()))
    scored = []
    for doc_id, (title, text) in DOCS.items():
        doc_words = re.findall(r"[a-z]{3,}", f"{title} {text}".lower())
        score = float(sum(1 for w in doc_words if w in words))
        if score > 0:
            scored.append((doc_id, score))
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored[:k]


def evaluate_tiny(tmp: Path, *, stats: bool, level: str = "doc", retrievers: list[Any] | None = None,
                  k: tuple[int, ...] = (1, 3, 5, 10)) -> dict[str, Any]:
    """A real evaluation: BM25 and `overlap_search` on the tiny corpus, k = 1, 3, 5, 10, depth 20;
    with `stats`, `goldeval.compare` adds intervals, paired tests, off-topic separability and diagnoses.

    At chunk level the documents are cut into chunks of about 60 characters, and BM25 ranks chunks.
    """
    from goldeval.corpus.chunking import ChunkSpec
    from goldeval.evaluation import evaluate
    from goldeval.stats.annotate import compare

    chunking = ChunkSpec(60, 10) if level == "chunk" else None
    if retrievers is None:
        retrievers = ["bm25", overlap_search] if level == "doc" else ["bm25"]
    corpus = tiny_corpus()
    card = evaluate(retrievers, tiny_golden(), corpus=corpus, k=k, depth=20,
                    level=level, chunking=chunking, workspace=tmp / "ws")
    if stats:
        card = compare(card, resamples=400, seed=1, passages=corpus.passages(chunking))
    return card.to_dict()


def bare(card: dict[str, Any]) -> dict[str, Any]:
    """The same results without anything the stats stage adds: no intervals, diagnoses or extras."""
    from goldeval.scorecard import Scorecard

    data = copy.deepcopy(card)
    data["statistics"] = None
    for r in data["retrievers"]:
        r["intervals"] = {}
        for q in r["questions"]:
            q["diagnosis"] = None
    return Scorecard.from_dict(data).to_dict()


_EVALUATED: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="session")
def scorecard_dict(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The tiny evaluation with statistics, run once per session however many modules import this."""
    if "card" not in _EVALUATED:
        _EVALUATED["card"] = evaluate_tiny(tmp_path_factory.mktemp("eval"), stats=True)
    return copy.deepcopy(_EVALUATED["card"])


@pytest.fixture(scope="session")
def results_file(scorecard_dict: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from goldeval.scorecard import Scorecard

    path = tmp_path_factory.mktemp("results") / "results.json"
    Scorecard.from_dict(scorecard_dict).save(path)
    return path


@pytest.fixture(scope="session")
def served_url(results_file: Path) -> Iterator[str]:
    """`goldeval serve results.json` in a thread, on a free port of 127.0.0.1."""
    from goldeval.report.page import results_payload
    from goldeval.web.app import make_server, start_in_thread

    server = make_server(results_payload([results_file]), port=0)
    thread = start_in_thread(server)
    yield server.url
    server.shutdown()
    server.server_close()
    thread.join(timeout=HANG_GUARD)


_CHROMIUM: dict[str, Any] = {"users": 0}
"""One Playwright and one Chromium for the whole session. Each test module that imports `browser` gets
its own copy of this session fixture, and a second `sync_playwright()` while the first runs fails
("Sync API inside the asyncio loop"): so the copies share one, closed when the last is torn down."""


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make chromium` (apt-get install chromium)")
    if not _CHROMIUM["users"]:
        _CHROMIUM["playwright"] = sync_playwright().start()
        _CHROMIUM["browser"] = _CHROMIUM["playwright"].chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    _CHROMIUM["users"] += 1
    try:
        yield _CHROMIUM["browser"]
    finally:
        _CHROMIUM["users"] -= 1
        if not _CHROMIUM["users"]:
            _CHROMIUM.pop("browser").close()
            _CHROMIUM.pop("playwright").stop()


def new_page(browser: Any, **context_options: Any) -> tuple[Any, Any]:
    """A fresh browser context (Playwright's `new_context` options) and a page in it that keeps the
    page's script errors in `page.page_errors`. Every wait and action in it is bounded by HANG_GUARD, not
    Playwright's 30 s: a limit guards against a hang and never decides a pass (issue 17)."""
    context = browser.new_context(**context_options)
    context.set_default_timeout(HANG_GUARD_MS)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.page_errors = errors
    return context, pg


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context, pg = new_page(browser, viewport={"width": 1440, "height": 900})
    yield pg
    context.close()


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


@contextmanager
def serving(payload_or_source: Any, **options: Any) -> Iterator[str]:
    """A scorecard server for a payload (or a `ResultsFiles`) in a thread, with `make_server`'s `options`
    (golden=, workspace=, judge=); yields its address."""
    from goldeval.web.app import make_server, start_in_thread

    srv = make_server(payload_or_source, port=0, **options)
    thread = start_in_thread(srv)
    try:
        yield srv.url
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=HANG_GUARD)


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")


def wait_until(page: Any, expression: str) -> None:
    """Poll a JS expression until it is true (wait_for_function would need 'unsafe-eval', which the page's
    CSP forbids), for at most HANG_GUARD seconds."""
    hang_guard.wait_until(lambda: page.evaluate(expression), f"true in the page: {expression}", poll=0.1)


def set_k(page: Any, k: int) -> None:
    """Type k into the k field, as a reader does for a k without a button."""
    page.fill("#k-input", str(k))
    page.press("#k-input", "Enter")


def shown_metrics(page: Any) -> dict[tuple[int, str], tuple[str, str]]:
    """(run index, metric key) -> (data-value, displayed text) of every cell of the metric table."""
    cells = page.locator(".mcell").evaluate_all(
        "cs => cs.map(c => [Number(c.dataset.run), c.dataset.metric, c.dataset.value, c.querySelector('.val').textContent])")
    return {(run, key): (value, text) for run, key, value, text in cells}


def run_json(card: Mapping[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in card["retrievers"] if r["name"] == name)
