"""The evaluation loop: levels, off-topic handling, error isolation, and the results JSON."""

from __future__ import annotations

import json
import time

import pytest

from golden_factory import make_golden
from goldeval import evaluate
from goldeval.corpus.model import Corpus, Document
from goldeval.golden.model import GoldenSet
from goldeval.metrics.definitions import parse_metric as M
from goldeval.scorecard import Scorecard

RESULTS = {
    "where is a": ["b.md", "a.md", "c.md"],
    "where is c": ["c.md", "a.md"],
    "nothing about this": ["b.md"],
}


def fixed_search(question: str, k: int) -> list[tuple[str, float]]:
    return [(doc, 1.0 - i / 10) for i, doc in enumerate(RESULTS[question])][:k]


def golden_abc() -> GoldenSet:
    return make_golden([
        ("q1", "where is a", {"a.md": 1}),
        ("q2", "where is c", {"c.md": 1}),
        ("off", "nothing about this", {}),
    ])


def test_function_retriever_scores_by_hand_computed_values() -> None:
    card = evaluate(fixed_search, golden_abc(), k=(1, 5))
    (result,) = card.retrievers
    by_id = {q.id: q for q in result.questions}
    assert by_id["q1"].rank == 2 and by_id["q2"].rank == 1
    # q1 misses at 1 and hits at 5; q2 hits at 1: averages over the two answerable questions only
    assert result.metrics[M("hit@1")] == pytest.approx(0.5)
    assert result.metrics[M("hit@5")] == pytest.approx(1.0)
    assert result.metrics[M("mrr")] == pytest.approx((1 / 2 + 1) / 2)
    assert result.metrics[M("precision@5")] == pytest.approx((1 / 5 + 1 / 5) / 2)


def test_off_topic_questions_are_counted_apart_with_their_top1_score() -> None:
    card = evaluate(fixed_search, golden_abc(), k=(1,))
    (result,) = card.retrievers
    assert len(result.answerable) == 2 and len(result.off_topic) == 1
    off = result.off_topic[0]
    assert off.metrics == {} and off.rank is None
    assert off.top1_score == pytest.approx(1.0) and off.top[0].id == "b.md"
    data = card.to_dict()["retrievers"][0]
    assert (data["n_answerable"], data["n_off_topic"]) == (2, 1)


def chunked_corpus() -> Corpus:
    docs = {d: Document(d, text) for d, text in {
        "a.md": "alpha one\n\nalpha two", "b.md": "bravo", "c.md": "charlie"}.items()}
    return Corpus(docs)


CHUNK_RESULTS = ["b.md#0", "a.md#1", "a.md#0", "c.md#0"]


def chunk_search(question: str, k: int) -> list[str]:
    return CHUNK_RESULTS[:k]


def test_doc_level_counts_a_chunk_for_its_document_once() -> None:
    golden = make_golden([("q1", "alpha?", {"a.md": 1})])
    card = evaluate(chunk_search, golden, k=(1, 5), level="doc")
    q = card.retrievers[0].questions[0]
    assert q.rank == 2  # the first chunk from a.md is second
    # the second chunk of a.md (rank 3) must not count again: 1 relevant of 5, not 2
    assert q.metrics[M("precision@5")] == pytest.approx(1 / 5)
    assert q.metrics[M("recall@5")] == pytest.approx(1.0)
    assert q.metrics[M("mrr")] == pytest.approx(0.5)


def test_chunk_level_needs_the_expected_chunk_itself() -> None:
    golden = make_golden([("q1", "alpha one?", {"a.md#0": 1})])
    card = evaluate(chunk_search, golden, k=(1, 5), level="chunk")
    q = card.retrievers[0].questions[0]
    assert q.rank == 3
    assert q.metrics[M("hit@1")] == 0.0 and q.metrics[M("hit@5")] == 1.0


def test_a_retriever_that_raises_on_one_question_loses_only_that_question(capsys: pytest.CaptureFixture[str]) -> None:
    def flaky(question: str, k: int) -> list[str]:
        if question == "where is c":
            raise ConnectionError("search service returned 503")
        return RESULTS[question][:k]

    card = evaluate(flaky, golden_abc(), k=(1, 5))
    by_id = {q.id: q for q in card.retrievers[0].questions}
    assert by_id["q2"].error is not None and "503" in by_id["q2"].error
    assert by_id["q1"].error is None and by_id["q1"].rank == 2
    assert "question q2" in capsys.readouterr().err


def test_garbage_results_are_reported_by_question() -> None:
    def garbage(question: str, k: int) -> object:
        return 42 if question == "where is a" else RESULTS[question]

    card = evaluate(garbage, golden_abc(), k=(1,))
    by_id = {q.id: q for q in card.retrievers[0].questions}
    assert "expected" in (by_id["q1"].error or "")
    assert by_id["q2"].rank == 1


