"""BM25 search (goldeval.retrievers.bm25_kernel): the same top 10 as bm25s itself on Cranfield, the
numba and numpy kernels equal to the last tie, ties at the k-th score cut by the one ranking rule
(Run.add_ranked keeps the kernel's order: what Run.add gives), and the numba compile cached in the
user cache, once per machine: a process in another project folder loads it (issue 19)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from goldeval.corpus import load_corpus
from goldeval.corpus.model import Passage
from goldeval.golden.cranfield import load_cranfield_golden
from goldeval.retrievers import bm25_kernel
from goldeval.retrievers.bm25 import BM25Retriever
from goldeval.run import Run

CRANFIELD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


@pytest.fixture(scope="module", autouse=True)
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One user cache for the module ($GOLDEVAL_CACHE): numba compiles once, the other tests load it."""
    folder = tmp_path_factory.mktemp("user-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GOLDEVAL_CACHE", str(folder))
        yield folder


@pytest.fixture(params=[pytest.param("numba", marks=pytest.mark.fast), "numpy"])  # no numba: no numba case
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "numpy":
        monkeypatch.setattr(bm25_kernel, "compiled", lambda: None)
    return str(request.param)


def _bm25s_directly(passages: list[Passage]) -> tuple[object, object]:
    """bm25s itself (numpy backend) over the same tokens: its index and its tokenizer."""
    import bm25s
    import Stemmer
    from bm25s.tokenization import Tokenizer

    tokenizer = Tokenizer(lower=True, stopwords="english", stemmer=Stemmer.Stemmer("english").stemWord)
    texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages]
    model = bm25s.BM25()
    tokens = tokenizer.tokenize(texts, update_vocab=True, return_as="tuple", show_progress=False, allow_empty=False)
    model.index(tokens, show_progress=False)
    return model, tokenizer


def test_index_and_top10_equal_bm25s_on_cranfield(kernel: str) -> None:
    corpus, golden = load_corpus(CRANFIELD), load_cranfield_golden(CRANFIELD)
    retriever = BM25Retriever(corpus.passages())
    model, tokenizer = _bm25s_directly(corpus.passages())
    ours = retriever._postings
    assert np.array_equal(ours.indptr, model.scores["indptr"][: len(ours.indptr)])  # same index, bit for bit
    assert np.array_equal(ours.indices, model.scores["indices"]) and np.array_equal(ours.data, model.scores["data"])
    questions = {q.id: q.question for q in golden}
    run = retriever.search(questions, top_k=10)
    tokens = tokenizer.tokenize(list(questions.values()), update_vocab=False, return_as="string", show_progress=False)
    docs, scores = model.retrieve(tokens, k=10, show_progress=False)
    compared = 0
    for row, qid in enumerate(questions):
        ours_top = dict(run.results[qid])
        theirs = {retriever._ids[d]: float(s) for d, s in zip(docs[row], scores[row], strict=True) if s > 0}
        cut = min([*ours_top.values(), *theirs.values()], default=0.0)  # ties at the 10th score may differ
        assert {d: s for d, s in ours_top.items() if s > cut} == {d: s for d, s in theirs.items() if s > cut}, qid
        compared += len(ours_top)
    assert compared > 2000


def test_scores_equal_bm25s_bit_for_bit_with_passages_of_no_words(kernel: str) -> None:
    """Regression (issue 23): a passage with no words (Cranfield's 471 and 995 are empty) was one ""
    token, length 1, so the average length and every score differed from bm25s' own pipeline
    (`bm25s.tokenize` + `BM25.index` + `retrieve`, which counts it 0) by about 1e-5 relative."""
    import bm25s
    import Stemmer

    corpus, golden = load_corpus(CRANFIELD), load_cranfield_golden(CRANFIELD)
    passages = corpus.passages()
    texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages]
    assert [p.id for p, t in zip(passages, texts, strict=True) if not t.strip()] == ["471", "995"]
    stem = Stemmer.Stemmer("english").stemWords
    model = bm25s.BM25()
    model.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    retriever = BM25Retriever(passages)
    questions = {q.id: q.question for q in golden}
    run = retriever.search(questions, top_k=20)
    tokens = bm25s.tokenize(list(questions.values()), stopwords="en", stemmer=stem, show_progress=False, return_ids=False)
    docs, scores = model.retrieve(tokens, k=20, show_progress=False)
    compared = 0
    for row, qid in enumerate(questions):
        theirs = {retriever._ids[d]: s for d, s in zip(docs[row].tolist(), scores[row].astype(np.float64).tolist(),
                                                        strict=True) if s > 0}  # fmt: skip
        ours = dict(run.results[qid])
        cut = min([*ours.values(), *theirs.values()], default=0.0)  # ties at the 20th score may be cut apart
        assert {d: s for d, s in ours.items() if s > cut} == {d: s for d, s in theirs.items() if s > cut}, qid
        compared += sum(s > cut for s in ours.values())
    assert compared > 4000


