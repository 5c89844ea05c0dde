"""One cause for every miss, with its evidence; hub documents; the questions every retriever missed.

A miss is an answerable question whose first expected answer is not in the top k (k = the headline
cut-off). A miss's cause rests on evidence from the retriever itself and the corpus only, never on
which other retrievers happened to run (issue 13: the same bm25 miss used to change cause when a
dense model joined the run). Causes are checked in this order and the first that fits is given:

1. `retriever_error`      the retriever failed on the question.
2. `hub_document`         the top result is a hub of this retriever: a document it ranks first for many
                          unrelated questions (see `find_hubs`).
3. `near_duplicate`       the top result's text is nearly the same as an expected passage's (word-bigram
                          Jaccard >= 0.7): deduplicate or diversify (MMR).
4. `lexical_vs_semantic`  a lexical retriever (BM25) misses an expected document that shares at most a
                          third of the question's words (a vocabulary gap only meaning can cross); or a
                          semantic one (dense) misses an expected document that holds at least 80% of
                          them (exact terms a lexical retriever would match).
5. `possibly_mislabeled`  the top result is an unjudged document that this retriever scores at least as
                          high as its typical right answer (its median top-1 score on questions it got
                          right at rank 1) and that holds more of the question's words than any
                          expected document (none of which holds more than half of them), while no
                          expected answer comes even near the cut-off (none in the top 3k): the label
                          may be wrong.
6. `spans_chunks`         the question's words appear in the expected document, but spread over several
                          chunks with no chunk holding most of them.
7. `retrieved_deep`       the first expected answer is at rank k+1..N: a reranker would lift it.
8. `cut_short`            no expected answer in the results, and the retriever returned fewer than were
                          asked for, by its own setting (`goldeval.scorecard.depth`): raise its k.
9. `never_retrieved`      no expected answer in the top N: chunking or the embedding model.

"The question's words" are its content stems (`goldeval.words.content_terms`: BM25's tokens and
Snowball stems, stopwords and question words removed), the same words leakage counts and the review and
pool pages highlight; a document holds the words of its own text read the same way.

Checks 4-6 read whole passage texts, so they run only when `compare` is given the passages (the
snippets of a saved results file are cut short and would understate what a document holds).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from goldeval.corpus.model import Passage
from goldeval.ids import doc_part
from goldeval.scorecard.model import QuestionResult, RetrieverResult, Scorecard
from goldeval.words import content_terms, tokens

CAUSES: dict[str, tuple[str, str]] = {
    "retriever_error": ("retriever error", "fix the retriever for this question; it raised or returned garbage"),
    "hub_document": ("hub document outranked", "the document comes first for many unrelated questions: split it, "
                     "trim its boilerplate, or leave it out of the index"),
    "near_duplicate": ("near-duplicate outranked", "deduplicate the corpus or diversify the results (MMR)"),
    "lexical_vs_semantic": ("lexical vs semantic", "combine BM25 and dense retrieval (hybrid search)"),
    "possibly_mislabeled": ("possibly mislabeled", "review the label: the top result may answer the question too"),
    "spans_chunks": ("answer spans chunks", "use bigger chunks, more overlap, or parent-document retrieval"),
    "retrieved_deep": ("retrieved deep", "add a reranker to lift answers found below the cut-off"),
    "cut_short": ("cut short", "raise the retriever's own k (e.g. k=100): it returned fewer results than were "
                  "asked for, so where the answer is was never seen"),
    "never_retrieved": ("never retrieved", "check the chunking, or try another embedding model"),
}
"""Cause key -> (label, suggestion), in the order the causes are checked. The keys are stable JSON values."""

NEAR_DUPLICATE_JACCARD = 0.7
SPAN_MIN_COVERAGE = 0.6
SPAN_MAX_BEST_SHARE = 2 / 3
LEXICAL_GAP = 1 / 3
"""A lexical retriever's miss is a vocabulary gap when the expected document holds at most this share."""
SEMANTIC_EXACT = 0.8
"""A semantic retriever's miss is an exact-terms miss when the expected document holds at least this share."""
MISLABELED_MIN_COVERAGE = 0.6
MISLABELED_MAX_EXPECTED = 0.5
"""...and only when no expected document holds more than half of the question's words."""
MISLABELED_RANK_FACTOR = 3
"""A label is doubted only when no expected answer is in the top 3k: one just below the cut-off is a near miss."""
HUB_MIN_QUESTIONS = 3
HUB_MIN_SHARE = 0.03
"""A hub is first, wrongly, for at least 3 questions and at least 3% of the questions searched: with
questions spread over the corpus, a document is first for about one (on the stdlib demo, BM25 puts
`mailbox` first for 5 of 140 questions about copying files and finding them, none about mailboxes)."""
MEMO_TEXTS = 2048
"""Texts whose word shingles are kept between misses (bounded: a long-lived server diagnoses many scorecards)."""


