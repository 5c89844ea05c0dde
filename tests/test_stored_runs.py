"""Runs and statistics kept by content in the workspace: an unchanged evaluation reads them and gives the
same scorecard; any change to what they depend on searches (or resamples) again; what comes from
outside goldeval, and what failed, is never kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from golden_factory import make_golden
from goldeval import evaluate
from goldeval.cli import main
from goldeval.corpus.model import Corpus, Document
from goldeval.scorecard.io import scorecard_to_dict
from goldeval.stats.annotate import compare
from goldeval.store.kept import kept_json

DOCS = {
    "stash.md": "git stash puts the changes of a dirty working directory away",
    "branch.md": "git branch lists, creates or deletes branches",
    "pasta.md": "boil water, add salt and cook the pasta",
}


def corpus() -> Corpus:
    return Corpus({d: Document(d, text) for d, text in DOCS.items()})


def golden(question: str = "put my changes away"):  # type: ignore[no-untyped-def]
    return make_golden([("q1", question, {"stash.md": 1}), ("q2", "delete a branch", {"branch.md": 1}),
                        ("off", "weather in Lisbon", {})])


def results(card) -> dict:  # type: ignore[no-untyped-def]
    """The scorecard as JSON, less what differs from run to run (when, and how long it took)."""
    data = scorecard_to_dict(card)
    for key in ("created", "identity", "notes"):
        data.pop(key)
    for r in data["retrievers"]:
        r.pop("seconds")
    return data


def stored(workspace: Path) -> list[Path]:
    return sorted((workspace / "runs").glob("*.json"))


def test_an_unchanged_evaluation_reads_its_runs_and_gives_the_same_scorecard(tmp_path: Path) -> None:
    first = evaluate(["bm25", "bm25?k1=0.9"], golden(), corpus=corpus(), workspace=tmp_path)
    assert len(stored(tmp_path)) == 2 and first.notes == []
    second = evaluate(["bm25", "bm25?k1=0.9"], golden(), corpus=corpus(), workspace=tmp_path)
    assert results(second) == results(first)
    assert len(second.notes) == 1 and second.notes[0].startswith("bm25, bm25?k1=0.9: results read from")
    # nothing was searched: a kept run rewritten (with its checksum, as goldeval writes one) is what comes back
    path = stored(tmp_path)[0]
    data = json.loads(path.read_text())
    data.pop("checksum")
    spec = data["spec"]
    data["results"]["q2"] = [["pasta.md", 9.0]]
    path.write_text(kept_json(data))
    third = evaluate([spec], golden(), corpus=corpus(), workspace=tmp_path)
    assert [h.id for h in third.retrievers[0].questions[1].top] == ["pasta.md"]
    fresh = evaluate([spec], golden(), corpus=corpus(), workspace=tmp_path, cache=False)
    assert fresh.retrievers[0].questions[1].top[0].id == "branch.md" and fresh.notes == []


@pytest.mark.parametrize("change", ["question", "option", "depth", "corpus", "chunking"])
def test_any_change_to_what_a_run_depends_on_searches_again(tmp_path: Path, change: str) -> None:
    evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path)
    docs = corpus()
    kwargs: dict = {}
    if change == "corpus":
        docs = Corpus({**{d: Document(d, t) for d, t in DOCS.items()}, "new.md": Document("new.md", "put away")})
    card = evaluate(
        "bm25?k1=0.9" if change == "option" else "bm25",
        golden("put my changes aside") if change == "question" else golden(),
        corpus=docs, workspace=tmp_path, depth=50 if change == "depth" else 100,
        chunking="20:5" if change == "chunking" else None, **kwargs,
    )
    assert card.notes == [] and len(stored(tmp_path)) == 2


def test_a_cli_option_is_part_of_the_key(tmp_path: Path) -> None:
    evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path)
    card = evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path, options={"b": 0.3})
    assert card.notes == [] and len(stored(tmp_path)) == 2


def test_functions_and_run_files_are_never_kept(tmp_path: Path) -> None:
    def search(question: str, k: int) -> list[str]:
        return ["stash.md"]

    run_file = tmp_path / "run.txt"
    run_file.write_text("q1 Q0 stash.md 1 2.0 mine\nq2 Q0 branch.md 1 1.0 mine\n")
    for _ in range(2):
        card = evaluate([search, f"run:{run_file}"], golden(), corpus=corpus(), workspace=tmp_path)
        assert card.notes == []
    assert stored(tmp_path) == []


def test_a_run_with_a_failed_question_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeval.retrievers.bm25 import BM25Retriever

    search = BM25Retriever.search

    def flaky(self, queries, *, top_k):  # type: ignore[no-untyped-def]
        if any("branch" in q for q in queries.values()):
            raise TimeoutError("the index timed out")  # a transient failure: next time it may answer
        return search(self, queries, top_k=top_k)

    monkeypatch.setattr(BM25Retriever, "search", flaky)
    card = evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path)
    assert card.retrievers[0].questions[1].error == "TimeoutError: the index timed out"
    assert stored(tmp_path) == []
    monkeypatch.setattr(BM25Retriever, "search", search)
    again = evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path)
    assert again.retrievers[0].questions[1].error is None and again.notes == [] and len(stored(tmp_path)) == 1


def test_an_unreadable_kept_run_is_searched_again_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path)
    (path,) = stored(tmp_path)
    path.write_text('{"format": 1, "spec": "bm25", "results": {"q1": [[')  # cut off mid-write
    again = evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path)
    assert "is unreadable; searching again" in capsys.readouterr().err
    assert again.notes == [] and results(again) == results(first)
    assert json.loads(path.read_text())["spec"] == "bm25"  # written again, whole


def test_statistics_are_kept_and_read_back_the_same(tmp_path: Path) -> None:
    card = evaluate(["bm25", "bm25?k1=0.9"], golden(), corpus=corpus(), workspace=tmp_path)
    passages = corpus().passages()
    computed = compare(card, passages=passages, resamples=500)
    kept = compare(card, passages=passages, resamples=500, workspace=tmp_path)  # computed, then kept
    assert len(list((tmp_path / "stats").glob("*.json"))) == 1
    read = compare(card, passages=passages, resamples=500, workspace=tmp_path)
    assert scorecard_to_dict(read) == scorecard_to_dict(kept) == scorecard_to_dict(computed)
    # a kept file rewritten (with its checksum) is what comes back: it was read, not computed
    (path,) = (tmp_path / "stats").glob("*.json")
    data = json.loads(path.read_text())
    data.pop("checksum")
    data["statistics"]["seed"] = 99
    path.write_text(kept_json(data))
    assert compare(card, passages=passages, resamples=500, workspace=tmp_path).statistics.seed == 99  # type: ignore[union-attr]
    # another setting is another key
    other = compare(card, passages=passages, resamples=500, seed=1, workspace=tmp_path)
    assert other.statistics.seed == 1 and len(list((tmp_path / "stats").glob("*.json"))) == 2  # type: ignore[union-attr]


def test_eval_no_cache_searches_and_resamples_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(f"# {name}\n\n{text}\n")
    golden_file = tmp_path / "golden.jsonl"
    golden_file.write_text('{"id": "q1", "question": "put my changes away", "expected": ["stash.md"]}\n'
                           '{"id": "q2", "question": "delete a branch", "expected": ["branch.md"]}\n')
    args = ["eval", "--corpus", str(docs), "--golden", str(golden_file), "--workspace", str(tmp_path / "ws")]
    assert main(args) == 0
    first = capsys.readouterr()
    assert main(args) == 0
    second = capsys.readouterr()
    assert "building bm25" in first.err and "building bm25" not in second.err
    assert "bm25: stored run read from" in second.err and second.out == first.out
    assert main([*args, "--no-cache"]) == 0
    third = capsys.readouterr()
    assert "building bm25" in third.err and third.out == first.out


def test_a_run_or_statistics_that_cannot_be_kept_is_a_warning_not_a_failed_evaluation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "runs").write_text("a file where the folder of kept runs goes")
    (tmp_path / "stats").write_text("and one where the statistics go")
    card = evaluate("bm25", golden(), corpus=corpus(), workspace=tmp_path)
    compared = compare(card, passages=corpus().passages(), resamples=200, workspace=tmp_path)
    err = capsys.readouterr().err
    assert "warning: bm25: the run was not kept for next time" in err
    assert "warning: the statistics were not kept for next time" in err
    assert card.retrievers[0].questions[0].rank is not None and compared.statistics is not None


@pytest.mark.models
def test_a_stored_dense_run_says_again_what_its_build_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long = Corpus({**{d: Document(d, t) for d, t in DOCS.items()},
                   "long.md": Document("long.md", " ".join(f"word{i} stash changes" for i in range(400)))})
    evaluate("dense:minilm", golden(), corpus=long, workspace=tmp_path)
    first = capsys.readouterr().err
    card = evaluate("dense:minilm", golden(), corpus=long, workspace=tmp_path)
    second = capsys.readouterr().err
    line = next(x for x in first.splitlines() if "longer than the model's window" in x)
    assert line.startswith("goldeval: warning: dense:minilm: 1 of 4 passages are longer")
    assert line in second.splitlines() and card.notes  # read, not rebuilt, and the warning still said
