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
