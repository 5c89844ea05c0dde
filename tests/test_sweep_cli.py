"""`goldeval sweep` on the command line: a sweep file with flags on top, the terminal table, the JSON,
the self-contained HTML view and each configuration's results file; bad input exits 2 with the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from goldeval.cli import main
from goldeval.report.sweep_html import render_sweep_html
from goldeval.report.sweep_terminal import render_sweep
from goldeval.scorecard.model import Scorecard
from sweep_fixtures import write_inputs


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cli")
    corpus, golden = write_inputs(folder / "data")
    (folder / "sweep.toml").write_text(
        'corpus = "data/corpus.jsonl"\ngolden = "data/golden.jsonl"\nk = [1, 3, 5]\nresamples = 500\n'
        '[grid]\nchunking = ["none", "120:30"]\nretriever = ["bm25", "hybrid"]\nmodel = ["wordllama"]\n'
        'fusion = ["norm"]\nweight = [0.5]\n', encoding="utf-8")
    out = {"folder": folder, "json": folder / "out" / "sweep.json", "html": folder / "out" / "sweep.html",
           "cards": folder / "out" / "cards"}
    code = main(["sweep", str(folder / "sweep.toml"), "--weight", "0.3,0.7", "--workspace", str(folder / "ws"),
                 "--quiet", "--json", str(out["json"]), "--html", str(out["html"]), "--cards", str(out["cards"]),
                 "--no-history"])
    assert code == 0
    return out


@pytest.mark.models  # the grid's dense stage is wordllama
def test_flags_override_the_file(swept: dict[str, Path]) -> None:
    data = json.loads(swept["json"].read_text(encoding="utf-8"))
    assert data["dials"]["weight"] == [0.3, 0.7]  # --weight replaced the file's [0.5]
    assert data["dials"]["chunking"] == ["none", "120:30"] and data["k"] == [1, 3, 5]
    assert len(data["cells"]) == 2 * (1 + 2)
    assert data["statistics"]["resamples"] == 500


@pytest.mark.models  # the grid's dense stage is wordllama
def test_cards_are_results_files_best_first(swept: dict[str, Path]) -> None:
    data = json.loads(swept["json"].read_text(encoding="utf-8"))
    cards = sorted(swept["cards"].glob("*.json"))
    assert len(cards) == len(data["cells"])
    best = Scorecard.load(cards[0])
    assert best.retrievers[0].name == data["best"]
    assert best.retrievers[0].intervals  # filled by the sweep before writing


@pytest.mark.models  # the grid's dense stage is wordllama
def test_html_is_self_contained(swept: dict[str, Path]) -> None:
    html = swept["html"].read_text(encoding="utf-8")
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; script-src \'sha256-', html)
    assert not re.search(r'(src|href)="(?!data:)[^"]+"', html)  # nothing fetched
    payload = re.search(r'<script id="goldeval-sweep" type="application/json">(.*?)</script>', html, re.S)
    assert payload and json.loads(payload.group(1))["cells"] == json.loads(swept["json"].read_text())["cells"]


def test_hostile_text_cannot_leave_the_data_element() -> None:
    payload = {"cells": [], "identity": {"golden": {"path": "</script><script>alert(1)</script>"}}}
    html = render_sweep_html(payload)
    assert "alert(1)</script>" not in html and "\\u003c/script\\u003e" in html


@pytest.mark.models  # the grid's dense stage is wordllama
def test_second_run_prints_served_from_cache(swept: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder = swept["folder"]
    code = main(["sweep", str(folder / "sweep.toml"), "--weight", "0.3,0.7", "--workspace", str(folder / "ws"),
                 "--quiet", "--no-history"])
    out = capsys.readouterr().out
    assert code == 0
    assert "served from the cache: all 4 stored run(s), nothing searched or embedded" in out


@pytest.mark.models  # the grid's dense stage is wordllama
def test_terminal_table_narrow_and_wide(swept: dict[str, Path]) -> None:
    from goldeval.sweep import Grid, Settings, sweep
    from sweep_fixtures import tiny_corpus, tiny_golden

    result = sweep(Grid(chunking=("none", "120:30"), retriever=("bm25", "hybrid"), model=("wordllama",),
                        weight=(0.3, 0.7)), tiny_golden(), corpus=tiny_corpus(), settings=Settings(resamples=500),
                   workspace=swept["folder"] / "ws", record_history=False)
    for width, wide in ((80, False), (220, True)):
        console = Console(width=width, record=True, color_system=None)
        render_sweep(result, console)
        text = console.export_text()
        assert all(line.rstrip() == line.rstrip()[:width] for line in text.splitlines())
        assert ("p95 ms" in text) is wide and "p50 ms" in text
        assert f"best on {result.primary}: {result.best}" in text
        assert "within noise of it" in text and "Pareto front" in text


@pytest.mark.parametrize(("args", "match"), [
    (["--corpus", "nowhere", "--golden", "g.jsonl"], r"corpus path not found"),
    (["--retriever", "dense"], r"a sweep needs a corpus and a golden set"),
    (["--weight", "2"], r"weight 2 is outside \[0, 1\]"),
])
def test_bad_input_exits_2(tmp_path: Path, args: list[str], match: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", *args, "--workspace", str(tmp_path / "ws")]) == 2
    assert re.search(match, capsys.readouterr().err)
    assert not (tmp_path / "ws").exists()  # the failed sweep leaves no empty workspace behind


def test_a_failed_sweep_keeps_a_workspace_it_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = tmp_path / "found"
    found.mkdir()
    assert main(["sweep", "--corpus", str(tmp_path / "nowhere"), "--golden", "g.jsonl", "--workspace", str(found)]) == 2
    assert "corpus path not found" in capsys.readouterr().err
    assert found.is_dir()  # the user's own folder, empty or not, is never removed


@pytest.mark.models  # the grid's dense stage is wordllama
def test_an_option_no_retriever_takes_is_refused_before_any_work(swept: dict[str, Path],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = swept["folder"]
    code = main(["sweep", str(folder / "sweep.toml"), "--option", "k2=1.2", "--workspace", str(folder / "ws-opt")])
    assert code == 2
    assert "--option k2=1.2: no retriever in this run declares it" in capsys.readouterr().err
    assert not (folder / "ws-opt" / "sweep").exists()


def test_help_shows_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    out = capsys.readouterr().out
    assert "goldeval sweep examples/sweep_cranfield.toml" in out and "--workers" in out and "--ray-address" in out
