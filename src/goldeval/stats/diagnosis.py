"""One cause for every miss, with its evidence, and the counts per retriever.

A miss is an answerable question whose first expected answer is not in the top k (k = the largest
cut-off of the scorecard). Causes are checked in this order and the first that fits is given:

1. `retriever_error`      the retriever failed on the question.
2. `possibly_mislabeled`  several retrievers (at least two, including this one) put the same unlabeled
                          document at rank 1 with a high score (at least that retriever's median top-1
                          score on questions it answered at rank 1): the label may be wrong.
3. `near_duplicate`       the top result's text is nearly the same as an expected passage's (word-bigram
                          Jaccard >= 0.7): deduplicate or diversify (MMR).
4. `lexical_vs_semantic`  a retriever of the other kind (BM25 vs dense) found it in the top k.
5. `spans_chunks`         the question's words appear in the expected document, but spread over several
                          chunks with no chunk holding most of them.
6. `retrieved_deep`       the first expected answer is at rank k+1..N: a reranker would lift it.
7. `never_retrieved`      no expected answer in the top N: chunking or the embedding model.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from goldeval.corpus.model import Passage
from goldeval.scorecard.model import QuestionResult, RetrieverResult, Scorecard

CAUSES: dict[str, tuple[str, str]] = {
    "retriever_error": ("retriever error", "fix the retriever for this question; it raised or returned garbage"),
    "possibly_mislabeled": ("possibly mislabeled", "review the label: the retrievers agree on another document"),
    "near_duplicate": ("near-duplicate outranked", "deduplicate the corpus or diversify the results (MMR)"),
    "lexical_vs_semantic": ("lexical vs semantic", "combine BM25 and dense retrieval (hybrid search)"),
    "spans_chunks": ("answer spans chunks", "use bigger chunks, more overlap, or parent-document retrieval"),
    "retrieved_deep": ("retrieved deep", "add a reranker to lift answers found below the cut-off"),
    "never_retrieved": ("never retrieved", "check the chunking, or try another embedding model"),
}
"""Cause key -> (label, suggestion). The keys are stable JSON values."""

NEAR_DUPLICATE_JACCARD = 0.7
SPAN_MIN_COVERAGE = 0.6
SPAN_MAX_BEST_SHARE = 2 / 3
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "how", "i", "in", "into", "is", "it", "its", "my", "of", "on", "or", "so", "that", "the", "their", "them", "then", "there", "these", "this", "to", "use", "using", "was", "what", "when", "where", "which", "who", "why", "will", "with", "without", "you", "your", "get", "make", "need", "want", "should", "would", "could"]
)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def near_duplicate_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' word bigrams (single words for texts under two words)."""
    sa, sb = _shingles(words(a)), _shingles(words(b))
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def _shingles(ws: list[str]) -> set[tuple[str, ...]]:
    return {tuple(ws[i : i + 2]) for i in range(len(ws) - 1)} if len(ws) > 1 else {tuple(ws)} if ws else set()


def _terms(text: str) -> set[str]:
    return {_stem(w) for w in words(text) if len(w) > 2 and w not in _STOP}


