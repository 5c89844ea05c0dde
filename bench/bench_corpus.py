"""Chunking speed: goldeval's heading-aware chunker beside semantic-text-splitter's MarkdownSplitter.

Both cut the same 10,000 synthetic Markdown documents (~4,700 characters, headings every few
paragraphs) into chunks of at most 1,500 characters with 200 characters of overlap, in this
process. semantic-text-splitter is a Rust extension; goldeval is pure Python. Prints documents per
second and the ratio; writes bench/results/corpus.json.
"""

from __future__ import annotations

import platform
import random
import time
from collections.abc import Callable

from bench import write_results
from goldeval.corpus import ChunkSpec, Corpus, Document
from goldeval.corpus.chunking import chunk_corpus

N_DOCS = 10_000
MAX_CHARS, OVERLAP = 1500, 200


def synthetic_corpus(n: int, seed: int = 0) -> Corpus:
    rng = random.Random(seed)
    words = ["retrieval", "index", "query", "passage", "chunk", "score", "rank", "judge", "golden", "recall", "precision", "token"]

    def paragraph() -> str:
        sentences = (" ".join(rng.choice(words) for _ in range(rng.randint(6, 18))).capitalize() + "."
                     for _ in range(rng.randint(2, 8)))
        return " ".join(sentences)

    docs = {}
    for i in range(n):
        parts = [f"# Document {i}"]
        for j in range(rng.randint(3, 20)):
            if j % 3 == 0:
                parts.append(f"## Section {j}")
            parts.append(paragraph())
        doc_id = f"doc{i}.md"
        docs[doc_id] = Document(doc_id, "\n\n".join(parts) + "\n", f"Document {i}")
    return Corpus(docs)


def _best_of(runs: int, fn: Callable[[], int]) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(runs):
        started = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - started)
    return best, count


def main() -> None:
    from semantic_text_splitter import MarkdownSplitter

    corpus = synthetic_corpus(N_DOCS)
    texts = [d.text for d in corpus]
    chars = sum(map(len, texts))
    spec = ChunkSpec(MAX_CHARS, OVERLAP)
    splitter = MarkdownSplitter(MAX_CHARS, overlap=OVERLAP)
    ours, n_ours = _best_of(2, lambda: len(chunk_corpus(corpus, spec)))
    peer, n_peer = _best_of(2, lambda: sum(len(splitter.chunks(t)) for t in texts))
    result = {
        "task": f"chunk {N_DOCS} Markdown docs ({chars / 1e6:.1f} M chars) to <= {MAX_CHARS} chars, overlap {OVERLAP}",
        "goldeval": {"seconds": round(ours, 3), "docs_per_s": round(N_DOCS / ours), "chunks": n_ours},
        "semantic-text-splitter": {"seconds": round(peer, 3), "docs_per_s": round(N_DOCS / peer), "chunks": n_peer},
        "speed_ratio_goldeval_over_peer": round(peer / ours, 3),
        "python": platform.python_version(),
    }
    print(f"corpus chunking: {result['task']}")
    print(f"  goldeval                 {ours:7.3f} s  {N_DOCS / ours:9,.0f} docs/s  {n_ours:,} chunks")
    print(f"  semantic-text-splitter  {peer:7.3f} s  {N_DOCS / peer:9,.0f} docs/s  {n_peer:,} chunks")
    print(f"  goldeval speed / peer speed = {peer / ours:.2f}x")
    print(f"wrote {write_results('corpus', result)}")


if __name__ == "__main__":
    main()
