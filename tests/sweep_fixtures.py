"""A small corpus and golden set for the sweep tests, real models only (wordllama, minilm-l3).

Documents are long enough that chunking at 120:30 splits most of them, so two chunkings give different
passages, and one (asyncio) is longer than minilm-l3's 128-token window, so dense retrieval splits it into
windows; questions use words that BM25 and the embedding models rank differently, so fusion weights
move the scores. One question is off-topic. Import as `from sweep_fixtures import ...`.
"""

from __future__ import annotations

import json
from pathlib import Path

from goldeval.corpus.model import Corpus, Document
from goldeval.golden.model import GoldenSet, Judgment, Qrels, Question

DOCS = {
    "git/stash.md": ("git stash", "Stash saves uncommitted changes aside in a stack so the working tree is clean. "
                     "Later, git stash pop brings the changes back. Use it before switching branches."),
    "git/branch.md": ("git branch", "Create a branch with git branch NAME and move to it with git switch. Branches "
                      "are cheap pointers to commits; delete merged branches with git branch -d."),
    "git/commit.md": ("git commit", "A commit records a snapshot of the staged changes with a message. Write the "
                      "message in the imperative mood; amend the last commit with --amend."),
    "git/rebase.md": ("git rebase", "Rebase replays your commits on top of another branch, giving a linear history. "
                      "Never rebase commits that others already pulled."),
    "python/json.md": ("json", "Encode and decode JSON. json.dumps turns Python objects into a JSON string and "
                       "json.loads parses a string back into dictionaries and lists."),
    "python/csv.md": ("csv", "Read and write comma separated values. csv.reader yields rows of a spreadsheet exported "
                      "as CSV; csv.DictWriter writes dictionaries as rows."),
    "python/time.md": ("time", "time.sleep pauses the program for a number of seconds. time.time returns the clock in "
                       "seconds since the epoch; time.monotonic never goes backwards."),
    "python/re.md": ("re", "Regular expressions search, match and replace text patterns. re.sub replaces every match; "
                     "re.findall returns all matches as a list."),
    "python/pathlib.md": ("pathlib", "Object-oriented file system paths. Path.iterdir lists the files of a folder, "
                          "Path.read_text reads a file, and the slash operator joins paths."),
    "python/os.md": ("os", "Operating system interfaces: os.environ holds the environment variables, os.getpid the "
                     "process id, os.listdir the names in a folder."),
    "python/sqlite3.md": ("sqlite3", "An embedded SQL database in a single file. Connect with sqlite3.connect, run "
                          "statements with execute, and commit the transaction."),
    "python/asyncio.md": ("asyncio", "asyncio runs coroutines on an event loop. " + " ".join(
        f"Section {i}: an awaitable is scheduled with create_task, gathered with gather, cancelled with cancel, "
        "and timed out with wait_for; blocking calls belong in a thread through to_thread." for i in range(6))
        + " Queues pass work between tasks."),
    "python/logging.md": ("logging", "Log messages at levels debug, info, warning and error. Configure handlers once "
                          "in the application, never on import of a library."),
}

QUESTIONS: list[tuple[str, str, list[str]]] = [
    ("q01", "how do I put my uncommitted work aside before switching branches", ["git/stash.md"]),
    ("q02", "make a new branch and move to it", ["git/branch.md"]),
    ("q03", "fix the message of my last commit", ["git/commit.md"]),
    ("q04", "linear history by replaying commits", ["git/rebase.md"]),
    ("q05", "turn a python dictionary into a JSON string", ["python/json.md"]),
    ("q06", "open a spreadsheet saved as comma separated values", ["python/csv.md"]),
    ("q07", "make my script wait two seconds", ["python/time.md"]),
    ("q08", "replace every match of a pattern in text", ["python/re.md"]),
    ("q09", "list the files in a folder", ["python/pathlib.md", "python/os.md"]),
    ("q10", "read an environment variable", ["python/os.md"]),
    ("q11", "store rows in a database file", ["python/sqlite3.md"]),
    ("q12", "where should a library configure its log handlers", ["python/logging.md"]),
    ("q13", "a clock that never goes backwards", ["python/time.md"]),
    ("q15", "pass work between coroutines with a queue", ["python/asyncio.md"]),
    ("q14", "best pizza dough recipe with a long rise", []),
]


def tiny_corpus() -> Corpus:
    return Corpus({d: Document(d, text, title) for d, (title, text) in DOCS.items()}, name="sweep-tiny",
                  path="sweep-tiny.jsonl")


def tiny_golden() -> GoldenSet:
    questions = [Question(qid, text, "answerable" if expected else "off_topic", line=i + 1)
                 for i, (qid, text, expected) in enumerate(QUESTIONS)]
    judgments = [Judgment(qid, doc, 1) for qid, _, expected in QUESTIONS for doc in expected]
    return GoldenSet(questions, qrels=Qrels(judgments), path="sweep-tiny-golden.jsonl")


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """The corpus as JSONL and the golden set as goldeval JSONL, for the command line."""
    from goldeval.golden.io import write_golden_jsonl

    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "title": t, "text": x}) + "\n" for d, (t, x) in DOCS.items()),
                      encoding="utf-8")
    golden = folder / "golden.jsonl"
    write_golden_jsonl(tiny_golden(), golden)
    return corpus, golden
