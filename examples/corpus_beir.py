"""Read a BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) and evaluate BM25.

    python examples/corpus_beir.py [path/to/beir/dataset] [split]   # default: a tiny folder in a temp dir
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from goldeval import evaluate
from goldeval.corpus import load_corpus
from goldeval.golden import load_beir_golden


def tiny_beir(root: Path) -> Path:
    docs = [("d1", "Stash", "git stash puts uncommitted changes aside"),
            ("d2", "Switch", "git switch moves to another branch"),
            ("d3", "Rebase", "git rebase rewrites commits onto a new base")]
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs))
    queries = [("q1", "how do I set my changes aside"), ("q2", "move my commits onto main")]
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries))
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td3\t1\n")
    return root


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="goldeval-example-") as tmp:
        run(Path(tmp))


def run(tmp: Path) -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else tiny_beir(tmp)
    split = sys.argv[2] if len(sys.argv) > 2 else "test"
    corpus = load_corpus(folder)  # auto-detected: the folder holds corpus.jsonl
    golden = load_beir_golden(folder, split=split)
    print(f"{len(corpus)} documents, {len(golden)} judged questions in split {split!r}")
    card = evaluate("bm25", golden, corpus=corpus, k=(1, 10), workspace=".goldeval")
    for name, value in card.to_dict()["retrievers"][0]["metrics"].items():
        print(f"  {name:<14} {value:.4f}")


if __name__ == "__main__":
    main()
