"""A small folder corpus, a hand-written golden set for it, and an offline question generator.

The generator stands in for a model the way a user's own `module:function` backend would: it reads the
passage out of the prompt and writes a question from its first words, so a test knows which passage each
question came from and the questions borrow their passage's words (high leakage, on purpose).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

PAGES = {
    "git/stash.md": "# Stashing\n\nStash saves your uncommitted changes aside in a stack so the working tree is clean. "
    "Later, git stash pop brings them back, and git stash list shows what is stored.\n\n"
    "## Dropping a stash\n\nWhen a stash is no longer needed, git stash drop removes it from the stack; "
    "git stash clear removes every entry at once, which cannot be undone.\n",
    "git/branch.md": "# Branches\n\nSwitch branches with git switch and create one with git branch NAME. A branch is "
    "a movable pointer to a commit, so creating one is cheap and fast even in a large repository.\n",
    "git/commit.md": "# Committing\n\nRecord staged changes in the repository with git commit and a message that says "
    "why. Amend the last commit with git commit --amend when you forgot a file or mistyped the message.\n",
    "python/json.md": "# json\n\nEncode and decode JSON: json.dumps turns Python objects into JSON text and json.loads "
    "parses JSON text back into dictionaries and lists. Pass indent=2 to pretty-print the output.\n",
    "python/csv.md": "# csv\n\nRead and write comma separated values with csv.reader and csv.writer; csv.DictReader "
    "maps every row to a dictionary keyed by the header line, which spreadsheets export first.\n",
    "python/time.md": "# time\n\ntime.sleep pauses the program for a number of seconds, and time.time returns the "
    "seconds since the epoch as a float; time.perf_counter is the clock for measuring durations.\n",
    "python/tiny.md": "# tiny\n\nToo short.\n",
}
HAND = [
    {"id": "h1", "question": "put my half-done work aside for a moment", "expected": ["git/stash.md"]},
    {"id": "h2", "question": "make my script wait two seconds", "expected": ["python/time.md"]},
    {"id": "h3", "question": "what is the capital of France", "expected": [], "intent": "off_topic"},
]


def write_corpus(root: Path) -> Path:
    folder = root / "docs"
    for name, text in PAGES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def write_golden(root: Path) -> Path:
    path = root / "golden.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in HAND), encoding="utf-8")
    return path


def passage_of(prompt: str) -> str:
    """The passage a prompt holds (the default template puts it between triple quotes)."""
    return prompt.split('"""')[1].strip()


def question_for(passage: str) -> str:
    """The question the offline generator writes for a passage: its first five long words."""
    words = re.findall(r"[A-Za-z]{4,}", passage.split("\n", 1)[-1])
    return "how do I " + " ".join(w.lower() for w in words[:5]) + "?"


def generate(prompt: str) -> str:
    """A `module:function` backend: `synth_fixtures:generate`."""
    return "Question: " + question_for(passage_of(prompt))