def test_a_search_function_past_its_time_limit_is_cut_off() -> None:
    from goldeval.retrievers.function import FunctionRetriever

    def slow(question: str, k: int) -> list[str]:
        if question == "where is a":
            time.sleep(600)  # far past the limit: waiting it out would be a hang, so no clock is read (issue 17)
        return RESULTS[question][:k]

    card = evaluate(FunctionRetriever(slow, timeout=0.2), golden_abc(), k=(1,))
    by_id = {q.id: q for q in card.retrievers[0].questions}
    assert "timed out" in (by_id["q1"].error or "")
    assert by_id["q2"].rank == 1


def test_bm25_by_spec_finds_the_document_with_the_rare_word() -> None:
    docs = {
        "git/stash.md": Document("git/stash.md", "Stashing: put uncommitted changes aside and restore them later."),
        "git/branch.md": Document("git/branch.md", "Branches let you switch between lines of development."),
        "cooking.md": Document("cooking.md", "Put the pasta in boiling water."),
    }
    golden = make_golden([("h1", "how do I put my uncommitted changes aside", {"git/stash.md": 1})])
    card = evaluate("bm25", golden, corpus=Corpus(docs), k=(1,))
    q = card.retrievers[0].questions[0]
    assert q.rank == 1 and q.top[0].id == "git/stash.md"


def test_results_json_round_trips(tmp_path) -> None:  # type: ignore[no-untyped-def]
    card = evaluate(fixed_search, golden_abc(), k=(1, 5))
    path = tmp_path / "results.json"
    card.save(path)
    data = json.loads(path.read_text())
    assert set(data) >= {"retrievers", "k", "depth", "level", "golden"}
    question = data["retrievers"][0]["questions"][0]
    assert set(question) >= {"id", "off_topic", "rank", "top"}
    assert Scorecard.load(path).to_dict() == card.to_dict()


def test_bm25_options_in_the_spec_reach_the_factory() -> None:
    docs = {"a.md": Document("a.md", "she runs daily"), "b.md": Document("b.md", "run fast")}
    golden = make_golden([("q", "running", {"a.md": 1})])
    card = evaluate(["bm25", "bm25?stem=none"], golden, corpus=Corpus(docs), k=(1, 5))
    stemmed, plain = card.retrievers
    assert plain.name == "bm25?stem=none"
    # stemmed, "running", "runs" and "run" are one term; unstemmed, no document shares a token
    assert sorted(h.id for h in stemmed.questions[0].top) == ["a.md", "b.md"]
    assert plain.questions[0].top == []


class _ClosingProbe:
    """A retriever that records whether evaluate() closed it."""

    instances: list[_ClosingProbe] = []

    def __init__(self, fail: bool) -> None:
        self.name = "probe"
        self.fail = fail
        self.closed = False
        _ClosingProbe.instances.append(self)

    def search(self, queries, *, top_k):  # type: ignore[no-untyped-def]
        from goldeval.run import Run

        if self.fail:
            raise KeyboardInterrupt  # not an Exception: escapes the per-question isolation
        return Run(self.name, {q: [("a.md", 1.0)] for q in queries})

    def close(self) -> None:
        self.closed = True


def _probe_build(rest: str, ctx):  # type: ignore[no-untyped-def]
    return _ClosingProbe(fail=rest == "fail")


@pytest.mark.parametrize("spec", ["probe", "probe:fail"])
def test_evaluate_closes_the_retrievers_it_built_even_when_interrupted(spec: str) -> None:
    from goldeval.retrievers import register

    register("probe", f"{__name__}:_probe_build")
    _ClosingProbe.instances.clear()
    corpus = Corpus({"a.md": Document("a.md", "alpha")})
    golden = make_golden([("q", "alpha", {"a.md": 1})])
    if spec == "probe:fail":
        with pytest.raises(KeyboardInterrupt):
            evaluate(spec, golden, corpus=corpus)
    else:
        evaluate(spec, golden, corpus=corpus)
    assert [p.closed for p in _ClosingProbe.instances] == [True]


def test_regression_recall_at_200_retrieves_200_not_the_default_depth() -> None:
    def deep(question: str, k: int) -> list[str]:
        return [f"d{i}" for i in range(k)]  # d150 is the answer, at rank 151

    golden = make_golden([("q", "x", {"d150": 1})])
    card = evaluate(deep, golden, k=(10,), metrics=["recall@200"])
    q = card.retrievers[0].questions[0]
    assert card.depth == 200 and q.rank == 151 and q.metrics[M("recall@200")] == 1.0


def test_regression_a_function_ignoring_k_is_cut_to_the_depth() -> None:
    def greedy(question: str, k: int) -> list[str]:
        return [f"d{i}" for i in range(300)]  # ignores k

    golden = make_golden([("q", "x", {"d250": 1})])
    card = evaluate(greedy, golden, k=(10,), depth=100)
    q = card.retrievers[0].questions[0]
    assert q.rank is None and q.metrics[M("mrr")] == 0.0  # rank 251 lies below the 100 retrieved


