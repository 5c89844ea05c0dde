"""`dense:minilm?precision=int8|fp32|auto` (issue 19): numbers never silently depend on the machine.

`dense:minilm` runs int8 everywhere. Its float32 graph (the one int8 is quantized from) is asked for by
name, or `auto` measures both once per machine (user cache) and takes the faster. Each variant is another
model key, so their vectors never share an embedding cache or a stored run; the results record the variant
that ran; a comparison across variants says so. Real models only: the bundled ONNX all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import goldeval
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.retrievers.encoders import precision
from goldeval.retrievers.encoders.registry import load_encoder, registry
from goldeval.runstore import run_key
from goldeval.store.kept import write_kept
from goldeval.usercache import user_cache
from sweep_fixtures import tiny_corpus, tiny_golden

pytestmark = pytest.mark.models
TEXTS = ["The boundary layer on a flat plate in supersonic flow thickens downstream.",
         "Heat transfer to a blunt body at hypersonic speeds, measured at Mach 2.5 and 1.2e5 per foot.",
         "flow", "Bake the bread at two hundred degrees for forty minutes.", "x = 1.5e-3 * (u - u_inf)"]


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache of this test's own, holding the machine's model copies (not quantized again: 40 s)."""
    models = user_cache() / "models"
    models.mkdir(parents=True, exist_ok=True)
    cache = tmp_path / "user-cache"
    cache.mkdir()
    (cache / "models").symlink_to(models.resolve(), target_is_directory=True)
    monkeypatch.setenv("GOLDEVAL_CACHE", str(cache))
    return cache


def _eval(spec: str, workspace: Path, cache: bool = False):  # type: ignore[no-untyped-def]
    return goldeval.evaluate(spec, tiny_golden(), corpus=tiny_corpus(), k=[1, 5], workspace=workspace,
                             progress=False, cache=cache)


def test_fp32_and_int8_agree_within_cosine_0_99_and_are_two_models(tmp_path: Path) -> None:
    int8, fp32 = load_encoder("minilm", progress=False), load_encoder("minilm", precision="fp32", progress=False)
    assert int8.spec.quantize == "int8-dynamic" and fp32.spec.quantize == ""  # type: ignore[attr-defined]
    assert load_encoder("minilm", precision="int8", progress=False).key == int8.key != fp32.key
    a, b = int8.encode(TEXTS), fp32.encode(TEXTS)
    cosines = np.sum(a * b, axis=1)
    assert cosines.min() > 0.99, cosines
    assert np.abs(a - b).max() > 1e-3  # really another computation, not the same vectors twice
    ctx = BuildContext(tiny_corpus().passages(), workspace=tmp_path / "ws", options={"progress": False})
    folders = {build_retriever(s, ctx).cache.folder for s in ("dense:minilm", "dense:minilm?precision=fp32")}  # type: ignore[attr-defined]
    assert len(folders) == 2  # never one embedding cache for both


def test_the_default_is_int8_on_every_machine_and_the_results_say_so(tmp_path: Path) -> None:
    config = _eval("dense:minilm", tmp_path).retrievers[0].config
    assert config["options"]["precision"] == "int8" and "precision_auto" not in config
    fp32 = _eval("dense:minilm?precision=fp32", tmp_path).retrievers[0].config
    assert fp32["options"]["precision"] == "fp32" and fp32["model_key"] != config["model_key"]


