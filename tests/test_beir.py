"""A BEIR dataset folder: corpus.jsonl through load_corpus, queries + qrels through load_beir_golden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.corpus import load_corpus
from goldeval.errors import InputError, InputErrors
from goldeval.golden.beir import load_beir_golden


def _beir(root: Path, *, test_qrels: str | None = None) -> Path:
    root.mkdir()
    docs = [
        {"_id": "d1", "title": "Stash", "text": "git stash puts changes aside", "metadata": {}},
        {"_id": "d2", "title": "", "text": "git switch changes branches"},
        {"_id": "d3", "title": "Rebase", "text": "git rebase rewrites history"},
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [
        {"_id": "q1", "text": "how do I put changes aside?"},
        {"_id": "q2", "text": "change   branch", "metadata": {"x": 1}},
        {"_id": "q3", "text": "rewrite history"},
    ]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        test_qrels if test_qrels is not None else "query-id\tcorpus-id\tscore\nq2\td2\t2\nq1\td1\t1\nq1\td2\t0\n"
    )
    (root / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td3\t1\n")
    return root


def test_load_corpus_reads_a_beir_folder(tmp_path: Path) -> None:
    corpus = load_corpus(_beir(tmp_path / "scifact"))
    assert list(corpus.documents) == ["d1", "d2", "d3"]
    assert corpus.documents["d1"].title == "Stash"
    assert corpus.documents["d3"].text == "git rebase rewrites history"
    assert corpus.name == "scifact"


def test_golden_takes_the_judged_queries_of_the_split_with_graded_relevance(tmp_path: Path) -> None:
    golden = load_beir_golden(_beir(tmp_path / "ds"))
    assert [q.id for q in golden] == ["q1", "q2"]  # queries.jsonl order; q3 is judged in dev only
    assert golden.grades("q1") == {"d1": 1, "d2": 0}  # the judged-non-relevant d2 is kept
    assert golden.relevant("q1") == {"d1": 1}
    assert golden.grades("q2") == {"d2": 2}
    assert [(q.intent, q.tags) for q in golden] == [("answerable", ("beir:test",))] * 2
    assert golden["q2"].question == "change branch"
    assert golden["q1"].line == 1
    dev = load_beir_golden(tmp_path / "ds", split="dev")
    assert [(q.id, dev.grades(q.id)) for q in dev] == [("q3", {"d3": 1})]
    assert golden.warnings == [] and dev.warnings == []


def test_regression_a_query_with_only_zero_scores_stays_answerable(tmp_path: Path) -> None:
    # issue 8: intent is never inferred from grades for an import; a 0 is "judged not relevant"
    golden = load_beir_golden(_beir(tmp_path / "ds", test_qrels="query-id\tcorpus-id\tscore\nq1\td1\t0\n"))
    assert not golden["q1"].off_topic and golden.off_topic == []
    assert golden.grades("q1") == {"d1": 0}
    (warning,) = golden.warnings
    assert warning.endswith("have judged documents but none relevant (kept as answerable; nothing relevant can "
                            "be found for them): `q1`")


def test_unknown_split_lists_the_available_ones(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no judgments for split 'train'\n  hint: available splits: dev, test"):
        load_beir_golden(_beir(tmp_path / "ds"), split="train")


def test_judged_query_missing_from_queries_is_an_error(tmp_path: Path) -> None:
    folder = _beir(tmp_path / "ds", test_qrels="query-id\tcorpus-id\tscore\nq9\td1\t1\n")
    with pytest.raises(InputError, match=r"1 judged queries are not in queries\.jsonl: 'q9'"):
        load_beir_golden(folder)


def test_bad_qrels_line_is_named(tmp_path: Path) -> None:
    folder = _beir(tmp_path / "ds", test_qrels="query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\thigh\n")
    with pytest.raises(InputErrors, match=r"test\.tsv:3: expected `query-id<TAB>corpus-id<TAB>score`"):
        load_beir_golden(folder)


def test_bad_queries_line_is_named(tmp_path: Path) -> None:
    folder = _beir(tmp_path / "ds")
    with (folder / "queries.jsonl").open("a") as handle:
        handle.write('{"_id": "q4"}\n')
    with pytest.raises(InputErrors, match=r"queries\.jsonl:4: a query needs a string `_id` and `text`"):
        load_beir_golden(folder)


def test_missing_beir_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"BEIR folder not found"):
        load_beir_golden(tmp_path / "nope")
