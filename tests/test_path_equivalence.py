"""One ranking, every path, the same numbers (issue 18).

The same ranking (goldeval's BM25 over a chunked examples/data/corpus with two mirrored pages whose chunks
tie; see path_equivalence_fixtures) reaches goldeval through each entry point a user has, at doc level and
at chunk level, with off-topic, log, incident and synthetic questions in the golden set:

- `bm25`: goldeval's own retriever; `search function`: a `search_fn(question, k)` returning the ranking
  shuffled; `langchain` / `llamaindex`: a real BaseRetriever of each library returning Documents /
  NodeWithScore in a store's order (ties in insertion order); `run:FILE`: a TREC run file, lines shuffled;
- `export+trec`: `goldeval golden export --qrels` and `goldeval trec -c` on a TREC run of the ranking at
  that level; `eval --run+trec`: `goldeval eval --run` exports the run it scored, then the same;
  `eval --qrels --run+trec`: the judgments as `goldeval eval --qrels` scored them, with that run;
- `page`: the results file of `goldeval eval --json`, read by the page in Chromium (what it shows).

Each must give the ranks the stated rules give and the values ranx and pytrec_eval give, per question;
the headline (hand-written, log and incident questions) with the synthetic ones beside it. LlamaIndex's
own RetrieverEvaluator and ranx are held to each other where they share a metric.

A cell that disagrees today because its fix has not landed is marked xfail(strict) with the issue item:
it turns into a failure when the fix lands, and the mark is removed then.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import browser, open_page, serving  # noqa: F401 - fixtures
from path_equivalence_fixtures import (
    CHUNKING,
    DEPTH,
    GOLDEN,
    HEADLINE_SOURCES,
    LEVELS,
    METRICS,
    K,
    Reference,
    by_rule,
    langchain_retriever,
    llamaindex_values,
    make_corpus,
    rank_of_reciprocal,
    ranked_nodes,
    read_page,
    reference,
    scrambled,
    store_order,
    trec_outcome_values,
    trec_run_lines,
)

# ranx's own numba kernels warn about their id casts; nothing of ours. Every entry point, with ranx and
# LlamaIndex's evaluator as references and the page in Chromium: extras bench, adapters and a browser.
pytestmark = [pytest.mark.filterwarnings("ignore:unsafe cast from uint64 to int64"), pytest.mark.bench,
              pytest.mark.adapters, pytest.mark.browser]
TREC_MEASURES = [f"{family}.{','.join(map(str, K))}" for family in ("success", "recall", "P", "ndcg_cut", "map_cut")]
TREC_MEASURES += ["recip_rank", "map", "bpref"]


@dataclass
class Outcome:
    """What one path gave: per-question ranks and values, the headline means and what was beside them."""

    ranks: dict[str, int | None]
    """Answerable question -> rank of its first correct result (None: not within the depth)."""
    expected_ranks: dict[str, dict[str, int | None]] | None
    """Answerable question -> each expected id's rank, where the path tells them (a TREC tool does not)."""
    values: dict[str, dict[str, float]]
    """Question -> metric -> value, for every question the path gave values for."""
    means: dict[str, float]
    beside: dict[str, float] | None = None
    """The synthetic questions' means, reported beside the headline; None where the path shows none."""
    counted: dict[str, list[bool]] | None = None
    tolerance: float = 1e-9
    """Per-question values (the page prints 3 decimals, trec_eval 4: half their last digit)."""
    means_tolerance: float = 1e-9
    shared: int = len(METRICS)
    """How many of each question's values the references can check: hit, recall, precision and nDCG at
    every k, MRR and MAP (and their cut-offs, bpref) where the path gives them; the page prints its own
    at the k on screen."""
    start_k: int | None = None
    """The k a view opens at (the page's k field)."""
    headline_only: bool = False
    """The path holds the headline questions only: TREC files have no place for the synthetic questions
    beside it, so the exports leave them out and say so (`said`)."""
    said: str = ""
    """What the path wrote on stderr."""