@pytest.mark.fast
def test_kernels_agree_to_the_last_tie(user_cache: Path) -> None:
    rng = np.random.default_rng(3)
    words = ["wing", "flow", "shock", "heat", "plate", "boundary", "layer", "mach", "lift", "drag"]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(300)]
    texts += texts[:40]  # duplicates: equal scores, ranked by id, descending
    passages = [Passage(f"p{i:03d}", f"p{i:03d}", t) for i, t in enumerate(texts)]
    retriever = BM25Retriever(passages, stem=False, stopwords=False)
    questions = {f"q{i}": " ".join(rng.choice(words, size=rng.integers(1, 4))) for i in range(50)}
    questions["unknown"] = "zeppelin"
    for k in (1, 7, 1000):
        with_numba = retriever.search(questions, top_k=k).results
        key = str(user_cache / "numba")
        bm25_kernel._KERNELS[key], kept = None, bm25_kernel._KERNELS[key]
        with_numpy = retriever.search(questions, top_k=k).results
        bm25_kernel._KERNELS[key] = kept
        assert with_numba == with_numpy
        assert with_numba["unknown"] == []
        for hits in with_numba.values():  # best first: score descending, ties by id descending
            assert hits == sorted(hits, key=lambda h: (h[1], h[0]), reverse=True)
            assert len(hits) <= k


@pytest.mark.fast
def test_a_process_in_another_project_folder_loads_the_compiled_kernel_from_the_user_cache(
        user_cache: Path, tmp_path: Path) -> None:
    # issue 19: the kernel was cached in each folder's .goldeval/numba, so every new folder compiled it again
    retriever = BM25Retriever([Passage("a", "a", "wing flow")])
    retriever.search({"q": "flow"}, top_k=1)  # compiles here unless an earlier test did
    assert list((user_cache / "numba").glob("bm25_kernel-*/*.nbi")), "the first compile wrote numba's cache"
    code = (
        "import json; from goldeval.corpus.model import Passage; from goldeval.retrievers import bm25_kernel;"
        "from goldeval.retrievers.bm25 import BM25Retriever;"
        "r = BM25Retriever([Passage('a', 'a', 'wing flow'), Passage('b', 'b', 'flow')]);"
        "r.search({'q': 'flow'}, top_k=1); k = bm25_kernel.compiled();"
        "print(json.dumps([sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]))"
    )
    other = tmp_path / "another-project"
    other.mkdir()
    env = {**os.environ, "GOLDEVAL_CACHE": str(user_cache)}
    env.pop("GOLDEVAL_WORKSPACE", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=other, env=env)
    hits, misses = json.loads(out.stdout.strip().splitlines()[-1])
    assert (hits, misses) == (1, 0)
    assert not (other / ".goldeval").exists()  # nothing of the machine's was written into the project


