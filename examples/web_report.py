"""The scorecard as one self-contained HTML file: evaluate BM25 and your own search function on a tiny
corpus, then write the page that opens from disk, offline.

    python examples/web_report.py [OUT.html]        # default: scorecard.html

The same from the command line: `goldeval eval ... --json results.json` then
`goldeval report results.json --html scorecard.html`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import goldeval
from goldeval import Corpus, Document, GoldenSet, Qrels, Question
from goldeval.report import write_html_report

DOCS = {
    "git/stash.md": "Stash puts your uncommitted changes aside so you can switch branches; git stash pop restores them.",
    "git/branch.md": "Switch branches with git switch, create one with git branch.",
    "python/json.md": "json.loads parses a JSON string into Python objects; json.dumps writes JSON.",
    "python/csv.md": "The csv module reads and writes comma separated values, as spreadsheets export them.",
    "python/time.md": "time.sleep(2) makes the program wait two seconds.",
}
corpus = Corpus({d: Document(d, text, title=d.rsplit("/", 1)[-1]) for d, text in DOCS.items()}, name="example")
golden = GoldenSet(
    [
        Question("q1", "put my uncommitted changes aside before switching branches"),
        Question("q2", "parse a JSON string"),
        Question("q3", "open a spreadsheet saved as comma separated values"),
        Question("q4", "make my script pause for a moment"),
        Question("q5", "what is the capital of France?", "off_topic"),  # the corpus does not cover it
    ],
    Qrels.from_grades({"q1": {"git/stash.md": 1}, "q2": {"python/json.md": 1}, "q3": {"python/csv.md": 1},
                       "q4": {"python/time.md": 1}}),
)


def first_words(question: str, k: int) -> list[str]:
    """Your own retriever: any function (question, k) -> ids or (id, score) pairs."""
    words = set(question.lower().split())
    ranked = sorted(DOCS, key=lambda d: -len(words & set(DOCS[d].lower().split())))
    return ranked[:k]


card = goldeval.evaluate({"bm25": "bm25", "first_words": first_words}, golden, corpus=corpus, k=(1, 3, 5), depth=5)
card = goldeval.compare(card, resamples=1000)  # intervals, paired verdicts, off-topic threshold, miss causes
out = write_html_report([card.to_dict()], Path(sys.argv[1] if len(sys.argv) > 1 else "scorecard.html"),
                        names=["example"], title="goldeval example scorecard")
print(f"wrote {out} ({out.stat().st_size // 1024} KB): open it in a browser, no server needed")