class Matrix:
    """The corpus, the ranking, the references, and each path's outcome, computed once when first asked."""

    def __init__(self, tmp: Path) -> None:
        from goldeval.corpus import load_corpus
        from goldeval.corpus.chunking import parse_chunk_spec
        from goldeval.retrievers.bm25 import BM25Retriever
        from path_equivalence_fixtures import read_golden

        self.tmp = tmp
        self.folder = make_corpus(tmp / "corpus")
        self.corpus = load_corpus(self.folder)
        self.passages = [p.id for p in self.corpus.passages(parse_chunk_spec(CHUNKING))]
        questions = read_golden(GOLDEN["doc"])
        search = BM25Retriever(self.corpus.passages(parse_chunk_spec(CHUNKING))).search
        self.bm25 = search({q.id: q.text for q in questions}, top_k=DEPTH).results
        self.refs = {level: reference(level, self.bm25) for level in LEVELS}
        self.cache: dict[tuple[str, str], Outcome] = {}

    def outcome(self, path: str, level: str) -> Outcome:
        if (path, level) not in self.cache:
            self.cache[path, level] = PATHS[path](self, level)
        return self.cache[path, level]

    def evaluate(self, retriever: Any, level: str) -> Outcome:
        import goldeval

        card = goldeval.evaluate(retriever, GOLDEN[level], corpus=self.corpus, chunking=CHUNKING, level=level, k=K,
                                 metrics=METRICS, depth=DEPTH, workspace=self.tmp / "ws", cache=False)
        return card_outcome(card)

    def cli(self, *argv: Any) -> tuple[str, str]:
        """A goldeval command run in this process: (stdout, stderr); it must succeed."""
        from goldeval.cli import main

        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
        assert code == 0, (argv, err.getvalue()[-2000:])
        return out.getvalue(), err.getvalue()

    def trec(self, level: str, run: Path, qrels: Path | None = None, said: str = "") -> Outcome:
        """`goldeval trec -c -q` on `run`, with `qrels` or, without, those `golden export --qrels` writes."""
        if qrels is None:
            qrels = self.tmp / f"{level}-{run.stem}.qrels"
            said += self.cli("golden", "export", GOLDEN[level], "--qrels", qrels, "--force")[1]
        measures = [arg for m in TREC_MEASURES for arg in ("-m", m)]
        values, means = trec_outcome_values(self.cli("trec", "-c", "-q", *measures, qrels, run)[0])
        ranks = {qid: rank_of_reciprocal(v["mrr"]) for qid, v in values.items()}
        return Outcome(ranks, None, values, means, tolerance=5e-5 + 1e-12, means_tolerance=5e-5 + 1e-12,
                       shared=len(K) * 5 + 3, headline_only=True, said=said)

    def eval_args(self, level: str) -> list[Any]:
        return ["eval", "--corpus", self.folder, "--golden", GOLDEN[level], "--chunk", CHUNKING, "--level", level,
                "--k", ",".join(map(str, K)), "--depth", DEPTH, "--retriever", "bm25", "--no-stats", "--quiet",
                "--no-cache", "--workspace", self.tmp / "ws", *(a for m in METRICS for a in ("--metric", m))]


def card_outcome(card: Any) -> Outcome:
    (r,) = card.retrievers
    assert r.n_errors == 0, [q.error for q in r.questions if q.error]
    synthetic = getattr(r, "synthetic", None)  # issue 18 item 3: the synthetic questions' own means
    return Outcome(
        ranks={q.id: q.rank for q in r.questions if not q.off_topic},
        expected_ranks={q.id: dict(q.ranks) for q in r.questions if not q.off_topic},
        values={q.id: {str(m): v for m, v in q.metrics.items()} for q in r.questions if q.metrics},
        means={str(m): v for m, v in r.metrics.items()},
        beside={str(m): v for m, v in synthetic.metrics.items()} if synthetic is not None else None,
    )


def search_function(m: Matrix, level: str) -> Outcome:
    qid_of = {q.text: q.id for q in m.refs[level].questions}

    def search(question: str, k: int) -> list[tuple[str, float]]:
        return scrambled(by_rule(m.bm25[qid_of[question]])[:k], question)

    return m.evaluate({"search": search}, level)


def langchain(m: Matrix, level: str) -> Outcome:
    from goldeval.retrievers.adapters import LangChainRetriever

    retriever = langchain_retriever(m.bm25, m.refs[level].questions)
    # doc level: the document in `source` (found by default); chunk level: the chunk id, named
    return m.evaluate(retriever if level == "doc" else LangChainRetriever(retriever, id_key="chunk_id"), level)


def llamaindex(m: Matrix, level: str) -> Outcome:
    from goldeval.retrievers.adapters import LlamaIndexRetriever

    retriever = ranked_nodes(m.refs[level], order=store_order)  # its own top k is 2: goldeval asks for the depth
    return m.evaluate(retriever if level == "doc" else LlamaIndexRetriever(retriever, id_key="chunk_id"), level)