def _tied_passages(n: int, seed: int) -> list[Passage]:
    """Passages whose ids sort unlike their order (case, length, accents, digits) and whose texts
    repeat: many equal scores, so the ranking's tie rule decides."""
    rng = np.random.default_rng(seed)
    words = ["wing", "flow", "shock", "heat", "plate", "boundary", "layer", "mach", "lift", "drag", "cone"]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 5))) for _ in range(n // 2)]
    texts += [texts[i] for i in rng.integers(0, len(texts), size=n - len(texts))]
    stems = ["doc", "Doc", "d", "Ärm", "z", "a-b", "10", "9"]
    ids = [f"{stems[i % len(stems)]}{rng.integers(0, 10**rng.integers(1, 5))}-{i}" for i in range(n)]
    return [Passage(i, i, t) for i, t in zip(ids, texts, strict=True)]


def test_add_ranked_keeps_the_kernels_order_which_is_what_add_gives_ties_included(kernel: str) -> None:
    retriever = BM25Retriever(_tied_passages(1000, seed=5), stem=False, stopwords=False)  # 1000: a partial last block
    rng = np.random.default_rng(6)
    words = ["wing", "flow", "shock", "heat", "plate", "boundary", "layer", "mach", "lift", "drag", "cone", "zeppelin"]
    questions = {f"q{i}": " ".join(rng.choice(words, size=rng.integers(1, 5))) for i in range(80)}
    tied_at_a_cut = 0
    for k in (1, 5, 100, 2000):
        run = retriever.search(questions, top_k=k)  # built with Run.add_ranked
        for qid, hits in run.results.items():
            again = Run("again")
            again.add(qid, hits)  # the one ranking rule, sorting
            assert again.results[qid] == hits, (k, qid)
            tied_at_a_cut += len(hits) == k and any(s == hits[-1][1] for _, s in hits[:-1])
    assert tied_at_a_cut > 20  # the cut at k falls inside a tie often: the tie rule was exercised


def test_a_common_term_query_keeps_the_highest_ids_of_a_tie_at_the_kth_score(kernel: str) -> None:
    """Common-term queries scan every score above a floor (the k-th best of the rarest term's
    passages): 300 passages tied at that floor, the top 10 must be the 10 highest ids among them."""
    texts = ["wing flow"] * 300 + ["wing"] * 200 + ["flow"] * 100 + ["shock wing flow"] * 3
    passages = [Passage(f"p{i:03d}", f"p{i:03d}", t) for i, t in enumerate(texts)]
    retriever = BM25Retriever(passages, stem=False, stopwords=False)
    full = retriever.search({"q": "wing flow shock"}, top_k=len(passages)).results["q"]
    assert [d for d, _ in full[:3]] == ["p602", "p601", "p600"]
    assert [d for d, _ in full[3:13]] == [f"p{i:03d}" for i in range(299, 289, -1)]
    for k in (1, 3, 4, 10, 100, 303, 304):
        assert retriever.search({"q": "wing flow shock"}, top_k=k).results["q"] == full[:k], k


def test_term_ids_the_index_lacks_are_dropped_per_query(kernel: str) -> None:
    postings = bm25_kernel.Postings.build([[0, 1], [1, 2], [2], [0, 0, 2]], 3, ["a", "b", "c", "d"], 1.5, 0.75)
    got = bm25_kernel.top_k(postings, [[0, 7, -1, 2], [9], [], [1]], 4)
    clean = bm25_kernel.top_k(postings, [[0, 2], [], [], [1]], 4)
    assert all(np.array_equal(a, b) for a, b in zip(got, clean, strict=True))
    assert got[2].tolist() == [4, 0, 0, 2]  # passages with a term in common, per query


@pytest.mark.fast
def test_numba_and_numpy_top_k_give_the_same_arrays_padding_included(user_cache: Path) -> None:
    """The numba kernel hands back each query's k best unsorted and numpy sorts them (issue 23): the
    arrays must be the numpy path's to the last slot, the first passage (index 0, the lowest id) among
    the results, and the slots past a query's count 0 and 0.0."""
    passages = _tied_passages(400, seed=8)
    passages[0] = Passage("!first", "!first", "wing flow shock")  # index 0 and the lowest id: key 0 is "none"
    retriever = BM25Retriever(passages, stem=False, stopwords=False)
    rng = np.random.default_rng(9)
    words = ["wing", "flow", "shock", "heat", "plate", "boundary", "layer", "mach", "lift", "drag", "cone"]
    queries = [rng.choice(11, size=rng.integers(1, 4)).tolist() for _ in range(60)] + [[], [0, 1, 2]]
    vocab = retriever._tokenizer.get_vocab_dict()
    terms = [[vocab[words[w]] for w in q if words[w] in vocab] for q in queries]
    assert bm25_kernel.compiled() is not None
    for k in (1, 9, 100, 1000):
        with_numba = bm25_kernel.top_k(retriever._postings, terms, k)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(bm25_kernel, "compiled", lambda: None)
            with_numpy = bm25_kernel.top_k(retriever._postings, terms, k)
        for ours, reference in zip(with_numba, with_numpy, strict=True):
            assert ours.dtype == reference.dtype and np.array_equal(ours, reference), k
        docs, scores, counts = with_numba
        assert 0 in docs[-1, : counts[-1]].tolist()  # "!first" is found for "wing flow shock"
        past = np.arange(docs.shape[1]) >= counts[:, None]
        assert not docs[past].any() and not scores[past].any()


def test_a_search_runs_no_garbage_collection_while_it_builds_the_run(kernel: str) -> None:
    """Regression (issue 23): the Run of 30 questions x 1,000 passages (30,000 (id, score) pairs) was
    built with the cyclic garbage collector on, ~40 collections, each walking the pairs made so far; with
    the process's other objects (numba's) a full one now and then cost ~100 ms. Built through
    Run.ranked_from (the collector paused), at most the one collection after it may run."""
    import gc

    passages = [Passage(f"p{i:04d}", f"p{i:04d}", t) for i, t in enumerate(["wing flow shock"] * 2000)]
    retriever = BM25Retriever(passages, stem=False, stopwords=False)
    questions = {f"q{i}": "wing flow" for i in range(30)}  # few: tokenizing them starts no collection
    retriever.search({"warm": "wing"}, top_k=1)
    collections: list[int] = []
    gc.collect()
    gc.callbacks.append(start := lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)
    try:
        run = retriever.search(questions, top_k=1000)
    finally:
        gc.callbacks.remove(start)
    assert sum(len(hits) for hits in run.results.values()) == 30_000
    assert len(collections) <= 1, collections
    assert gc.isenabled()
