"""Generate candidate questions, measure their leakage beside hand-written ones, review two of them.

Runs offline: the "model" is a plain function below (a `module:function` backend), which writes a question
from the passage's first words, as a careless generator would. Swap the spec for `openai:MODEL`,
`anthropic:MODEL` or `transformers:FOLDER` to use a real one (docs/synthetic.md).

Run: python examples/synth_offline.py
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from goldeval import ChunkSpec, Workspace
from goldeval.corpus import load_corpus
from goldeval.golden import load_golden
from goldeval.synth import (
    ReplyCache,
    ReviewSession,
    SynthConfig,
    leakage_lines,
    parse_backend,
    plan,
    synthesize,
)

DATA = Path(__file__).resolve().parent / "data"


def write_question(prompt: str) -> str:
    """The backend: `generate(prompt) -> reply`. It reads the passage out of the default prompt."""
    passage = prompt.split('"""')[1]
    body = passage.split("\n\n", 1)[-1]  # skip the heading line
    words = re.findall(r"[A-Za-z][A-Za-z-]{2,}", body)
    return "Question: how do I " + " ".join(w.lower() for w in words[:6]) + "?"


def main() -> None:
    corpus = load_corpus(DATA / "corpus")
    golden = load_golden(DATA / "golden_example.jsonl", corpus=corpus)
    passages = corpus.passages(ChunkSpec(1500, 200))
    config = SynthConfig(parse_backend("__main__:write_question"), n=6, seed=7, min_chars=150)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / ".goldeval"
        the_plan = plan(corpus, passages, golden, config, ReplyCache(Workspace(workspace)))
        print(f"plan: {the_plan.estimate.text()}")
        out = Path(tmp) / "synth.jsonl"
        result = synthesize(corpus, passages, golden, config, out=out, workspace=workspace, the_plan=the_plan)
        print(f"\n{result.new} candidates, e.g.:")
        for record in result.records[:3]:
            leak = record["_leakage"]
            print(f"  {record['id']}  {record['question']!r}\n      from {record['provenance']['source_passage']}: "
                  f"{leak['content_share']:.0%} of its words in the passage, copies {leak['longest_copy']} words, "
                  f"BM25 rank {leak['source_rank']}; other possible answers: "
                  f"{[o['doc'] for o in record['_others'][:3]]}")
        print()
        print("\n".join(leakage_lines(result.report)))

        # What `goldeval review` does behind its page: accept one, reject one.
        review = ReviewSession(out, Path(tmp) / "golden_reviewed.jsonl", reviewer="example")
        review.apply(result.records[0]["id"], {"action": "accept"})
        review.apply(result.records[1]["id"], {"action": "reject"})
        accepted = load_golden(Path(tmp) / "golden_reviewed.jsonl")
        q = accepted.questions[0]
        print(f"\nreviewed golden set: {len(accepted)} question ({q.source}, reviewed by "
              f"{q.provenance.details['reviewed_by']}); the rejected one stays in the candidates file only")


if __name__ == "__main__":
    main()