def test_regression_without_a_corpus_ids_with_anchors_stay_distinct() -> None:
    def search(question: str, k: int) -> list[str]:
        return ["https://x/a#install", "https://x/b"]

    golden = make_golden([("q", "x", {"https://x/a#install": 1, "https://x/a#usage": 1})])
    card = evaluate(search, golden, k=(5,))
    q = card.retrievers[0].questions[0]
    assert set(q.expected) == {"https://x/a#install", "https://x/a#usage"}
    assert q.metrics[M("recall@5")] == pytest.approx(0.5)


def test_a_golden_set_of_only_off_topic_questions_has_no_averages_not_zeros() -> None:
    golden = make_golden([("o1", "best pizza in Naples", {})])
    card = evaluate(fixed_search_for_any, golden, k=(1,))
    assert card.retrievers[0].metrics == {}


def fixed_search_for_any(question: str, k: int) -> list[str]:
    return ["a.md"]


def test_an_empty_golden_set_is_refused() -> None:
    from goldeval.errors import InputError

    with pytest.raises(InputError, match="no questions"):
        evaluate(fixed_search_for_any, GoldenSet([]), k=(1,))


def test_the_same_retriever_twice_is_refused() -> None:
    from goldeval.errors import InputError

    corpus = Corpus({"a.md": Document("a.md", "alpha")})
    with pytest.raises(InputError, match="given twice"):
        evaluate(["bm25", "bm25"], make_golden([("q", "alpha", {"a.md": 1})]), corpus=corpus)


def test_bad_input_raised_by_a_retriever_stops_the_run_instead_of_failing_every_question() -> None:
    from goldeval.errors import InputError

    class Misconfigured:
        name = "misconfigured"

        def search(self, queries, *, top_k):  # type: ignore[no-untyped-def]
            raise InputError("scorer returned 1 score for 7 texts")

    with pytest.raises(InputError, match="1 score for 7 texts"):
        evaluate(Misconfigured(), golden_abc(), k=(1,))


def test_rerank_keeps_ids_outside_the_corpus_below_the_reranked_block() -> None:
    from goldeval.corpus.model import Passage
    from goldeval.retrievers.function import FunctionRetriever
    from goldeval.retrievers.rerank import FunctionScorer, RerankRetriever

    passages = [Passage("a.md", "a.md", "alpha"), Passage("b.md", "b.md", "bravo")]
    base = FunctionRetriever(lambda q, k: [("elsewhere/x.md", 3.0), ("a.md", 2.0), ("b.md", 1.0)], name="svc")
    scorer = FunctionScorer(lambda query, texts: [1.0 if t == "bravo" else 0.0 for t in texts])
    run = RerankRetriever(base, scorer, passages, top=10).search({"q": "bravo?"}, top_k=10)
    assert [pid for pid, _ in run.results["q"]] == ["b.md", "a.md", "elsewhere/x.md"]


# --- judgments: judged not relevant is not off-topic ------------------------------------------------


def test_a_trec_topic_judged_all_non_relevant_stays_answerable_and_scores_zero() -> None:
    # regression (issue 8): "no grade > 0" was read as off-topic, so such a topic left the averages
    # and fed the off-topic threshold analysis; intent is explicit, the topic is answerable and missed
    golden = make_golden([
        ("q1", "where is a", {"a.md": 1}),
        ("t7", "where is c", {"c.md": 0, "a.md": 0}),
    ])
    card = evaluate(fixed_search, golden, k=(1, 5))
    (result,) = card.retrievers
    trec = {q.id: q for q in result.questions}["t7"]
    assert trec.off_topic is False and result.off_topic == []
    assert (card.golden["n_answerable"], card.golden["n_off_topic"]) == (2, 0)
    assert trec.expected == {} and sorted(trec.nonrelevant) == ["a.md", "c.md"]
    assert trec.rank is None and set(trec.metrics) == set(card.metrics)
    assert all(value == 0.0 for value in trec.metrics.values())
    # averaged in as the miss it is: q1 is found at rank 2, t7 has nothing to find
    assert result.metrics[M("hit@5")] == pytest.approx(0.5)
    assert result.metrics[M("mrr")] == pytest.approx((1 / 2 + 0) / 2)
    # and it does not feed the off-topic threshold analysis
    from goldeval import compare

    separability = compare(card, resamples=100).statistics.off_topic["retrievers"]["fixed_search"]  # type: ignore[union-attr]
    assert (separability["n_answerable"], separability["n_off_topic"]) == (2, 0)