def near_duplicate_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' word bigrams (single words for texts under two words)."""
    sa, sb = _text_shingles(a), _text_shingles(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def _shingles(ws: list[str]) -> set[tuple[str, ...]]:
    return set(zip(ws, ws[1:], strict=False)) if len(ws) > 1 else {tuple(ws)} if ws else set()


@lru_cache(maxsize=MEMO_TEXTS)
def _text_shingles(text: str) -> frozenset[tuple[str, ...]]:
    return frozenset(_shingles(tokens(text)))


def retriever_kind(r: RetrieverResult, kinds: Mapping[str, str] | None = None) -> str | None:
    """`lexical` (bm25), `semantic` (dense), or None (hybrid, rerank, a function: neither), from the
    retriever's own configuration, else its name; `kinds` overrides both."""
    if kinds and r.name in kinds:
        return kinds[r.name]
    kind = str(r.config.get("kind") or "")
    if kind in ("bm25", "dense"):
        return "lexical" if kind == "bm25" else "semantic"
    if kind:
        return None
    low = r.name.lower()
    return "lexical" if low.startswith("bm25") else "semantic" if low.startswith("dense") else None


class _Texts:
    """Passage texts by id and each document's passages in order (from passages, else snippets)."""

    def __init__(self, scorecard: Scorecard, passages: Sequence[Passage] | None) -> None:
        self.text: dict[str, str] = {}
        self.chunks: dict[str, list[str]] = {}
        self.doc_of: dict[str, str] = {}
        self.full = passages is not None
        pairs = ((p.id, p.doc_id, p.text) for p in passages) if passages is not None else (
            (pid, s.get("doc", pid), s.get("text", "")) for pid, s in scorecard.snippets.items())
        for pid, doc, text in pairs:
            self.text[pid] = text
            self.doc_of[pid] = doc
            self.chunks.setdefault(doc, []).append(pid)

    def of_expected(self, expected_id: str) -> list[str]:
        """Passage ids standing for an expected id: itself if it is a passage, else its document's chunks."""
        if expected_id in self.text:
            return [expected_id]
        return self.chunks.get(expected_id, [])

    def doc(self, pid: str) -> str:
        """The document of an id (a document id stays itself; see goldeval.ids)."""
        return pid if pid in self.chunks else self.doc_of.get(pid, doc_part(pid))

    def document(self, doc_or_passage: str) -> str:
        return "\n".join(self.text[p] for p in self.of_expected(doc_or_passage))


@dataclass
class DiagnosisReport:
    """What `diagnose_scorecard` found besides each miss's own diagnosis."""

    counts: dict[str, dict[str, int]]
    """Retriever -> cause -> misses among the headline questions (`goldeval.golden.model.headline_split`)."""
    beside: dict[str, dict[str, int]] = field(default_factory=dict)
    """Retriever -> cause -> misses among the synthetic questions beside the headline, never pooled into
    `counts` (empty when nothing is beside)."""
    hubs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Retriever -> its hub documents (see `find_hubs`), most questions first."""
    missed_by_all: list[str] = field(default_factory=list)
    """Answerable questions no retriever found in its top k (only with two or more retrievers)."""


@dataclass
class _Context:
    """What every check of one retriever needs, built once per retriever."""

    k: int
    depth: int
    texts: _Texts
    high: float | None
    """The retriever's "high" top-1 score: its median on questions it answered right at rank 1."""
    kind: str | None
    hubs: dict[str, dict[str, Any]]
    cut_short: bool = False
    """The retriever's lists stopped short of the depth by its own setting (`goldeval.scorecard.depth`)."""


def diagnose_scorecard(
    scorecard: Scorecard, *, k: int | None = None, passages: Sequence[Passage] | None = None,
    kinds: Mapping[str, str] | None = None,
) -> DiagnosisReport:
    """Set `diagnosis` on every miss of every retriever (None on the others); count causes, find hubs."""
    k = k if k is not None else scorecard.headline_k
    texts = _Texts(scorecard, passages)
    report = DiagnosisReport(counts={})
    for r in scorecard.retrievers:
        hubs = find_hubs(r)
        report.hubs[r.name] = hubs
        ctx = _Context(k=k, depth=scorecard.depth, texts=texts, high=_high_score(r), kind=retriever_kind(r, kinds),
                       hubs={h["doc"]: h for h in hubs}, cut_short=bool(r.returned and r.returned.cut_short))
        counts = report.counts[r.name] = dict.fromkeys(CAUSES, 0)
        synthetic = {q.id for q in r.synthetic_questions}
        if synthetic:
            report.beside[r.name] = dict.fromkeys(CAUSES, 0)
        for q in r.questions:
            q.diagnosis = None
            if q.off_topic or (q.hit_at(k) and not q.error):
                continue
            cause, evidence = _cause(ctx, q)
            label, suggestion = CAUSES[cause]
            q.diagnosis = {"cause": cause, "label": label, "evidence": evidence, "suggestion": suggestion, "k": k}
            (report.beside[r.name] if q.id in synthetic else counts)[cause] += 1
    report.missed_by_all = missed_by_all(scorecard, k)
    return report


def missed_by_all(scorecard: Scorecard, k: int) -> list[str]:
    """Answerable questions that every retriever misses at k, in golden-set order (two retrievers or more)."""
    if len(scorecard.retrievers) < 2:
        return []
    found = {q.id for r in scorecard.retrievers for q in r.answerable if q.hit_at(k) and not q.error}
    return [q.id for q in scorecard.retrievers[0].answerable if q.id not in found]


def find_hubs(r: RetrieverResult) -> list[dict[str, Any]]:
    """Documents this retriever ranks first, wrongly, for many unrelated questions.

    A document is a hub when it is the top result of at least `HUB_MIN_QUESTIONS` questions and
    `HUB_MIN_SHARE` of those searched where it is not an expected answer, and those questions are
    unrelated: off-topic ones, or answerable ones expecting at least two different documents. Long
    or generic pages (an index, a glossary, a changelog) become hubs; each one costs many misses.
    """
    searched = [q for q in r.questions if not q.error]
    wrong: dict[str, list[QuestionResult]] = {}
    first: dict[str, int] = {}
    for q in searched:
        if not q.top:
            continue
        doc = q.top[0].doc
        first[doc] = first.get(doc, 0) + 1
        if not _is_expected(q, doc, q.top[0].id):
            wrong.setdefault(doc, []).append(q)
    floor = max(HUB_MIN_QUESTIONS, math.ceil(HUB_MIN_SHARE * len(searched)))
    hubs = []
    for doc, qs in wrong.items():
        expected_docs = {doc_part(e) for q in qs for e in q.expected}
        unrelated = any(q.off_topic for q in qs) or len(expected_docs) >= 2
        if len(qs) >= floor and unrelated:
            hubs.append({"doc": doc, "first_for": first[doc], "wrong": len(qs), "searched": len(searched),
                         "questions": [q.id for q in qs]})
    return sorted(hubs, key=lambda h: (-h["wrong"], h["doc"]))


def _is_expected(q: QuestionResult, doc: str, passage: str) -> bool:
    return doc in q.expected or passage in q.expected or any(doc_part(e) == doc for e in q.expected)


def _high_score(r: RetrieverResult) -> float | None:
    right = [q.top1_score for q in r.answerable if q.rank == 1 and q.top1_score is not None]
    return statistics.median(right) if right else None


def _cause(ctx: _Context, q: QuestionResult) -> tuple[str, str]:
    if q.error:
        return "retriever_error", q.error
    checks = (_hub, _near_duplicate, _lexical_semantic, _mislabeled, _spans_chunks) if ctx.texts.full else (
        _hub, _near_duplicate)
    for check in checks:
        found = check(ctx, q)
        if found:
            return found
    if q.rank is not None:
        return "retrieved_deep", f"first expected answer at rank {q.rank} (k = {ctx.k})"
    if ctx.cut_short:
        return "cut_short", f"no expected answer in the {q.returned} results it returned ({ctx.depth} were asked for)"
    return "never_retrieved", f"no expected answer {_not_in(ctx, q)}"


def _not_in(ctx: _Context, q: QuestionResult) -> str:
    """`in the top 100 results`, or `in the 4 results returned` past a list cut short."""
    if ctx.cut_short and q.returned is not None:
        return f"in the {q.returned} results returned"
    return f"in the top {ctx.depth or len(q.top)} results"


def _hub(ctx: _Context, q: QuestionResult) -> tuple[str, str] | None:
    if not q.top or q.top[0].doc not in ctx.hubs:
        return None
    hub = ctx.hubs[q.top[0].doc]
    return "hub_document", (f"{hub['doc']} comes first for {hub['wrong']} of {hub['searched']} questions "
                            f"it does not answer")


def _near_duplicate(ctx: _Context, q: QuestionResult) -> tuple[str, str] | None:
    texts = ctx.texts
    if not q.top or q.top[0].id not in texts.text or _is_expected(q, q.top[0].doc, q.top[0].id):
        return None
    top = q.top[0]
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


def _coverage(ctx: _Context, wanted: frozenset[str], doc: str) -> frozenset[str]:
    return wanted & content_terms(ctx.texts.document(doc))


def _mislabeled(ctx: _Context, q: QuestionResult) -> tuple[str, str] | None:
    top = q.top[0] if q.top else None
    if top is None or ctx.high is None or top.score < ctx.high or _is_expected(q, top.doc, top.id):
        return None
    if q.rank is not None and q.rank <= MISLABELED_RANK_FACTOR * ctx.k:
        return None
    if top.doc in q.nonrelevant or top.id in q.nonrelevant:
        return None  # somebody judged it and said no
    wanted = content_terms(q.question)
    if len(wanted) < 2:
        return None
    held = _coverage(ctx, wanted, top.doc)
    best_expected = max((len(_coverage(ctx, wanted, e)) for e in q.expected), default=0)
    if len(held) < MISLABELED_MIN_COVERAGE * len(wanted) or len(held) <= best_expected:
        return None
    if best_expected > MISLABELED_MAX_EXPECTED * len(wanted):
        return None  # the expected document fits the question too: a ranking problem, not a label one
    return "possibly_mislabeled", (
        f"the top result {top.doc} ({top.score:.3g}, at least this retriever's median score for a right first "
        f"answer, {ctx.high:.3g}) holds {len(held)} of the question's {len(wanted)} words, any expected "
        f"document at most {best_expected}; expected {', '.join(q.expected)}")


def _lexical_semantic(ctx: _Context, q: QuestionResult) -> tuple[str, str] | None:
    wanted = content_terms(q.question)
    if ctx.kind is None or len(wanted) < 2:
        return None
    held = {e: _coverage(ctx, wanted, e) for e in q.expected if ctx.texts.of_expected(e)}
    if not held:
        return None
    best = max(held, key=lambda e: len(held[e]))
    share = len(held[best]) / len(wanted)
    where = f"at rank {q.rank}" if q.rank is not None else f"not {_not_in(ctx, q)}"
    if ctx.kind == "lexical" and share <= LEXICAL_GAP:
        return "lexical_vs_semantic", (
            f"expected {best} shares {len(held[best])} of the question's {len(wanted)} words "
            f"({', '.join(sorted(wanted - held[best]))} missing): a vocabulary gap word matching cannot "
            f"cross; it is {where}")
    if ctx.kind == "semantic" and share >= SEMANTIC_EXACT:
        return "lexical_vs_semantic", (
            f"expected {best} holds {len(held[best])} of the question's {len(wanted)} words "
            f"({', '.join(sorted(held[best]))}), yet the embedding has it {where}: exact terms BM25 would match")
    return None


def _spans_chunks(ctx: _Context, q: QuestionResult) -> tuple[str, str] | None:
    texts = ctx.texts
    wanted = content_terms(q.question)
    if len(wanted) < 2:
        return None
    for expected in q.expected:
        doc = texts.doc(expected)
        chunk_ids = texts.chunks.get(doc, [])
        if len(chunk_ids) < 2:
            continue
        covered = {cid: wanted & content_terms(texts.text[cid]) for cid in chunk_ids}
        union = set().union(*covered.values())
        best_id = max(covered, key=lambda c: len(covered[c]))
        best = covered[best_id]
        if len(union) >= SPAN_MIN_COVERAGE * len(wanted) and len(best) <= SPAN_MAX_BEST_SHARE * len(union):
            spread = "; ".join(f"{cid}: {', '.join(sorted(t))}" for cid, t in covered.items() if t)
            return "spans_chunks", (f"the question's words are in {doc} but spread over its chunks ({spread}); "
                                    f"the best chunk holds {len(best)} of {len(union)}")
    return None
