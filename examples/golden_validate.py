"""Load a golden set against its corpus, then see how a typo in an expected id is reported.

Run: python examples/golden_validate.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from goldeval import InputErrors
from goldeval.corpus import load_corpus
from goldeval.golden import load_golden

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    corpus = load_corpus(DATA / "corpus")
    golden = load_golden(DATA / "golden_example.jsonl", corpus=corpus)
    print(f"{len(golden)} questions: {len(golden.answerable)} answerable, {len(golden.off_topic)} off-topic")
    print(f"fingerprint {golden.fingerprint()[:16]}")
    for q in golden.questions[:3]:
        print(f"  {q.id} ({q.intent}, {q.source}): {q.question!r} -> {golden.grades(q.id)}")

    # The same set with two mistakes: a typo in an expected id and a repeated question id.
    text = (DATA / "golden_example.jsonl").read_text(encoding="utf-8")
    text = text.replace('"git/git-stash.md"]', '"git/git-stsh.md"]', 1).replace('"id": "h09"', '"id": "h01"')
    with tempfile.TemporaryDirectory() as tmp:
        broken = Path(tmp) / "golden_broken.jsonl"
        broken.write_text(text, encoding="utf-8")
        try:
            load_golden(broken, corpus=corpus)
        except InputErrors as exc:
            print(f"\nEvery problem at once ({len(exc.problems)}):")
            for problem in exc.problems:
                print(f"  line {problem.line}: {problem.reason}")


if __name__ == "__main__":
    main()
