"""`evaluate`'s one settings object and the golden set that arrives whole (issue 22).

`EvalSettings` is what `evaluate`'s keywords, `goldeval eval` and the sweep share: the keywords and the
object give the same scorecard, and giving both is refused. A golden set loaded by `load_golden` carries
its changelog summary, so the evaluation does not read the set's files again by path after scoring.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import goldeval
import goldeval.evaluation.assembling as assembling
from goldeval import EvalSettings, GoldenSet

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"


def per_question(card: goldeval.Scorecard) -> dict[str, dict[str, float]]:
    return {q.id: {str(m): v for m, v in q.metrics.items()} for q in card.retrievers[0].questions}


def test_settings_object_gives_what_the_keywords_give(tmp_path: Path) -> None:
    corpus = goldeval.load_corpus(DATA / "corpus")
    golden = GoldenSet.load(DATA / "golden_example.jsonl", corpus=corpus)
    by_keywords = goldeval.evaluate("bm25", golden, corpus=corpus, k=(1, 3), depth=20, metrics=["mrr", "hit@3"],
                                    workspace=tmp_path, cache=False)  # fmt: skip
    settings = EvalSettings(k=(1, 3), depth=20, metrics=["mrr", "hit@3"], workspace=tmp_path, cache=False)
    by_object = goldeval.evaluate("bm25", golden, corpus=corpus, settings=settings)
    assert per_question(by_object) == per_question(by_keywords)
    assert [str(m) for m in by_object.metrics] == ["mrr", "hit@3"] and by_object.depth == 20 and by_object.k == [1, 3]
    assert any(v["hit@3"] == 1.0 for v in per_question(by_object).values())  # bm25 finds some: not all zeros
    with pytest.raises(AttributeError):
        settings.depth = 5  # type: ignore[misc]  # frozen
    with pytest.raises(TypeError, match="not both"):
        goldeval.evaluate("bm25", golden, corpus=corpus, depth=10, settings=settings)


def test_a_loaded_set_brings_its_changelog_and_evaluate_reads_no_file_for_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"question {i}", "expected": [f"d{i}"]})
                              for i in range(3)) + "\n")
    golden = GoldenSet.load(path)
    assert golden.changelog == {}  # read with the set: it has no changelog

    def no_reading(*_: object) -> dict[str, object]:
        raise AssertionError("the changelog was read again by path after scoring")

    monkeypatch.setattr(assembling, "golden_changes", no_reading)
    card = goldeval.evaluate(lambda question, k: [f"d{question.split()[-1]}"], golden, workspace=tmp_path)
    assert card.golden["n_questions"] == 3 and "changes" not in card.golden
    assert all(q.rank == 1 for q in card.retrievers[0].questions)
    made_in_code = GoldenSet(golden.questions, golden.qrels, path=str(path))  # no changelog read: read here
    with pytest.raises(AssertionError, match="read again by path"):
        goldeval.evaluate(lambda question, k: [], made_in_code, workspace=tmp_path)
