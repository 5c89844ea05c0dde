"""The rerank score cache (issue 19): a reranker's scores kept by (query, passage) pair, a chunk of questions at
a time, read back bit for bit; a cross-encoder re-run predicts nothing; a function or a bi-encoder keeps none."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.retrievers.rerank import FunctionScorer, RerankRetriever
from goldeval.store.cache import ScoreCache, read_entry
from goldeval.store.workspace import Workspace
from test_rerank import PASSAGES, TEXTS, _tiny_cross_encoder


class CountingScorer:
    """Scores that float32 cannot hold (so a rounding on the way to disk shows), and every pair it was asked."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, list[str]]]] = []

    def __call__(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        self.calls.append([(q, list(texts)) for q, texts in items])
        return [[_score(q, t) for t in texts] for q, texts in items]

    @property
    def pairs(self) -> int:
        return sum(len(texts) for call in self.calls for _, texts in call)


def _score(query: str, text: str) -> float:
    return len(query) / (len(text) + 3) + 1e-13 * len(text)  # not a float32: its low bits must survive


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


ITEMS = [("bake bread", ["flour and water", "a piano", "an oven"]), ("piano keys", ["a piano", "an oven"]),
         ("nothing", [])]


def test_a_second_run_scores_nothing_and_reads_every_score_bit_for_bit(tmp_path: Path) -> None:
    scorer = CountingScorer()
    first = ScoreCache(Workspace(tmp_path), "reranker-a").get_or_score(ITEMS, scorer, chunk=1)
    assert scorer.pairs == 5 and len(scorer.calls) == 2  # chunk=1: one call (and one entry) a question with pairs
    cache = ScoreCache(Workspace(tmp_path), "reranker-a")
    again = cache.get_or_score(ITEMS, scorer, chunk=1)
    assert scorer.pairs == 5 and cache.stats.hits == 5 and cache.stats.computed == 0
    assert [[_bits(s) for s in row] for row in again] == [[_bits(s) for s in row] for row in first]
    assert [[_bits(s) for s in row] for row in again] == [[_bits(_score(q, t)) for t in texts] for q, texts in ITEMS]
    assert len(cache.entries()) == 2
    hashes, rows = read_entry(cache.entries()[0], "<f8")  # type: ignore[misc]
    assert rows.dtype == np.dtype("<f8") and rows.shape == (len(hashes), 1)


def test_only_the_pairs_not_scored_before_are_sent_each_once(tmp_path: Path) -> None:
    scorer = CountingScorer()
    ScoreCache(Workspace(tmp_path), "r").get_or_score([("bake bread", ["an oven"])], scorer, chunk=4)
    scores = ScoreCache(Workspace(tmp_path), "r").get_or_score(
        [("bake bread", ["an oven", "a piano"]), ("bake bread", ["a piano", "flour"])], scorer, chunk=4)
    # the cached pair is not asked again, and the pair twice in this run is asked once
    assert scorer.calls[1] == [("bake bread", ["a piano"]), ("bake bread", ["flour"])]
    assert scores == [[_score("bake bread", "an oven"), _score("bake bread", "a piano")],
                      [_score("bake bread", "a piano"), _score("bake bread", "flour")]]


def test_the_query_and_the_passage_are_both_in_the_key_and_two_rerankers_never_share(tmp_path: Path) -> None:
    scorer = CountingScorer()
    ws = Workspace(tmp_path)
    ScoreCache(ws, "r").get_or_score([("ab", ["c"])], scorer, chunk=8)
    ScoreCache(ws, "r").get_or_score([("a", ["bc"]), ("c", ["ab"])], scorer, chunk=8)  # same characters, other pairs
    assert scorer.pairs == 3
    other = ScoreCache(ws, "r2", slug="r")
    assert other.folder != ScoreCache(ws, "r", slug="r").folder
    other.get_or_score([("ab", ["c"])], scorer, chunk=8)
    assert scorer.pairs == 4


def test_a_score_that_is_not_finite_is_handed_on_and_never_kept(tmp_path: Path) -> None:
    def flaky(items: list[tuple[str, list[str]]]) -> list[list[float]]:
        return [[float("nan") if t == "bad" else 1.0 for t in texts] for _, texts in items]

    cache = ScoreCache(Workspace(tmp_path), "r")
    scores = cache.get_or_score([("q", ["good", "bad"])], flaky, chunk=8)
    assert scores[0][0] == 1.0 and np.isnan(scores[0][1])
    scorer = CountingScorer()
    ScoreCache(Workspace(tmp_path), "r").get_or_score([("q", ["good", "bad"])], scorer, chunk=8)
    assert scorer.calls == [[("q", ["bad"])]]  # asked again next time


def test_a_damaged_entry_is_said_and_its_pairs_scored_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scorer = CountingScorer()
    cache = ScoreCache(Workspace(tmp_path), "r")
    cache.get_or_score(ITEMS, scorer, chunk=8)
    entry = cache.entries()[0]
    data = bytearray(entry.read_bytes())
    data[-3] ^= 0x01  # one flipped bit in a score
    entry.write_bytes(bytes(data))
    again = ScoreCache(Workspace(tmp_path), "r").get_or_score(ITEMS, scorer, chunk=8)
    assert "rerank score cache entry" in capsys.readouterr().err and scorer.pairs == 10
    assert again == [[_score(q, t) for t in texts] for q, texts in ITEMS]


def test_a_wrong_number_of_scores_is_an_error_not_a_cached_row(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="1 scores for 3 texts"):
        ScoreCache(Workspace(tmp_path), "r").get_or_score(ITEMS[:1], lambda items: [[0.5]], chunk=8)
    assert ScoreCache(Workspace(tmp_path), "r").entries() == []


@pytest.mark.models
def test_a_cross_encoder_rerun_predicts_nothing_and_gives_the_same_bits(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from sentence_transformers import CrossEncoder

    folder = _tiny_cross_encoder(tmp_path / "tiny-ce")
    predicted: list[int] = []
    predict = CrossEncoder.predict

    def counted(self, pairs, *args, **kwargs):  # type: ignore[no-untyped-def]
        predicted.append(len(pairs))
        return predict(self, pairs, *args, **kwargs)

    monkeypatch.setattr(CrossEncoder, "predict", counted)
    queries = {"q1": "slowly bake bread, flat plate piano", "q2": "a piano in the oven"}
    spec = f"rerank:bm25>ce:{folder}?top=2"
    first = build_retriever(spec, BuildContext(PASSAGES, workspace=tmp_path / "ws")).search(queries, top_k=2)
    scored = sum(predicted)
    assert scored > 0
    rebuilt = build_retriever(spec, BuildContext(PASSAGES, workspace=tmp_path / "ws"))
    again = rebuilt.search(queries, top_k=2)
    assert sum(predicted) == scored  # every pair read from the score cache
    assert {q: [(d, _bits(s)) for d, s in hits] for q, hits in again.results.items()} == \
        {q: [(d, _bits(s)) for d, s in hits] for q, hits in first.results.items()}
    elsewhere = build_retriever(spec, BuildContext(PASSAGES, workspace=tmp_path / "fresh")).search(queries, top_k=2)
    assert elsewhere.results == first.results  # the same scores computed afresh in another workspace
    ctx = BuildContext(PASSAGES, workspace=tmp_path / "ws")
    scored = sum(predicted)
    build_retriever(f"rerank:bm25>ce:{folder}?top=4", ctx).search(queries, top_k=4)
    found = [len(hits) for hits in ctx.built["bm25"].search(queries, top_k=4).results.values()]
    new = sum(n - min(n, 2) for n in found)
    assert new > 0 and sum(predicted) - scored == new  # top=4: only each question's 3rd and 4th passages are new
    direct = CrossEncoder(str(folder), device="cpu").predict([(queries["q1"], TEXTS[d]) for d, _ in first.results["q1"]])
    assert [s for _, s in first.results["q1"]] == [float(x) for x in direct]  # what the model gives, unrounded


def test_a_function_reranker_keeps_no_score_and_a_bi_encoder_none_beside_its_vectors(tmp_path: Path) -> None:
    ctx = BuildContext(PASSAGES, workspace=tmp_path / "ws")
    reranked = RerankRetriever(build_retriever("bm25", ctx), FunctionScorer(lambda q, texts: [1.0] * len(texts)),
                               PASSAGES, workspace=Workspace(tmp_path / "ws"))
    reranked.search({"q": "bread"}, top_k=3)
    assert reranked.score_cache is None and not (tmp_path / "ws" / "rerank-scores").exists()
