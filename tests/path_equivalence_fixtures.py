"""The one ranking of tests/test_path_equivalence.py, and the outside references it is held to (issue 18).

The ranking is goldeval's BM25 over examples/data/corpus cut into chunks of 200 characters (40 overlapping),
with two pages mirrored (`archive/git/git-stash.md`, `v2/git/git-reset.md`: exact copies, whose chunks tie
with the originals' to the last bit, so trec_eval's tie rule decides ranks; the golden sets judge them not
relevant). The golden sets (tests/data/path_equivalence/) hold hand-written, log, incident and synthetic
questions, graded answers, judged-not-relevant pages and off-topic questions, one of them with a page
judged not relevant.

Nothing here calls goldeval to make an expected number: the reference ranks follow from the ranking by the
rules as the README states them (score descending, ties by id descending; at doc level a chunk counts for
its document, the first chunk of an expected document is the hit and later chunks of a document already
seen are not relevant; at chunk level an expected chunk must itself be retrieved), and the metric values
come from ranx (hit/recall/precision/nDCG/MRR/MAP) and pytrec_eval (bpref), with LlamaIndex's own
RetrieverEvaluator beside them for hit rate, MRR, recall and AP.
"""

from __future__ import annotations

import json
import math
import random
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "data" / "corpus"
DATA = Path(__file__).resolve().parent / "data" / "path_equivalence"
GOLDEN = {"doc": DATA / "golden_docs.jsonl", "chunk": DATA / "golden_chunks.jsonl"}
MIRRORS = {"archive/git/git-stash.md": "git/git-stash.md", "v2/git/git-reset.md": "git/git-reset.md"}
CHUNKING = "200:40"
DEPTH = 20
K = (1, 3, 5, 10)
LEVELS = ("doc", "chunk")
HEADLINE_SOURCES = ("hand", "log", "incident")
"""Who wrote the questions the headline is made of; synthetic ones are reported beside it (issue 18 item 3)."""

METRICS = [f"{name}@{k}" for name in ("hit", "recall", "precision", "ndcg") for k in K]
METRICS += ["mrr", "map", *(f"mrr@{k}" for k in K), *(f"map@{k}" for k in K), "bpref"]
RANX = {m: m.replace("hit@", "hit_rate@") for m in METRICS if m != "bpref"}
"""goldeval's metric name -> ranx's (trec_eval's definitions, linear gains for nDCG)."""
TREC = {"success": "hit", "recall": "recall", "P": "precision", "ndcg_cut": "ndcg", "map_cut": "map"}
"""trec_eval's measure families with a cut-off -> goldeval's names (`success_5` is `hit@5`)."""
TREC_PLAIN = {"recip_rank": "mrr", "map": "map", "bpref": "bpref"}


@dataclass
class Question:
    """One golden question as the file states it (read here with json, not with goldeval)."""

    id: str
    text: str
    source: str
    off_topic: bool
    grades: dict[str, int]
    """Every judged id -> grade (0: judged not relevant)."""

    @property
    def relevant(self) -> dict[str, int]:
        return {d: g for d, g in self.grades.items() if g > 0}


def read_golden(path: Path) -> list[Question]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "_notes" in record:
            continue
        expected = record.get("expected", [])
        grades = dict(expected) if isinstance(expected, dict) else {e: 1 for e in expected}
        grades.update({j["doc"]: j["grade"] for j in record.get("judgments", [])})
        off = record.get("intent") == "off_topic" or not any(g > 0 for g in grades.values())
        out.append(Question(record["id"], record["question"], record.get("source", "hand"), off, grades))
    return out


def make_corpus(folder: Path) -> Path:
    """examples/data/corpus with the two mirrored pages, in `folder`."""
    shutil.copytree(EXAMPLES, folder)
    for mirror, original in MIRRORS.items():
        (folder / mirror).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / original, folder / mirror)
    return folder