def _stem(w: str) -> str:
    for suffix in ("ing", "es", "s", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def retriever_kind(name: str, kinds: Mapping[str, str] | None = None) -> str | None:
    """`lexical` (bm25), `semantic` (dense:*), or None (hybrid, rerank, a function: neither)."""
    if kinds and name in kinds:
        return kinds[name]
    low = name.lower()
    if low.startswith(("hybrid", "rerank")):
        return None
    if low.startswith("bm25"):
        return "lexical"
    if low.startswith("dense"):
        return "semantic"
    return None


class _Texts:
    """Passage texts by id and each document's passages in order (from passages, else snippets)."""

    def __init__(self, scorecard: Scorecard, passages: Sequence[Passage] | None) -> None:
        self.text: dict[str, str] = {}
        self.doc_of: dict[str, str] = {}
        self.chunks: dict[str, list[str]] = {}
        self.full = passages is not None
        if passages is not None:
            for p in passages:
                self.text[p.id] = p.text
                self.doc_of[p.id] = p.doc_id
                self.chunks.setdefault(p.doc_id, []).append(p.id)
        else:
            for pid, snip in scorecard.snippets.items():
                self.text[pid] = snip.get("text", "")
                self.doc_of[pid] = snip.get("doc", pid)
                self.chunks.setdefault(snip.get("doc", pid), []).append(pid)

    def of_expected(self, expected_id: str) -> list[str]:
        """Passage ids standing for an expected id: itself if it is a passage, else its document's chunks."""
        if expected_id in self.text:
            return [expected_id]
        return self.chunks.get(expected_id, [])


@dataclass
class _Context:
    """What every check needs, built once per `diagnose_scorecard` call."""

    scorecard: Scorecard
    k: int
    texts: _Texts
    high: dict[str, float | None]
    """Retriever -> its "high" top-1 score: the median on questions it answered at rank 1."""
    kinds: Mapping[str, str] | None
    by_question: dict[str, list[tuple[RetrieverResult, QuestionResult]]]
    """Question id -> every retriever's result for it (a linear search per miss would be O(n^2))."""


def diagnose_scorecard(
    scorecard: Scorecard, *, k: int | None = None, passages: Sequence[Passage] | None = None,
    kinds: Mapping[str, str] | None = None,
) -> dict[str, dict[str, int]]:
    """Set `diagnosis` on every miss of every retriever (None on the others); return counts per retriever."""
    by_question: dict[str, list[tuple[RetrieverResult, QuestionResult]]] = {}
    for r in scorecard.retrievers:
        for q in r.questions:
            by_question.setdefault(q.id, []).append((r, q))
    ctx = _Context(
        scorecard=scorecard,
        k=k if k is not None else (max(scorecard.k) if scorecard.k else 10),
        texts=_Texts(scorecard, passages),
        high={r.name: _high_score(r) for r in scorecard.retrievers},
        kinds=kinds,
        by_question=by_question,
    )
    counts: dict[str, dict[str, int]] = {}
    for r in scorecard.retrievers:
        counts[r.name] = dict.fromkeys(CAUSES, 0)
        for q in r.questions:
            q.diagnosis = None
            if q.off_topic or (q.rank is not None and q.rank <= ctx.k and not q.error):
                continue
            cause, evidence = _cause(ctx, r, q)
            label, suggestion = CAUSES[cause]
            q.diagnosis = {"cause": cause, "label": label, "evidence": evidence, "suggestion": suggestion, "k": ctx.k}
            counts[r.name][cause] += 1
    return counts


def _high_score(r: RetrieverResult) -> float | None:
    right = [q.top1_score for q in r.answerable if q.rank == 1 and q.top1_score is not None]
    scores = right or [q.top1_score for q in r.answerable if q.top1_score is not None]
    return statistics.median(scores) if scores else None


def _depth(ctx: _Context, q: QuestionResult) -> int:
    return ctx.scorecard.depth or len(q.top)


def _cause(ctx: _Context, r: RetrieverResult, q: QuestionResult) -> tuple[str, str]:
    if q.error:
        return "retriever_error", q.error
    for check in (_mislabeled, _near_duplicate, _lexical_semantic, _spans_chunks):
        found = check(ctx, r, q)
        if found:
            return found
    if q.rank is not None:
        return "retrieved_deep", f"first expected answer at rank {q.rank} (k = {ctx.k})"
    return "never_retrieved", f"no expected answer in the top {_depth(ctx, q)} results"


def _mislabeled(ctx: _Context, r: RetrieverResult, q: QuestionResult) -> tuple[str, str] | None:
    if not q.top or len(ctx.scorecard.retrievers) < 2:
        return None
    doc = q.top[0].doc
    if doc in q.expected or q.top[0].id in q.expected:
        return None
    agree = []
    for other, oq in ctx.by_question.get(q.id, []):
        threshold = ctx.high.get(other.name)
        if oq.top and oq.top[0].doc == doc and threshold is not None and oq.top[0].score >= threshold:
            agree.append(f"{other.name} ({oq.top[0].score:.3g})")
    if len(agree) < 2 or not any(a.startswith(f"{r.name} (") for a in agree):
        return None
    return "possibly_mislabeled", (f"{', '.join(agree)} all put {doc} first with a high score; "
                                   f"expected {', '.join(q.expected)}")


def _near_duplicate(ctx: _Context, r: RetrieverResult, q: QuestionResult) -> tuple[str, str] | None:
    texts = ctx.texts
    if not q.top or q.top[0].id not in texts.text:
        return None
    top = q.top[0]
    if top.doc in q.expected or top.id in q.expected:
        return None
    best, best_id = 0.0, ""
    for expected in q.expected:
        for pid in texts.of_expected(expected):
            sim = near_duplicate_similarity(texts.text[top.id], texts.text[pid])
            if sim > best:
                best, best_id = sim, pid
    if best < NEAR_DUPLICATE_JACCARD:
        return None
    return "near_duplicate", (f"top result {top.id} ({top.score:.3g}) is {best:.0%} the same text as "
                              f"expected {best_id}")


def _lexical_semantic(ctx: _Context, r: RetrieverResult, q: QuestionResult) -> tuple[str, str] | None:
    kind = retriever_kind(r.name, ctx.kinds)
    if kind is None:
        return None
    for other, oq in ctx.by_question.get(q.id, []):
        other_kind = retriever_kind(other.name, ctx.kinds)
        if other_kind is not None and other_kind != kind and oq.rank is not None and oq.rank <= ctx.k:
            where = f"at rank {q.rank}" if q.rank is not None else f"not in its top {_depth(ctx, q)}"
            return "lexical_vs_semantic", (f"found by {other.name} ({other_kind}) at rank {oq.rank}; "
                                           f"{r.name} ({kind}) has it {where}")
    return None


def _spans_chunks(ctx: _Context, r: RetrieverResult, q: QuestionResult) -> tuple[str, str] | None:
    texts = ctx.texts
    wanted = _terms(q.question)
    if len(wanted) < 2:
        return None
    for expected in q.expected:
        doc = texts.doc_of.get(expected, expected)
        chunk_ids = texts.chunks.get(doc, [])
        if len(chunk_ids) < 2:
            continue
        covered = {cid: wanted & _terms(texts.text[cid]) for cid in chunk_ids}
        union = set().union(*covered.values())
        best_id = max(covered, key=lambda c: len(covered[c]))
        best = covered[best_id]
        if len(union) >= SPAN_MIN_COVERAGE * len(wanted) and len(best) <= SPAN_MAX_BEST_SHARE * len(union):
            spread = "; ".join(f"{cid}: {', '.join(sorted(t))}" for cid, t in covered.items() if t)
            return "spans_chunks", (f"the question's words are in {doc} but spread over its chunks ({spread}); "
                                    f"the best chunk holds {len(best)} of {len(union)}")
    return None