def test_judged_non_relevant_ids_are_kept_apart_from_unjudged_ones() -> None:
    golden = make_golden([("q1", "where is a", {"a.md": 2, "b.md": 0})])
    card = evaluate(fixed_search, golden, k=(1, 5))
    q = card.retrievers[0].questions[0]
    # b.md (judged not relevant) and c.md (never judged) are both retrieved; only b.md is listed
    assert [h.id for h in q.top] == ["b.md", "a.md", "c.md"]
    assert q.expected == {"a.md": 2} and q.nonrelevant == ["b.md"] and q.ranks == {"a.md": 2}
    assert q.metrics[M("precision@5")] == pytest.approx(1 / 5) and q.metrics[M("mrr")] == pytest.approx(0.5)
    assert card.to_dict()["retrievers"][0]["questions"][0]["nonrelevant"] == ["b.md"]


def test_judged_non_relevant_chunks_name_their_document_at_doc_level() -> None:
    golden = make_golden([("q1", "alpha?", {"a.md#0": 1, "b.md#0": 0})])
    card = evaluate(chunk_search, golden, corpus=chunked_corpus(), chunking="10:0", k=(1, 5), level="doc")
    q = card.retrievers[0].questions[0]
    assert q.expected == {"a.md": 1} and q.nonrelevant == ["b.md"] and q.rank == 2


# --- evaluate scores; compare adds statistics -------------------------------------------------------


def test_evaluate_returns_scores_only_and_compare_returns_an_annotated_copy() -> None:
    import goldeval

    # twelve answerable questions: enough for an interval (fewer get none)
    golden = make_golden([(f"q{i}", ["where is a", "where is c"][i % 2], [{"a.md": 1}, {"c.md": 1}][i % 2])
                          for i in range(12)] + [("off", "nothing about this", {})])
    card = evaluate({"one": fixed_search, "two": fixed_search_for_any}, golden, k=(1, 5))
    assert card.statistics is None
    assert all(r.intervals == {} for r in card.retrievers)
    assert all(q.diagnosis is None for r in card.retrievers for q in r.questions)
    assert card.to_dict()["statistics"] is None
    before = card.to_dict()

    annotated = goldeval.compare(card, seed=4, resamples=200)
    assert card.to_dict() == before  # the input is not mutated
    assert card.statistics is None and card.retrievers[0].intervals == {}
    assert annotated is not card and annotated.statistics is not None
    assert (annotated.statistics.seed, annotated.statistics.resamples) == (4, 200)
    assert annotated.statistics.comparison is not None
    assert annotated.statistics.comparison.systems == ["one", "two"]
    assert set(annotated.retriever("one").intervals) == set(card.metrics)
    # the scores themselves are untouched by the statistics step
    assert [r.metrics for r in annotated.retrievers] == [r.metrics for r in card.retrievers]
    # "two" returns a.md for every question: q2's miss at k = 5 gets a cause
    assert annotated.retriever("two").questions[1].diagnosis is not None


@pytest.mark.parametrize("removed", ["stats", "seed", "resamples"])
def test_evaluate_takes_no_statistics_arguments(removed: str) -> None:
    with pytest.raises(TypeError, match=removed):
        evaluate(fixed_search, golden_abc(), k=(1,), **{removed: 1})


def test_a_list_cut_short_by_the_retriever_leaves_the_cut_offs_past_it_unmeasured() -> None:
    """Issue 18: how many came back is recorded; hit@5 of lists of at most 3 is n/a, by one rule for every path."""
    from goldeval.scorecard.depth import Returned

    corpus = Corpus({d: Document(d, f"text of {d}") for d in ("a.md", "b.md", "c.md", "d.md")})
    card = evaluate({"short": fixed_search, "bm25": "bm25"}, golden_abc(), corpus=corpus, k=(1, 3, 5))
    short, bm25 = card.retrievers
    assert [q.returned for q in short.questions] == [3, 2, 1]
    assert short.returned == Returned(asked=100, min=1, median=2.0, max=3, cut_short=True)
    assert [str(m) for m in short.unmeasurable] == ["hit@5", "recall@5", "precision@5", "ndcg@5"]
    assert short.metrics[M("hit@5")] == short.metrics[M("hit@3")] == 1.0  # kept, and said to repeat hit@3
    assert bm25.returned is not None and not bm25.returned.cut_short and bm25.unmeasurable == []  # its own: complete
    everything = evaluate(lambda q, k: ["a.md", "b.md", "c.md", "d.md"], golden_abc(), corpus=corpus, k=(1, 5))
    assert everything.retrievers[0].returned == Returned(asked=100, min=4, median=4.0, max=4, cut_short=False)
    nothing = evaluate(lambda q, k: [], golden_abc(), k=(1, 5)).retrievers[0]  # broken, not short: 0 everywhere
    assert nothing.returned is not None and not nothing.returned.cut_short and nothing.metrics[M("hit@5")] == 0.0