def by_rule(hits: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """trec_eval's order, stated here independently: score descending, ties by id descending."""
    return sorted(hits, key=lambda h: (h[1], h[0]), reverse=True)


def store_order(hits: Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    """The order a vector store returns: score descending, ties in insertion (id ascending) order."""
    return sorted(hits, key=lambda h: (-h[1], h[0]))


def scrambled(hits: Sequence[tuple[str, float]], seed: str) -> list[tuple[str, float]]:
    """The same (id, score) pairs in a shuffled order: whoever reads them must rank them by the rule."""
    out = list(hits)
    random.Random(seed).shuffle(out)
    return out


def doc_of(pid: str) -> str:
    return pid.rpartition("#")[0] or pid


def level_keys(hits: Sequence[tuple[str, float]], level: str) -> list[str]:
    """What each position counts for: at doc level the first chunk of a document is that document and a
    later chunk of it stays its own (unjudged, so not relevant) id; at chunk level the chunk id."""
    if level == "chunk":
        return [pid for pid, _ in hits]
    seen: set[str] = set()
    keys = []
    for pid, _ in hits:
        doc = doc_of(pid)
        keys.append(pid if doc in seen else doc)
        seen.add(doc)
    return keys


@dataclass
class Reference:
    """What every path must give at one level: ranks by the stated rules, values from the outside tools."""

    level: str
    questions: list[Question]
    ranking: dict[str, list[tuple[str, float]]]
    """qid -> the ranking, in rank order (`by_rule`)."""
    ranks: dict[str, int | None] = field(default_factory=dict)
    """Answerable qid -> rank of its first relevant result within the depth, None when none came back."""
    expected_ranks: dict[str, dict[str, int | None]] = field(default_factory=dict)
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    """Answerable qid -> metric -> value (ranx; bpref from pytrec_eval)."""
    counted: dict[str, list[bool]] = field(default_factory=dict)
    """qid -> for each of the top max(K) results: whether it counted as relevant."""

    @property
    def answerable(self) -> list[Question]:
        return [q for q in self.questions if not q.off_topic]

    def mean(self, metric: str, sources: Sequence[str] = HEADLINE_SOURCES) -> float:
        chosen = [self.values[q.id][metric] for q in self.answerable if q.source in sources]
        return sum(chosen) / len(chosen)

    def qrels(self) -> dict[str, dict[str, int]]:
        return {q.id: dict(q.grades) for q in self.answerable}

    def run_at_level(self, *, answerable_only: bool = True) -> dict[str, dict[str, float]]:
        """The ranking as unique ids at this level, scored by position (its order is already decided)."""
        questions = self.answerable if answerable_only else self.questions
        return {q.id: {key: float(DEPTH - i) for i, key in enumerate(level_keys(self.ranking[q.id], self.level))}
                for q in questions}


def reference(level: str, ranking: Mapping[str, list[tuple[str, float]]]) -> Reference:
    ref = Reference(level, read_golden(GOLDEN[level]), {q: by_rule(h) for q, h in ranking.items()})
    for q in ref.questions:
        keys = level_keys(ref.ranking[q.id], level)
        ref.counted[q.id] = [q.relevant.get(key, 0) > 0 and not q.off_topic for key in keys[: max(K)]]
        if q.off_topic:
            continue
        where = {e: next((i + 1 for i, key in enumerate(keys) if key == e), None) for e in q.relevant}
        ref.expected_ranks[q.id] = where
        ref.ranks[q.id] = min((r for r in where.values() if r is not None), default=None)
    ref.values = outside_values(ref)
    return ref


def outside_values(ref: Reference) -> dict[str, dict[str, float]]:
    """Per-question values from ranx, and bpref from pytrec_eval (ranx's bpref is NaN with nothing judged
    not relevant, where trec_eval counts every relevant result above no judged-not-relevant one as 1)."""
    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    qrels, run = ref.qrels(), ref.run_at_level()
    ranx_run = Run(run)
    evaluate(Qrels(qrels), ranx_run, list(RANX.values()), return_mean=False)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(run)
    return {qid: {ours: float(ranx_run.scores[theirs][qid]) for ours, theirs in RANX.items()} | {"bpref": trec[qid]["bpref"]}
            for qid in qrels}


def llamaindex_values(ref: Reference, passages: Sequence[str]) -> dict[str, dict[str, float]]:
    """LlamaIndex's own RetrieverEvaluator at each k, its retriever returning the ranking's top k nodes.
    At doc level a document is expected through any of its chunks (LlamaIndex scores node ids)."""
    from llama_index.core.evaluation import RetrieverEvaluator

    metrics = ["hit_rate", "mrr"] + (["recall", "ap"] if ref.level == "chunk" else [])
    ours = {"hit_rate": "hit", "mrr": "mrr", "recall": "recall", "ap": "map"}
    out: dict[str, dict[str, float]] = {q.id: {} for q in ref.answerable}
    for k in K:
        evaluator = RetrieverEvaluator.from_metric_names(metrics, retriever=ranked_nodes(ref, top_k=k, order=by_rule))
        for q in ref.answerable:
            expected = list(q.relevant) if ref.level == "chunk" else [p for p in passages if doc_of(p) in q.relevant]
            got = evaluator.evaluate(q.text, expected_ids=expected)
            out[q.id].update({f"{ours[name]}@{k}": float(v) for name, v in got.metric_vals_dict.items()})
    return out


def langchain_retriever(ranking: Mapping[str, list[tuple[str, float]]], questions: Sequence[Question]) -> Any:
    """A real langchain_core BaseRetriever returning the ranking as Documents, in a store's order, with
    their scores, their document in `source` and the chunk id in `chunk_id` (and as Document.id)."""
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class RankedDocuments(BaseRetriever):
        ranking: dict[str, list[tuple[str, float]]]
        qid_of: dict[str, str]

        def _get_relevant_documents(self, query: str, *, run_manager: Any, k: int = 4) -> list[Document]:
            hits = store_order(self.ranking[self.qid_of[query]])[:k]
            return [Document(page_content=pid, id=pid, metadata={"source": doc_of(pid), "chunk_id": pid, "score": s})
                    for pid, s in hits]

    return RankedDocuments(ranking=dict(ranking), qid_of={q.text: q.id for q in questions})


def ranked_nodes(ref: Reference, *, top_k: int = 2, order: Any = store_order) -> Any:
    """A real llama_index.core BaseRetriever returning the ranking as NodeWithScore (node id: the chunk id;
    `source`: its document), `similarity_top_k` of them, in `order`."""
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

    ranking, qid_of = ref.ranking, {q.text: q.id for q in ref.questions}

    class RankedNodes(BaseRetriever):
        def __init__(self, similarity_top_k: int) -> None:
            super().__init__()
            self.similarity_top_k = similarity_top_k

        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            hits = order(ranking[qid_of[query_bundle.query_str]])[: self.similarity_top_k]
            return [NodeWithScore(node=TextNode(id_=pid, text=pid, metadata={"source": doc_of(pid), "chunk_id": pid}),
                                  score=s) for pid, s in hits]

    return RankedNodes(top_k)


def trec_run_lines(ranking: Mapping[str, list[tuple[str, float]]], tag: str) -> str:
    """A TREC run of the ranking, each topic's lines shuffled and the rank column meaningless (trec_eval
    ignores it and ranks by score)."""
    lines = [f"{qid} Q0 {pid} {i + 1} {score!r} {tag}\n"
             for qid, hits in ranking.items() for i, (pid, score) in enumerate(scrambled(hits, qid))]
    return "".join(lines)


def trec_outcome_values(stdout: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """`goldeval trec -q` output -> (topic -> goldeval metric -> value, the `all` line's means)."""
    per: dict[str, dict[str, float]] = {}
    for line in stdout.splitlines():
        measure, topic, value = line.split()
        family, _, k = measure.rpartition("_")
        name = f"{TREC[family]}@{k}" if family in TREC and k.isdigit() else TREC_PLAIN.get(measure)
        if name is not None:
            per.setdefault(topic, {})[name] = float(value)
    means = per.pop("all", {})
    return per, means


def rank_of_reciprocal(rr: float) -> int | None:
    return round(1 / rr) if rr > 0 else None


def finite(values: Mapping[str, float]) -> bool:
    return all(math.isfinite(v) for v in values.values())


def read_page(page: Any, ref: Reference) -> dict[str, Any]:
    """What the page shows for its one retriever: the k it opens at, each row's rank, the metric table at
    every k of K, the synthetic questions' headline beside it, and for each question at k = max(K) its own
    values, where each expected answer landed and which of its results are marked expected."""
    from browser_fixtures import set_k, shown_metrics

    start_k = int(page.locator("#k-input").input_value())
    beside = page.locator("#headline-synthetic .hl-metric").evaluate_all(
        "ms => ms.map(m => [m.dataset.metric, m.querySelector('strong').textContent])")
    rows = page.locator("#q-body tr").evaluate_all(
        "rs => rs.map(r => [r.dataset.qid, r.querySelector('td.rank').textContent])")
    # a miss reads `>100`, or `not in the 4 returned` past a list cut short (issue 18): no rank either way
    ranks = {qid: int(text) if text.isdigit() else None for qid, text in rows if text != "—"}
    means: dict[str, float] = {}
    for k in K:
        set_k(page, k)
        for (run, key), (value, _) in shown_metrics(page).items():
            if run == 0 and value not in ("", None):
                means[key if key in ("mrr", "map") else f"{key}@{k}"] = float(value)
    set_k(page, max(K))
    values: dict[str, dict[str, float]] = {}
    counted: dict[str, list[bool]] = {}
    expected: dict[str, dict[str, int | None]] = {}
    for q in ref.questions:
        page.evaluate("qid => GE.select(qid)", q.id)
        badges = page.locator("#details .exp-list li").evaluate_all(
            "ls => ls.map(l => [l.querySelector('.mono').textContent, l.querySelector('.rank-badge').textContent])")
        if not q.off_topic:
            expected[q.id] = {e: int(badge.lstrip("#")) if badge.startswith("#") else None for e, badge in badges}
        marks = page.locator("#details .top-list li.hitrow").evaluate_all("ls => ls.map(l => l.classList.contains('ok'))")
        counted[q.id] = list(marks)
        scores = page.locator("#details .d-scores")
        if scores.count():
            pairs = (part.split() for part in scores.inner_text().split(" · "))
            values[q.id] = {name: float(value) for name, value, *_ in pairs if value != "n/a"}  # n/a: past the list
    return {"ranks": ranks, "expected_ranks": expected, "values": values, "start_k": start_k,
            "beside": {name: float(text) for name, text in beside} if beside else None, "means": means, "counted": counted}
