"""BM25, a dense model, hybrid (RRF and normalised fusion) and a weight sweep on a tiny corpus.

    python examples/retrieval_side_by_side.py      # needs goldeval[dense]; embeds into a temp workspace
"""

from __future__ import annotations

import tempfile

from goldeval import BuildContext, Passage, build_retriever
from goldeval.retrievers import HybridRetriever, sweep_fusion

DOCS = {
    "git/stash": "git stash puts uncommitted changes aside so you can switch branches",
    "git/switch": "git switch moves to another branch",
    "git/rebase": "git rebase rewrites commits onto a new base",
    "git/reflog": "git reflog lists where HEAD has been, to recover lost commits",
}
QUESTIONS = {"q1": "how do I set my work aside for a moment", "q2": "I lost a commit, can I get it back"}


def main() -> None:
    passages = [Passage(pid, pid, text) for pid, text in DOCS.items()]
    with tempfile.TemporaryDirectory() as workspace:
        ctx = BuildContext(passages, workspace=workspace)  # one context: hybrid reuses bm25 and dense
        for spec in ["bm25", "dense:minilm", "hybrid:bm25+dense:minilm", "hybrid:bm25+dense:minilm?method=norm&weight=0.3"]:
            run = build_retriever(spec, ctx).search(QUESTIONS, top_k=2)
            print(f"{spec:50s}", {q: [d for d, _ in hits] for q, hits in run.results.items()})
        hybrid = ctx.built["hybrid:bm25+dense:minilm"]
        assert isinstance(hybrid, HybridRetriever)
        # Re-fuse the part runs it kept at several weights: no retriever is queried again.
        for weight, run in sweep_fusion(*hybrid.last_runs, [0.0, 0.5, 1.0], method="norm").items():
            print(f"bm25 weight {weight:.1f}:", {q: [d for d, _ in hits[:2]] for q, hits in run.results.items()})


if __name__ == "__main__":
    main()
