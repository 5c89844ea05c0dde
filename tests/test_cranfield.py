"""The Cranfield 1400 collection from ../shared/data/cranfield: documents, queries, judgments.

Expected values are read off the distributed files by hand (line numbers given), never computed by
the loader under test.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from goldeval.corpus import load_corpus
from goldeval.errors import InputError, InputErrors
from goldeval.golden.cranfield import load_cranfield_golden

CRANFIELD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"


def test_corpus_has_the_1400_documents_numbered_by_their_I_field() -> None:
    corpus = load_corpus(CRANFIELD)  # auto-detected by cran.all.1400
    assert len(corpus) == 1400
    assert list(corpus.documents)[:3] == ["1", "2", "3"]
    assert set(corpus.documents) == {str(i) for i in range(1, 1401)}
    doc = corpus.documents["1"]
    assert doc.title == "experimental investigation of the aerodynamics of a wing in a slipstream ."
    assert doc.text.startswith("experimental investigation of the aerodynamics of a\nwing in a slipstream .\n")
    assert doc.text.endswith("the specific configuration of the experiment .")
    # .W repeats the title; it must not be indexed twice
    assert doc.text.count("experimental investigation") == 1
    assert "brenckman" not in doc.text  # the .A field is not text


def test_stray_markers_inside_an_abstract_keep_the_text_after_them() -> None:
    docs = load_corpus(CRANFIELD).documents
    # cran.all.1400 lines 7322-7325: `.A` and `.B` marker lines in the middle of document 240's abstract
    assert "application to turbulent separations is made for a prandtl number of" in docs["240"].text
    assert "unity in low-speed flow without injection ." in docs["240"].text
    assert "\n.A\n" not in docs["240"].text and "\n.B\n" not in docs["240"].text
    # document 578 has a second `.W`
    assert "compressor operation with one or more blade rows stalled ." in docs["578"].text


def test_the_two_empty_documents_are_kept_with_a_warning() -> None:
    corpus = load_corpus(CRANFIELD)
    assert corpus.documents["471"].text == "" and corpus.documents["995"].text == ""
    assert corpus.warnings == [
        "2 documents have no text in the collection (471, 995); kept so that document numbers and counts "
        "match the judgments"
    ]


def test_225_queries_identified_by_position_not_by_I_number() -> None:
    golden = load_cranfield_golden(CRANFIELD)
    assert len(golden) == 225
    assert [q.id for q in golden] == [str(i) for i in range(1, 226)]
    third = golden["3"]  # cran.qry line 9: `.I 004`
    assert third.question == "what problems of heat conduction in composite slabs have been solved so far ."
    assert third.notes == "cran.qry .I 004"
    assert golden["225"].notes == "cran.qry .I 365"
    assert golden["225"].question == "what design factors can be used to control lift-drag ratios at mach numbers above 5 ."


def test_judgments_attach_to_query_positions() -> None:
    golden = load_cranfield_golden(CRANFIELD)
    # cranqrel lines 1-3: `1 184 2`, `1 29 2`, `1 31 2`; line 29: `1 486 -1`
    first = golden.grades("1")
    assert first["184"] == 3 and first["29"] == 3 and first["31"] == 3
    assert first["486"] == 0
    # cranqrel `3 5 3` .. `3 399 3`, `3 485 -1`: query 3 is cran.qry's `.I 004`
    assert golden.grades("3") == {"5": 2, "6": 2, "90": 2, "91": 2, "119": 2, "144": 2, "181": 2, "399": 2,
                                     "485": 0}
    # cranqrel `4 236 3`, `4 166 3`, `4 488 -1` belong to the 4th query (.I 008), not to `.I 004`
    fourth = golden["4"]
    assert fourth.notes == "cran.qry .I 008"
    assert fourth.question.startswith("can a criterion be developed to show empirically")
    assert golden.grades("4") == {"236": 2, "166": 2, "488": 0}
    # code 1 (complete answer) is the best grade: `2 12 1`; the last line: `225 1188 -1`
    assert golden.grades("2")["12"] == 4
    assert golden.grades("225")["1188"] == 0
    assert golden.qrels.is_judged("225", "1188") and not golden.qrels.is_judged("225", "1187")


def test_every_judgment_line_is_mapped_with_the_graded_scale() -> None:
    golden = load_cranfield_golden(CRANFIELD)
    grades = Counter(j.grade for j in golden.qrels)
    # cranqrel code counts: 1: 128, 2: 387, 3: 734, 4: 363, -1: 225 (1837 lines)
    assert grades == {4: 128, 3: 387, 2: 734, 1: 363, 0: 225}
    assert not golden.off_topic and golden.warnings == []
    corpus = load_corpus(CRANFIELD)
    assert all(j.doc_id in corpus for j in golden.qrels)


def test_bm25_runs_end_to_end_on_cranfield() -> None:
    from goldeval.retrievers.bm25 import BM25Retriever

    corpus = load_corpus(CRANFIELD)
    golden = load_cranfield_golden(CRANFIELD)
    run = BM25Retriever(corpus.passages()).search({q.id: q.question for q in golden}, top_k=10)
    assert len(run) == 225
    hits = sum(any(doc in golden.relevant(qid) for doc, _ in run.results[qid]) for qid in run)
    # BM25 finds a relevant abstract in the top 10 for most Cranfield queries (published P@10 ~ 0.3)
    assert hits / 225 > 0.7


def _mini(folder: Path, qrels: str) -> Path:
    folder.mkdir()
    (folder / "cran.all.1400").write_text(".I 1\n.T\nflow\n.A\nx\n.B\ny\n.W\nflow past a plate\n")
    (folder / "cran.qry").write_text(".I 001\n.W\nplate flow .\n.I 004\n.W\nshock waves .\n")
    (folder / "cranqrel").write_text(qrels)
    return folder


def test_qrels_line_naming_a_query_by_I_number_is_rejected(tmp_path: Path) -> None:
    folder = _mini(tmp_path / "cran", "1 1 2\n4 1 3\n")
    with pytest.raises(InputErrors, match=r"cranqrel:2: query 4 is not a position in cran\.qry \(1\.\.2\)"):
        load_cranfield_golden(folder)


def test_bad_qrels_lines_are_all_reported(tmp_path: Path) -> None:
    folder = _mini(tmp_path / "cran", "1 1 2\n1 x 2\n2 1 7\n")
    with pytest.raises(InputErrors, match=r"2 bad judgment lines") as err:
        load_cranfield_golden(folder)
    text = str(err.value)
    assert "cranqrel:2: expected three integers `query doc code`" in text
    assert "cranqrel:3: unknown relevance code 7" in text


def test_missing_cranfield_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"Cranfield folder not found"):
        load_cranfield_golden(tmp_path / "nope")
    (tmp_path / "cran.qry").write_text(".I 1\n.W\nq\n")
    with pytest.raises(InputError, match=r"cranqrel: file not found"):
        load_cranfield_golden(tmp_path)


def test_a_query_without_judgments_is_unjudged_and_dropped_with_a_warning(tmp_path: Path) -> None:
    golden = load_cranfield_golden(_mini(tmp_path / "cran", "2 1 2\n"))
    assert [(q.id, q.notes, q.intent) for q in golden] == [("2", "cran.qry .I 004", "answerable")]
    assert golden.grades("2") == {"1": 3}
    assert golden.warnings == ["1 query position(s) of cran.qry have no judgments in cranqrel and were dropped "
                               "(unjudged): 1"]


def test_text_before_first_record_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "cran"
    folder.mkdir()
    (folder / "cran.all.1400").write_text("junk\n.I 1\n.W\nx\n")
    with pytest.raises(InputError, match=r"cran\.all\.1400:1: text before the first `\.I` record"):
        load_corpus(folder)


def test_cranfield_golden_round_trips_through_golden_jsonl(tmp_path: Path) -> None:
    from goldeval.golden.io import load_golden, write_golden_jsonl

    golden = load_cranfield_golden(CRANFIELD)
    write_golden_jsonl(golden, tmp_path / "cranfield.jsonl")
    again = load_golden(tmp_path / "cranfield.jsonl", corpus=load_corpus(CRANFIELD))
    assert [(q.id, q.question, q.intent, q.notes) for q in again] == [
        (q.id, q.question, q.intent, q.notes) for q in golden]
    assert list(again.qrels) == list(golden.qrels)
    assert again.grades("4") == {"236": 2, "166": 2, "488": 0}