def run_file(m: Matrix, level: str) -> Outcome:
    path = m.tmp / f"ranking-{level}.trec"
    path.write_text(trec_run_lines(m.bm25, "ranking"), encoding="utf-8")
    return m.evaluate(f"run:{path}", level)


def export_and_trec(m: Matrix, level: str) -> Outcome:
    """The chunk ranking as it is at chunk level; at doc level, as the README's doc-level rule reads it."""
    ref = m.refs[level]
    ranking = m.bm25 if level == "chunk" else {q: list(h.items()) for q, h in ref.run_at_level(answerable_only=False).items()}
    path = m.tmp / f"trec-{level}.run"
    path.write_text(trec_run_lines(ranking, "ranking"), encoding="utf-8")
    return m.trec(level, path)


def eval_run_and_trec(m: Matrix, level: str) -> Outcome:
    """`goldeval eval --run FILE` (the run it scored, to the full depth), with golden export's qrels."""
    path = m.tmp / f"exported-{level}.run"
    return m.trec(level, path, said=m.cli(*m.eval_args(level), "--run", path)[1])


def eval_exports_and_trec(m: Matrix, level: str) -> Outcome:
    """`goldeval eval --qrels Q --run R` (the judgments as scored, at the level) read by trec."""
    run, qrels = m.tmp / f"eval-{level}.run", m.tmp / f"eval-{level}.qrels"
    return m.trec(level, run, qrels, said=m.cli(*m.eval_args(level), "--run", run, "--qrels", qrels)[1])


PATHS: dict[str, Callable[[Matrix, str], Outcome]] = {
    "bm25": lambda m, level: m.evaluate("bm25", level),
    "search function": search_function,
    "langchain": langchain,
    "llamaindex": llamaindex,
    "run:FILE": run_file,
    "export+trec": export_and_trec,
    "eval --run+trec": eval_run_and_trec,
    "eval --qrels --run+trec": eval_exports_and_trec,
}
XFAIL: dict[str, dict[tuple[str, str], str]] = {"ranks": {}, "values": {}, "headline": {}, "counted": {}}
"""(path, level) -> "issue N item M: why", for a cell that disagrees until that fix lands: the cell is marked
xfail(strict), so it fails once the fix lands and the mark must go. Every item of issue 18 has landed."""


def cells(check: str, paths: list[str]) -> list[Any]:
    out = []
    for path in paths:
        for level in LEVELS:
            reason = XFAIL[check].get((path, level))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(path, level, id=f"{path}-{level}", marks=marks))
    return out


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    """goldeval's numpy kernels (GOLDEVAL_NUMBA=0): the matrix holds paths equal, tests/test_bm25_search.py
    holds the numba kernels equal to these, and compiling them into a fresh workspace would cost more
    than every cell here."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOLDEVAL_NUMBA", "0")
        yield Matrix(tmp_path_factory.mktemp("matrix"))


@pytest.fixture(scope="module")
def shown(matrix: Matrix, browser: Any) -> Matrix:  # noqa: F811
    """The page's outcome at both levels, read in one browser page, from `goldeval eval --json` files."""
    from goldeval.report.page import results_payload

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        for level in LEVELS:
            results = matrix.tmp / f"results-{level}.json"
            matrix.cli(*matrix.eval_args(level), "--json", results)
            with serving(results_payload([results])) as url:
                open_page(page, url)
                matrix.cache["page", level] = Outcome(**read_page(page, matrix.refs[level]), tolerance=5e-4 + 1e-12, shared=6)
    finally:
        context.close()
    assert errors == []
    return matrix


def test_the_ranking_holds_what_the_matrix_is_for(matrix: Matrix) -> None:
    """Ties that decide ranks, off-topic questions with and without results, every kind of question."""
    assert all(hits == by_rule(hits) for hits in matrix.bm25.values())  # goldeval's own BM25 ranks by the rule
    chunk = matrix.refs["chunk"]
    decided = [q.id for q in chunk.answerable
               if [p for p, _ in by_rule(matrix.bm25[q.id])][:3] != [p for p, _ in store_order(matrix.bm25[q.id])][:3]]
    assert {"h02", "h06", "s02"} <= set(decided)  # a mirror ties with the expected chunk and ranks first
    assert chunk.ranks["h02"] == 2 and chunk.ranks["h06"] == 2
    assert not matrix.bm25["o02"] and matrix.bm25["o01"] and matrix.bm25["o03"]
    assert {q.source for q in chunk.answerable} == {*HEADLINE_SOURCES, "synthetic"}
    assert chunk.expected_ranks["h16"]["git/git-stash.md#1"] is None  # an answer never retrieved
    doc = matrix.refs["doc"]  # at doc level, later chunks of a found document are not relevant
    assert sum(doc.counted["h08"]) == 1 and sum(chunk.counted["h03"]) == 2


