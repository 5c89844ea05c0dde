"""The nouns read and write themselves (issue 22): `GoldenSet.load/save`, `Corpus.load`, `Run.load/save`
(TREC and JSON), `Scorecard.load/save`, each a thin method over the one loader or writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval

import goldeval
from goldeval import InputError, Run

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"


def test_golden_set_loads_and_saves_itself(tmp_path: Path) -> None:
    golden = goldeval.GoldenSet.load(DATA / "golden_example.jsonl")
    assert golden.fingerprint() == goldeval.load_golden(DATA / "golden_example.jsonl").fingerprint()
    golden.save(tmp_path / "copy.jsonl")
    again = goldeval.GoldenSet.load(tmp_path / "copy.jsonl")
    assert [q.id for q in again] == [q.id for q in golden] and again.fingerprint() == golden.fingerprint()
    assert again.qrels.to_dict() == golden.qrels.to_dict()


def test_golden_set_load_checks_ids_against_the_corpus(tmp_path: Path) -> None:
    corpus = goldeval.Corpus.load(DATA / "corpus")
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "q1", "question": "how do I stash", "expected": ["git/git-stsh.md"]}\n')
    with pytest.raises(goldeval.InputErrors, match="git/git-stash.md"):
        goldeval.GoldenSet.load(path, corpus=corpus)


def test_corpus_loads_itself() -> None:
    corpus = goldeval.Corpus.load(DATA / "corpus")
    assert list(corpus.documents) == list(goldeval.load_corpus(DATA / "corpus").documents)
    assert "git/git-stash.md" in corpus
    with pytest.raises(InputError, match="unknown corpus format 'xml'"):
        goldeval.Corpus.load(DATA / "corpus", fmt="xml")


def _run() -> Run:
    run = Run.from_scores("bm25 v2", {"q1": {"a": 2.5, "b": 2.5, "c": 0.1}, "q2": {"d": 1e-7, "e": -3.0}})
    run.errors["q3"] = "timed out after 10 s"
    return run


def test_run_saves_trec_that_pytrec_eval_reads_back(tmp_path: Path) -> None:
    _run().save(tmp_path / "run.trec")
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert lines[:2] == ["q1 Q0 b 1 2.5 bm25_v2", "q1 Q0 a 2 2.5 bm25_v2"]  # ties: id descending
    with (tmp_path / "run.trec").open() as f:
        assert pytrec_eval.parse_run(f) == {"q1": {"a": 2.5, "b": 2.5, "c": 0.1}, "q2": {"d": 1e-7, "e": -3.0}}
    back = Run.load(tmp_path / "run.trec")
    assert back.name == "bm25_v2" and back.results == _run().results and back.errors == {}


def test_run_json_round_trip_keeps_name_ranking_and_errors(tmp_path: Path) -> None:
    _run().save(tmp_path / "run.json")
    back = Run.load(tmp_path / "run.json")
    assert (back.name, back.results, back.errors) == ("bm25 v2", _run().results, {"q3": "timed out after 10 s"})
    assert Run.load(tmp_path / "run.json", name="other").name == "other"


def test_run_reads_ranx_and_pytrec_eval_json(tmp_path: Path) -> None:
    path = tmp_path / "ranx.json"
    path.write_text(json.dumps({"q1": {"c": 0.1, "a": 2.5, "b": 2.5}}))
    run = Run.load(path)
    assert run.name == "ranx" and run.results == {"q1": [("b", 2.5), ("a", 2.5), ("c", 0.1)]}
    saved = tmp_path / "as-trec.txt"
    run.save(saved, fmt="trec")
    assert Run.load(saved).results == run.results


@pytest.mark.parametrize("content, message", [
    ('{"q1": {"a": NaN}}', r"question `q1` has a score for 'a' that is not a finite number"),
    ('{"q1": {"a": "high"}}', r"question `q1` has a score for 'a' that is not a finite number"),
    ('{"q1": [["a", 1], ["a", 2]]}', r"question `q1` lists 'a' twice"),
    ('{"q1": [[3, 1]]}', r"question `q1` has a result id that is not a non-empty string"),
    ('["a", "b"]', r"a JSON run must map question ids to results"),
    ('{"q1": {"a": 1},\n "q2": }', r"bad\.json:2: not valid JSON"),
])
def test_bad_json_runs_name_the_file_and_the_value(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as caught:
        Run.load(path)
    assert "bad.json" in str(caught.value)


def test_a_run_with_a_non_finite_score_is_not_written(tmp_path: Path) -> None:
    run = Run.from_scores("r", {"q1": {"a": float("nan")}})
    with pytest.raises(InputError, match=r"cannot write .*run\.json: question `q1` has a score"):
        run.save(tmp_path / "run.json")
    assert not (tmp_path / "run.json").exists()
    with pytest.raises(InputError, match="unknown run format 'csv'"):
        run.save(tmp_path / "run.csv", fmt="csv")


def test_scorecard_loads_and_saves_itself(tmp_path: Path) -> None:
    card = goldeval.evaluate("bm25", DATA / "golden_example.jsonl", corpus=goldeval.Corpus.load(DATA / "corpus"),
                             k=(1, 5))
    card.save(tmp_path / "results.json")
    back = goldeval.Scorecard.load(tmp_path / "results.json")
    assert back.to_dict() == card.to_dict()
