"""Both cores by default, and a retriever's `threads` (and `batch_size`) respected (issue 19: speed where the time goes).

The embedding is the whole wait on a real corpus, so the encoder must use every core the process may run on
(its CPU affinity, not the machine's count), and `dense:MODEL?threads=N` must hold even for a model already
loaded for another retriever (models are memoised per process): before, the option only set a process-wide
number that a loaded session never read again, while the results recorded it as in effect.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from goldeval.retrievers.encoders.base import available_cores, threads
from goldeval.retrievers.encoders.registry import load_encoder, shared_encoder

pytestmark = pytest.mark.models
TEXTS = ["The boundary layer on a flat plate in supersonic flow thickens downstream.",
         "Heat transfer to a blunt body at hypersonic speeds.", "flow", "Bake the bread for forty minutes."]


def test_the_default_is_every_core_this_process_may_run_on() -> None:
    assert available_cores() == len(os.sched_getaffinity(0))
    assert load_encoder("minilm", progress=False).n_threads == threads() == available_cores()


def test_a_float32_session_runs_on_the_retrievers_threads_and_follows_a_change() -> None:
    encoder = load_encoder("minilm-l3", threads=1, progress=False)
    one = encoder.encode(TEXTS)
    assert encoder._session.get_session_options().intra_op_num_threads == 1  # type: ignore[attr-defined]
    encoder.threads = 2
    two = encoder.encode(TEXTS)
    assert encoder._session.get_session_options().intra_op_num_threads == 2  # type: ignore[attr-defined]
    np.testing.assert_allclose(one, two, atol=1e-5)  # threads change the speed, never the vectors


def test_a_memoised_int8_model_takes_each_retrievers_threads() -> None:
    """`dense:minilm?threads=1` after `dense:minilm` (one model in memory): one text at a time on one thread,
    then the next retriever without the option gets every core again, not the first one's 1."""
    first = shared_encoder("minilm", threads=1, progress=False)
    alone = first.encode(TEXTS)
    assert first._pool._max_workers == 1  # type: ignore[attr-defined]
    assert first._session.get_session_options().intra_op_num_threads == 1  # type: ignore[attr-defined]
    again = shared_encoder("minilm", progress=False)
    assert again is first and again.n_threads == available_cores()
    side_by_side = again.encode(TEXTS)
    assert again._pool._max_workers == available_cores()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(alone, side_by_side)  # one text per run: the same vector on any thread


def test_a_memoised_model_goes_back_to_its_own_batch_size() -> None:
    """Regression: `dense:wordllama?batch_size=2`, then `dense:wordllama` in the same process embedded in
    batches of 2 (and a sweep cut its shards by them): the next retriever gets the model's own size."""
    from goldeval.retrievers.encoders.wordllama import WordLlamaEncoder

    first = shared_encoder("wordllama", batch_size=2, progress=False)
    assert first.batch_size == 2
    again = shared_encoder("wordllama", progress=False)
    assert again is first and again.batch_size == WordLlamaEncoder.batch_size == 4