@pytest.mark.parametrize("level", LEVELS)
def test_llamaindex_evaluator_and_ranx_agree(matrix: Matrix, level: str) -> None:
    ref = matrix.refs[level]
    theirs = llamaindex_values(ref, matrix.passages)
    for q in ref.answerable:
        assert theirs[q.id] == pytest.approx({m: ref.values[q.id][m] for m in theirs[q.id]}, abs=1e-12), q.id
    assert len(theirs[ref.answerable[0].id]) == len(K) * (2 if level == "doc" else 4)


@pytest.mark.parametrize(("path", "level"), cells("ranks", list(PATHS)))
def test_same_ranks(matrix: Matrix, path: str, level: str) -> None:
    got, ref = matrix.outcome(path, level), matrix.refs[level]
    assert got.ranks == {q: r for q, r in ref.ranks.items() if q in held(got, ref)}
    if got.expected_ranks is not None:
        assert got.expected_ranks == ref.expected_ranks


@pytest.mark.parametrize(("path", "level"), cells("values", list(PATHS)))
def test_same_values_per_question(matrix: Matrix, path: str, level: str) -> None:
    got, ref = matrix.outcome(path, level), matrix.refs[level]
    assert set(got.values) == held(got, ref)  # off-topic questions get none, every other one all
    for qid, values in got.values.items():
        expected = {m: ref.values[qid][m] for m in values if m in ref.values[qid]}
        assert len(expected) >= got.shared, (qid, sorted(values))
        assert {m: values[m] for m in expected} == pytest.approx(expected, abs=got.tolerance), qid


@pytest.mark.parametrize(("path", "level"), cells("headline", list(PATHS)))
def test_same_headline_with_synthetic_beside(matrix: Matrix, path: str, level: str) -> None:
    got, ref = matrix.outcome(path, level), matrix.refs[level]
    expected = {m: ref.mean(m, HEADLINE_SOURCES) for m in got.means if m in ref.values["h01"]}
    assert len(expected) >= len(K) * 4 + 2
    assert {m: got.means[m] for m in expected} == pytest.approx(expected, abs=got.means_tolerance)
    if got.headline_only:  # the files hold the headline; what they left out is said
        assert "3 synthetic question(s) left out (s01, s02, s03" in got.said
        assert "3 off-topic question(s) left out (o01, o02, o03" in got.said
        return
    assert got.beside, "no synthetic numbers beside the headline"
    beside = {m: ref.mean(m, ("synthetic",)) for m in got.beside}
    assert got.beside == pytest.approx(beside, abs=got.tolerance)


def held(got: Outcome, ref: Reference) -> set[str]:
    """The questions a path must give values for: every answerable one, or the headline's in TREC files."""
    return {q.id for q in ref.answerable if q.source in HEADLINE_SOURCES or not got.headline_only}


@pytest.mark.browser
@pytest.mark.parametrize(("path", "level"), cells("ranks", ["page"]))
def test_the_page_shows_the_same_ranks(shown: Matrix, path: str, level: str) -> None:
    test_same_ranks(shown, path, level)


@pytest.mark.browser
@pytest.mark.parametrize(("path", "level"), cells("values", ["page"]))
def test_the_page_shows_the_same_values(shown: Matrix, path: str, level: str) -> None:
    test_same_values_per_question(shown, path, level)


@pytest.mark.browser
@pytest.mark.parametrize(("path", "level"), cells("headline", ["page"]))
def test_the_page_shows_the_same_headline(shown: Matrix, path: str, level: str) -> None:
    assert shown.cache[path, level].start_k == 5  # the README: hit@5, MRR and nDCG@5 by default
    test_same_headline_with_synthetic_beside(shown, path, level)


@pytest.mark.browser
@pytest.mark.parametrize(("path", "level"), cells("counted", ["page"]))
def test_the_page_marks_what_counted(shown: Matrix, path: str, level: str) -> None:
    got, ref = shown.cache[path, level], shown.refs[level]
    assert got.counted is not None
    assert {q: marks for q, marks in got.counted.items()} == {q: ref.counted[q][: len(m)] for q, m in got.counted.items()}
