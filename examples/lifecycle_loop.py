"""Keep a golden set true: freeze it, pool what the retrievers found, judge, fix a label, re-score,
record the runs, and compare across versions on the shared questions. docs/lifecycle.md walks through
the same loop on the command line (and the pool page, where a person judges with the keyboard).

Run: python examples/lifecycle_loop.py
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path

import goldeval
from goldeval import evaluate, load_golden
from goldeval.corpus import load_corpus
from goldeval.golden import freeze
from goldeval.history import History
from goldeval.judging import GoldenFile, build_pool
from goldeval.report import judged_lines

DATA = Path(__file__).resolve().parent / "data"
RETRIEVERS = ["bm25", "dense:minilm", "hybrid:bm25+dense:minilm"] if importlib.util.find_spec("onnxruntime") else ["bm25"]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path, workspace = Path(tmp) / "golden.jsonl", Path(tmp) / ".goldeval"
        shutil.copy(DATA / "golden_example.jsonl", path)
        corpus = load_corpus(DATA / "corpus")
        history = History.of(workspace)

        version, _ = freeze(load_golden(path), by="ana")
        before = evaluate(RETRIEVERS, load_golden(path), corpus=corpus, k=(1, 5), workspace=workspace)
        history.record(before)
        print(f"version {version.version}; judged@5: "
              + ", ".join(f"{r.name} {r.judged[4]:.2f}" for r in before.retrievers))

        # Pool every retriever's top 5 and keep what nobody judged.
        pool = build_pool([before], ["before"], load_golden(path), k=5)
        print(f"{pool.id}: {len(pool.items)} unjudged passages, e.g. {pool.items[0].question_id} / "
              f"{pool.items[0].passage} found by {', '.join(f.system for f in pool.items[0].found_by)}")

        # A person's verdicts (the page does this with the keyboard), and a label fix from a miss.
        golden_file = GoldenFile(path, judge="ana")
        golden_file.judge_passage("h01", "git/git-branch.md", 0, pool=pool.id)
        golden_file.judge_passage("h03", "git/git-reset.md", 1, pool=pool.id, fix=True,
                                  reason="reset and a forced push undo it too (rewriting history)")
        golden_file.not_covered("o01", "the corpus has no page about Word documents",  # confirms the gap:
                                passages=tuple(i.passage for i in pool.items if i.question_id == "o01"))
        golden_file.add_question("how do I undo git add", expected=["git/git-reset.md"], off_topic=False,
                                 incident="INC-2041")
        version, _ = freeze(load_golden(path), by="ana", note="after the first pool")

        after = evaluate(RETRIEVERS, load_golden(path), corpus=corpus, k=(1, 5), workspace=workspace)
        history.record(after)
        print(f"\nre-scored on version {version.version}:")
        for line in judged_lines(after):
            print("  " + line)

        # compared on the questions both versions share unchanged (the rule `goldeval compare` uses)
        report = goldeval.compare_results(before, after, labels=["v1", "v2"], resamples=2000)
        if report.shared is not None:
            print("\n" + report.shared.describe())
        for result in report.comparison.for_metric(report.metric):
            print("  " + result.verdict)
        print(f"\nhistory: {len(history.runs())} runs in {history.path.name}")


if __name__ == "__main__":
    main()
