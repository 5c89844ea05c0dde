"""Length-bucketed batches (goldeval.retrievers.encoders.base.BatchedEncoder: sort by length, batch, put the
rows back in input order) give the vectors each text gets alone, within float32 tolerance: sorting only
saves padding (issue 19: speed where the time goes), it never changes what a text is embedded as."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goldeval.corpus import load_corpus
from goldeval.retrievers.dense import passage_text
from goldeval.retrievers.encoders.registry import load_encoder

pytestmark = pytest.mark.models
CRANFIELD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Cranfield abstracts of every length (a title to 300+ tokens, past minilm-l3's 128-token window),
    shuffled so that input order and length order differ."""
    passages = [passage_text(p) for p in load_corpus(CRANFIELD).passages()[:60]]
    order = np.random.default_rng(3).permutation(len(passages))
    texts = [passages[i] for i in order] + ["flow", "boundary layer"]
    assert len({len(t) for t in texts}) > 40
    return texts


@pytest.mark.parametrize("name", ["minilm-l3", "wordllama", "minilm"])
def test_bucketed_batches_give_each_texts_own_vector(name: str, texts: list[str]) -> None:
    bucketed = load_encoder(name, progress=False)
    assert bucketed.sort_by_length and bucketed.batch_size > 1
    batched = bucketed.encode(texts)
    alone = load_encoder(name, progress=False)
    alone.sort_by_length, alone.batch_size = False, 1  # each text its own batch: no padding, input order
    single = alone.encode(texts)
    assert batched.shape == single.shape == (len(texts), bucketed.dim)
    cosines = np.sum(batched * single, axis=1)
    assert cosines.min() > 0.99999, (name, float(cosines.min()))
    np.testing.assert_allclose(batched, single, atol=2e-5)
    unsorted = load_encoder(name, progress=False)
    unsorted.sort_by_length = False  # the same batch size in input order: padded to each batch's longest
    np.testing.assert_allclose(batched, unsorted.encode(texts), atol=2e-5)


def test_batches_are_sorted_by_the_models_tokens_not_characters() -> None:
    """A formula is short in characters and long in tokens: sorted by characters it would share a batch with
    prose of twice its tokens' worth of padding. Counts are checked against the tokenizer file itself."""
    from tokenizers import Tokenizer

    from goldeval.retrievers.encoders.base import longest_first
    from goldeval.retrievers.encoders.registry import package_file, registry

    encoder = load_encoder("minilm-l3", progress=False)
    formula, prose = "dy/dx=3.2e-4*(u_inf-u)", "the boundary layer thickens downstream of the leading edge"
    too_long = " ".join(["supersonic"] * 400)
    tokenizer = Tokenizer.from_file(str(package_file(registry()["minilm-l3"].tokenizer)))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=128)
    expected = [len(tokenizer.encode(t).ids) for t in (formula, prose, too_long)]
    assert len(formula) < len(prose) and expected[0] > expected[1] and expected[2] == 128
    assert encoder.batch_sizes([formula, prose, too_long]) == expected
    assert longest_first(encoder.batch_sizes([prose, formula, too_long]) or []) == [2, 1, 0]
    assert longest_first([5, 7, 5, 7]) == [1, 3, 0, 2]  # ties keep their input order


def test_the_cache_counts_each_text_once_and_gives_the_vectors_of_one_call(
        texts: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedding through the cache chunk by chunk (3 batches a chunk here) cuts the chunks in the encoder's
    token order, so every batch holds what one call over all the texts batches: the same bytes. The
    tokenizer counts each text once on that path (the chunks reuse the cache's counts)."""
    from goldeval.retrievers.encoders import base
    from goldeval.store.cache import EmbeddingCache
    from goldeval.store.workspace import Workspace

    monkeypatch.setattr(base, "CHUNK_BATCHES", 3)
    encoder = load_encoder("minilm-l3", progress=False)
    counted: list[str] = []
    count = encoder.token_counts
    monkeypatch.setattr(encoder, "token_counts", lambda batch: (counted.extend(batch), count(batch))[1])
    cached = base.cached_encode(EmbeddingCache(Workspace(tmp_path), encoder.key), encoder, texts, "passage")
    assert sorted(counted) == sorted(set(texts)) and encoder.cache_chunk < len(set(texts))
    np.testing.assert_array_equal(cached, encoder.encode(texts))
