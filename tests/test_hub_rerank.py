"""Hub cross-encoders by name (issue 19): `rerank:BASE>hf:ORG/NAME[@REVISION][?trust_remote_code=true]`, with no hub.

As in tests/test_hub_models.py (whose cache-building helpers this uses): a real Hugging Face cache folder built
here from the bundled all-MiniLM-L6-v2 weights (a CrossEncoder with a fresh, seeded one-label head), HF_HUB_CACHE
pointed at it and HF_HUB_OFFLINE=1 set by the test (never by goldeval), the network refused. One repository
defines its model class in its own code (as some hub rerankers do): it runs only when trusted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext, build_retriever
from network_guard import hub_offline
from test_hub_models import (
    CROSS,
    EXAMPLES,
    MAIN,
    OLD,
    TEXTS,
    bundled_minilm,
    cache_model,
    marked_copy,
    offline_snapshot,
)

pytestmark = pytest.mark.models

OWN_CODE = "someone/own-code-reranker"
"""A cross-encoder repository with Python code of its own: its classification head adds 0.5 to every logit."""
QUERY = "flat plate boundary layer"


def own_code_cross_encoder(plain: Path, folder: Path) -> Path:
    """The plain cross-encoder with its own model class (its logits moved by 0.5)."""
    return marked_copy(plain, folder, base="BertForSequenceClassification", cls="MarkedForSequenceClassification",
                       auto="AutoModelForSequenceClassification", output="logits", model_type="marked-ce")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cross-encoder at two commits (main, and an older one only `@OLD` reaches) and the own-code one."""
    import torch
    from sentence_transformers import CrossEncoder

    root = tmp_path_factory.mktemp("hf") / "hub"
    torch.manual_seed(0)
    plain = tmp_path_factory.mktemp("ce") / "ce"
    CrossEncoder(str(bundled_minilm()), num_labels=1, device="cpu").save(str(plain))
    torch.manual_seed(1)
    older = tmp_path_factory.mktemp("ce-old") / "ce"
    CrossEncoder(str(bundled_minilm()), num_labels=1, device="cpu").save(str(older))  # another head: other scores
    cache_model(root, CROSS, older, OLD, main=False)
    cache_model(root, CROSS, plain, MAIN)
    cache_model(root, OWN_CODE, own_code_cross_encoder(plain, tmp_path_factory.mktemp("own") / "ce"), MAIN)
    return root


@pytest.fixture
def offline(cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return hub_offline(cache, monkeypatch)


def _ctx(tmp_path: Path) -> BuildContext:
    return BuildContext([Passage(str(i), str(i), t) for i, t in enumerate(TEXTS)], workspace=tmp_path / "ws")


def _scores(spec: str, tmp_path: Path) -> dict[str, float]:
    retriever = build_retriever(spec, _ctx(tmp_path))
    return dict(retriever.search({"q": QUERY}, top_k=3).results["q"])


def test_a_repository_with_code_of_its_own_reranks_only_when_trusted(offline: list[str], tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from sentence_transformers import CrossEncoder

    args = ["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
            "--workspace", str(tmp_path / "ws"), "--quiet", "--no-history"]
    assert main([*args, "--retriever", f"rerank:bm25>hf:{OWN_CODE}?top=5"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    error, hint = err.strip().splitlines()[-2:]
    assert error.startswith(
        f"goldeval: error: hub model {OWN_CODE} (commit {MAIN}) runs Python code of its own, and it was not trusted")
    assert f"rerank:BASE>hf:{OWN_CODE}?trust_remote_code=true" in hint
    trusted = build_retriever(f"rerank:bm25>hf:{OWN_CODE}?top=3&trust_remote_code=true", _ctx(tmp_path))
    scores = dict(trusted.search({"q": QUERY}, top_k=3).results["q"])
    assert trusted.config["reranker"]["model_hub"] == {  # type: ignore[index]
        "hub": OWN_CODE, "revision": "main", "commit": MAIN, "trust_remote_code": True}
    direct = CrossEncoder(str(offline_snapshot(OWN_CODE, MAIN)), device="cpu", trust_remote_code=True,
                          local_files_only=True)
    ids = list(scores)
    expected = direct.predict([(QUERY, TEXTS[int(pid)]) for pid in ids])
    assert [scores[pid] for pid in ids] == pytest.approx([float(s) for s in expected], abs=1e-6)
    plain = _scores(f"rerank:bm25>hf:{CROSS}?top=3", tmp_path / "plain")
    assert max(abs(scores[pid] - plain[pid]) for pid in ids) > 0.01  # the repository's own class ran
    assert offline == []


def test_trust_remote_code_is_for_a_hub_cross_encoder_only(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"trust_remote_code in .* is for a hub cross-encoder \(hf:ORG/NAME\)"):
        build_retriever("rerank:bm25>dense:minilm?trust_remote_code=true", _ctx(tmp_path))
    with pytest.raises(InputError, match="trust_remote_code in .* is for a hub cross-encoder"):
        build_retriever("rerank:bm25>api:m?url=http://127.0.0.1:9/rerank&trust_remote_code=true", _ctx(tmp_path))


def test_a_revision_pins_the_cross_encoders_commit_and_its_scores(offline: list[str], tmp_path: Path) -> None:
    pinned = build_retriever(f"rerank:bm25>hf:{CROSS}@{OLD}?top=3", _ctx(tmp_path))
    assert pinned.config["reranker"]["model_hub"] == {"hub": CROSS, "revision": OLD, "commit": OLD}  # type: ignore[index]
    old = dict(pinned.search({"q": QUERY}, top_k=3).results["q"])
    latest = _scores(f"rerank:bm25>hf:{CROSS}?top=3", tmp_path)  # same workspace: another commit, another key
    assert old.keys() == latest.keys() and old != latest
    assert offline == []


def test_an_uncached_cross_encoder_is_one_error_naming_the_fetch_command(offline: list[str], tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
                 "--retriever", "rerank:bm25>hf:BAAI/bge-reranker-base", "--workspace", str(tmp_path / "ws"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "hub model BAAI/bge-reranker-base is not in the Hugging Face cache" in err
    assert "hint: fetch it once with the network: hf download BAAI/bge-reranker-base (or unset HF_HUB_OFFLINE)" in err
    assert offline == []


def test_a_hub_cross_encoders_scores_are_kept_and_read_back_offline(offline: list[str], tmp_path: Path) -> None:
    first = build_retriever(f"rerank:bm25>hf:{CROSS}?top=3", _ctx(tmp_path))
    scores = first.search({"q": QUERY}, top_k=3).results
    again = build_retriever(f"rerank:bm25>hf:{CROSS}?top=3", _ctx(tmp_path))
    assert again.search({"q": QUERY}, top_k=3).results == scores
    found = len(scores["q"])
    assert found and again.score_cache.stats.hits == found  # type: ignore[union-attr]
    assert again.score_cache.stats.computed == 0  # type: ignore[union-attr]
    assert again.scorer._model is None  # type: ignore[attr-defined]  # the model was never even loaded
    assert offline == []