def test_auto_measures_once_records_the_variant_and_reads_the_decision_back(
        own_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    spec = registry()["minilm"]
    first = _eval("dense:minilm?precision=auto", tmp_path / "a").retrievers[0].config
    chosen = first["options"]["precision"]
    assert chosen in ("int8", "fp32") and first["precision_auto"]["chose"] == chosen
    assert set(first["precision_auto"]["passages_per_cpu_s"]) == {"int8", "fp32"}
    assert "measuring int8 and fp32 on this CPU, once" in capsys.readouterr().err
    kept = precision.decision_path(spec)
    assert kept.parent == own_cache / "precision" and kept.is_file()

    def refuse(*args: object) -> None:
        raise AssertionError("measured again: the decision was not read from the user cache")

    monkeypatch.setattr(precision, "measure", refuse)
    again = _eval("dense:minilm?precision=auto", tmp_path / "b").retrievers[0].config
    assert again["options"]["precision"] == chosen and again["model_key"] == first["model_key"]
    assert "measuring" not in capsys.readouterr().err

    # the kept decision is what decides: flipped by hand, auto runs the other variant, under another run key
    decision = precision.read_decision(spec)
    assert decision is not None
    other = "fp32" if chosen == "int8" else "int8"
    key_before = run_key("dense:minilm?precision=auto", passages="p", questions="q", depth=10, options={})
    write_kept(kept, {**precision._record(decision), "chosen": other}, "test")
    flipped = _eval("dense:minilm?precision=auto", tmp_path / "c").retrievers[0].config
    assert flipped["options"]["precision"] == other and flipped["model_key"] != first["model_key"]
    assert run_key("dense:minilm?precision=auto", passages="p", questions="q", depth=10, options={}) != key_before


def test_a_stored_run_of_auto_is_not_served_once_auto_resolves_to_the_other_variant(
        own_cache: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    first = _eval("dense:minilm?precision=auto", workspace, cache=True).retrievers[0].config
    decision = precision.read_decision(registry()["minilm"])
    assert decision is not None
    other = "fp32" if decision.chosen == "int8" else "int8"
    write_kept(decision.path, {**precision._record(decision), "chosen": other}, "test")
    second = _eval("dense:minilm?precision=auto", workspace, cache=True).retrievers[0].config
    assert (first["options"]["precision"], second["options"]["precision"]) == (decision.chosen, other)


def test_a_comparison_across_variants_says_so(own_cache: Path, tmp_path: Path) -> None:
    """Two scorecards of `dense:minilm?precision=auto` made where auto chose differently (two machines): the
    same name, paired, and a note that they ran in other precisions."""
    before = _eval("dense:minilm?precision=auto", tmp_path / "a")
    decision = precision.read_decision(registry()["minilm"])
    assert decision is not None
    other = "fp32" if decision.chosen == "int8" else "int8"
    write_kept(decision.path, {**precision._record(decision), "chosen": other}, "test")
    after = _eval("dense:minilm?precision=auto", tmp_path / "b")
    report = goldeval.compare_results(before, after)
    notes = [n for n in report.comparison.notes if "another precision" in n]
    assert notes == [f'candidate/dense:minilm?precision=auto embedded in another precision than in the baseline '
                     f'(options.precision: "{decision.chosen}" -> "{other}"): its vectors differ slightly, so part '
                     "of any difference is the precision's, not the change under test"]
    same = goldeval.compare_results(before, _eval("dense:minilm?precision=" + decision.chosen, tmp_path / "c"))
    assert not [n for n in same.comparison.notes if "another precision" in n]


def test_precision_is_refused_in_one_line_for_a_model_with_one(tmp_path: Path) -> None:
    ctx = BuildContext(tiny_corpus().passages(), workspace=tmp_path / "ws", options={"progress": False})
    with pytest.raises(InputError, match=r"precision=fp32 is for models with int8 and float32 variants \(minilm\), "
                                         r"not 'minilm-l3'"):
        build_retriever("dense:minilm-l3?precision=fp32", ctx)
    with pytest.raises(InputError, match=r"option precision='fp16' .* is not one of int8, fp32, auto"):
        build_retriever("dense:minilm?precision=fp16", ctx)
    # --option precision=fp32 is for every retriever of the run that can take it; minilm-l3 cannot
    shared = BuildContext(tiny_corpus().passages(), workspace=tmp_path / "ws",
                          options={"progress": False, "precision": "fp32"})
    assert "precision" not in build_retriever("dense:minilm-l3", shared).config["options"]  # type: ignore[attr-defined]
    assert build_retriever("dense:minilm", shared).config["options"]["precision"] == "fp32"  # type: ignore[attr-defined]


def test_a_sweep_embeds_with_the_variant_its_runs_use(tmp_path: Path) -> None:
    """`--option precision=fp32` in a sweep: the embed stage embeds with the fp32 model the runs build, so no
    run embeds while searching, and the cell's configuration records fp32."""
    from goldeval.sweep import Grid, Settings, sweep

    result = sweep(Grid(chunking=("none",), retriever=("dense",), model=("minilm",)), tiny_golden(),
                   corpus=tiny_corpus(), settings=Settings(k=(1, 5), resamples=200, options={"precision": "fp32"}),
                   workspace=tmp_path / "ws", record_history=False)
    assert result.stages["embeddings"]["texts_embedded"] > 0
    assert result.stages["embeddings"]["embedded_while_searching"] == 0
    assert [c.config["options"]["precision"] for c in result.cells] == ["fp32"]


def test_goldeval_models_shows_the_variants_and_which_is_faster_here(
        own_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from goldeval.cli import main

    out = tmp_path / "models.json"
    assert main(["models", "--json", str(out)]) == 0
    rows = {r["name"]: r for r in json.loads(out.read_text())}
    assert [(v["precision"], v["default"]) for v in rows["minilm"]["precisions"]] == [("int8", True), ("fp32", False)]
    assert rows["minilm"]["faster_here"] is None and rows["minilm-l3"]["precisions"] == []
    assert "Faster here: not measured on this machine yet (dense:minilm?precision=auto measures it" in \
        " ".join(capsys.readouterr().out.split())
    assert not (own_cache / "precision").exists()  # listing measures nothing and makes nothing
    spec = registry()["minilm"]
    decided = precision.Decision("minilm", "fp32", {"int8": 10.0, "fp32": 12.5}, {"cpu": "a CPU without VNNI",
                                 "cores": 2}, "2025-01-02T03:04:05Z", precision.decision_path(spec))
    (own_cache / "precision").mkdir()
    write_kept(decided.path, precision._record(decided), "test")
    assert main(["models", "--json", str(out)]) == 0
    row = {r["name"]: r for r in json.loads(out.read_text())}["minilm"]
    assert row["faster_here"]["chose"] == "fp32" and row["faster_here"]["passages_per_cpu_s"] == {"int8": 10.0, "fp32": 12.5}
    assert ("Faster here: fp32 (int8 10, fp32 12.5 passages per CPU second on 2 cores, measured 2025-01-02T03:04:05Z); "
            "precision=auto uses it.") in " ".join(capsys.readouterr().out.split())
