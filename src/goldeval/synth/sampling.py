"""Which passages get a question: drawn with a seed, balanced across groups and documents.

1. Passages shorter than `min_chars` are skipped (a heading alone, a one-line stub: a question about
   them tests nothing), and so are documents in `exclude_docs` (for example those a hand-written
   question already covers).
2. Documents are grouped: by their first tag when the corpus gives documents tags, else by their top
   folder (`git/stash.md` is in `git`), else all in one group.
3. Draws go round the groups, within a group round its documents, within a document through its passages,
   each order shuffled with `random.Random(seed)`: thirty questions from a corpus of ten folders are
   three a folder, not thirty from the largest one, and the same seed draws the same passages.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from goldeval.corpus.model import Corpus, Passage

MIN_CHARS = 200


@dataclass(frozen=True)
class Sample:
    """The drawn passages and what was left out, for the plan the CLI prints."""

    passages: list[Passage]
    total: int
    too_short: int
    excluded: int
    """Passages of excluded (covered) documents."""
    groups: dict[str, int] = field(default_factory=dict)
    """Drawn passages per group."""


def group_of(corpus: Corpus | None, doc_id: str) -> str:
    """A document's group: its first tag if it has tags, else its top folder, else ``""``."""
    doc = corpus.documents.get(doc_id) if corpus is not None else None
    tags = getattr(doc, "tags", ()) if doc is not None else ()
    if tags:
        return str(tags[0])
    folder, sep, _ = doc_id.partition("/")
    return folder if sep else ""


def sample_passages(passages: Sequence[Passage], n: int, *, seed: int = 0, min_chars: int = MIN_CHARS,
                    exclude_docs: Collection[str] = (), corpus: Corpus | None = None) -> Sample:
    """Draw up to `n` passages (fewer when fewer are eligible), balanced as the module says."""
    rng = random.Random(seed)
    tree: dict[str, dict[str, list[Passage]]] = defaultdict(lambda: defaultdict(list))
    too_short = excluded = 0
    for p in passages:
        if p.doc_id in exclude_docs:
            excluded += 1
        elif len(p.text.strip()) < min_chars:
            too_short += 1
        else:
            tree[group_of(corpus, p.doc_id)][p.doc_id].append(p)
    drawn = _round_robin(tree, n, rng)
    counts: dict[str, int] = defaultdict(int)
    for p in drawn:
        counts[group_of(corpus, p.doc_id)] += 1
    return Sample(drawn, len(passages), too_short, excluded, dict(counts))


def _round_robin(tree: Mapping[str, Mapping[str, list[Passage]]], n: int, rng: random.Random) -> list[Passage]:
    groups: list[list[list[Passage]]] = []
    for name in sorted(tree):
        docs = [list(tree[name][d]) for d in sorted(tree[name])]
        for doc in docs:
            rng.shuffle(doc)
        rng.shuffle(docs)
        groups.append(docs)
    rng.shuffle(groups)
    drawn: list[Passage] = []
    turn = [0] * len(groups)  # which document of each group is next
    while len(drawn) < n and any(any(doc for doc in g) for g in groups):
        for gi, docs in enumerate(groups):
            if len(drawn) >= n:
                break
            for _ in range(len(docs)):
                doc = docs[turn[gi] % len(docs)]
                turn[gi] += 1
                if doc:
                    drawn.append(doc.pop())
                    break
    return drawn
