"""BM25 search (goldeval.retrievers.bm25_kernel): the same top 10 as bm25s itself on Cranfield, the
numba and numpy kernels equal to the last tie, and the numba compile cached in the workspace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from goldeval.corpus import load_corpus
from goldeval.corpus.model import Passage
from goldeval.golden.cranfield import load_cranfield_golden
from goldeval.retrievers import bm25_kernel
from goldeval.retrievers.bm25 import BM25Retriever

CRANFIELD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workspace for the module: numba compiles once, the other tests load its cache."""
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(params=["numba", "numpy"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "numpy":
        monkeypatch.setattr(bm25_kernel, "compiled", lambda workspace: None)
    return str(request.param)


def _bm25s_directly(passages: list[Passage]) -> tuple[object, object]:
    """bm25s itself (numpy backend) over the same tokens: its index and its tokenizer."""
    import bm25s
    import Stemmer
    from bm25s.tokenization import Tokenizer

    tokenizer = Tokenizer(lower=True, stopwords="english", stemmer=Stemmer.Stemmer("english").stemWord)
    texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages]
    model = bm25s.BM25()
    model.index(tokenizer.tokenize(texts, update_vocab=True, return_as="tuple", show_progress=False), show_progress=False)
    return model, tokenizer


def test_index_and_top10_equal_bm25s_on_cranfield(workspace: Path, kernel: str) -> None:
    corpus, golden = load_corpus(CRANFIELD), load_cranfield_golden(CRANFIELD)
    retriever = BM25Retriever(corpus.passages())
    retriever.workspace = workspace
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


def test_kernels_agree_to_the_last_tie(workspace: Path) -> None:
    rng = np.random.default_rng(3)
    words = ["wing", "flow", "shock", "heat", "plate", "boundary", "layer", "mach", "lift", "drag"]
    texts = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(300)]
    texts += texts[:40]  # duplicates: equal scores, ranked by id, descending
    passages = [Passage(f"p{i:03d}", f"p{i:03d}", t) for i, t in enumerate(texts)]
    retriever = BM25Retriever(passages, stem=False, stopwords=False)
    retriever.workspace = workspace
    questions = {f"q{i}": " ".join(rng.choice(words, size=rng.integers(1, 4))) for i in range(50)}
    questions["unknown"] = "zeppelin"
    for k in (1, 7, 1000):
        with_numba = retriever.search(questions, top_k=k).results
        bm25_kernel._KERNELS[str(workspace)], kept = None, bm25_kernel._KERNELS[str(workspace)]
        with_numpy = retriever.search(questions, top_k=k).results
        bm25_kernel._KERNELS[str(workspace)] = kept
        assert with_numba == with_numpy
        assert with_numba["unknown"] == []
        for hits in with_numba.values():  # best first: score descending, ties by id descending
            assert hits == sorted(hits, key=lambda h: (h[1], h[0]), reverse=True)
            assert len(hits) <= k


def test_a_second_process_loads_the_compiled_kernel_from_the_workspace(workspace: Path) -> None:
    retriever = BM25Retriever([Passage("a", "a", "wing flow")])
    retriever.workspace = workspace
    retriever.search({"q": "flow"}, top_k=1)  # compiles here unless an earlier test did
    assert list((workspace / "numba").glob("*.nbi")), "the first compile wrote numba's cache"
    code = (
        "import json; from goldeval.corpus.model import Passage; from goldeval.retrievers import bm25_kernel;"
        "from goldeval.retrievers.bm25 import BM25Retriever; import sys; from pathlib import Path;"
        "r = BM25Retriever([Passage('a', 'a', 'wing flow'), Passage('b', 'b', 'flow')]); r.workspace = Path(sys.argv[1]);"
        "r.search({'q': 'flow'}, top_k=1); k = bm25_kernel.compiled(r.workspace);"
        "print(json.dumps([sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, check=True)
    hits, misses = json.loads(out.stdout.strip().splitlines()[-1])
    assert (hits, misses) == (1, 0)
