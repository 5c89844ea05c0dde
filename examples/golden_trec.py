"""Export a golden set to TREC qrels + topics, and import it back.

Run: python examples/golden_trec.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from goldeval.golden import (
    load_golden,
    load_trec_golden,
    write_golden_jsonl,
    write_trec_qrels,
    write_trec_topics,
)

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    golden = load_golden(DATA / "golden_example.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        qrels, topics = Path(tmp) / "golden.qrels", Path(tmp) / "topics.tsv"
        write_trec_qrels(golden, qrels)
        write_trec_topics(golden, topics)
        print(f"{qrels.name}:")
        print("".join(qrels.read_text(encoding="utf-8").splitlines(keepends=True)[:4]), end="")

        back = load_trec_golden(qrels, topics)
        print(f"\nre-imported {len(back)} of {len(golden)} questions")
        for warning in back.warnings:  # off-topic questions have no qrels line, so TREC drops them
            print(f"warning: {warning}")
        same = all(back.grades(q.id) == golden.grades(q.id) for q in golden.answerable)
        print(f"judgments identical after the round trip: {same}")

        out = Path(tmp) / "from_trec.jsonl"
        write_golden_jsonl(back, out)
        print(f"\n{out.name}, first line:\n{out.read_text(encoding='utf-8').splitlines()[1]}")


if __name__ == "__main__":
    main()
