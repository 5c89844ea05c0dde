"""The golden-set fields of issue 8: intent, provenance and judgments, beside 0.1's expected and source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.errors import InputError, InputErrors
from goldeval.golden import (
    GoldenSet,
    Judgment,
    Provenance,
    Qrels,
    Question,
    load_golden,
    question_record,
    write_golden_jsonl,
)


def write(tmp_path: Path, *lines: str, name: str = "golden.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def only_problem(path: Path) -> InputError:
    with pytest.raises(InputErrors) as info:
        load_golden(path)
    (problem,) = info.value.problems
    return problem


# --- 0.1 files ------------------------------------------------------------------------------------

V01 = [
    '{"_notes": "written for goldset 0.1"}',
    '{"id": "q1", "question": "put my changes aside", "expected": ["git/stash.md"], "tags": ["stash"]}',
    '{"id": "q2", "question": "undo a commit", "expected": {"git/reset.md": 2, "git/revert.md": 1, "git/log.md": 0}}',
    '{"id": "q3", "question": "see what I stashed", "expected": ["git/stash.md#2"], "source": "synthetic", '
    '"notes": "generated"}',
    '{"id": "o1", "question": "weather in Paris?", "expected": []}',
    '{"id": "o2", "question": "judged, nothing relevant", "expected": {"git/log.md": 0}}',
]


def test_a_0_1_file_loads_as_0_1_read_it(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, *V01))
    assert golden.notes == "written for goldset 0.1"
    assert golden.questions == [
        Question("q1", "put my changes aside", "answerable", ("stash",), Provenance("hand"), "", 2),
        Question("q2", "undo a commit", "answerable", (), Provenance("hand"), "", 3),
        Question("q3", "see what I stashed", "answerable", (), Provenance("synthetic"), "generated", 4),
        Question("o1", "weather in Paris?", "off_topic", (), Provenance("hand"), "", 5),
        Question("o2", "judged, nothing relevant", "off_topic", (), Provenance("hand"), "", 6),
    ]
    assert golden.qrels.to_dict() == {
        "q1": {"git/stash.md": 1},
        "q2": {"git/reset.md": 2, "git/revert.md": 1, "git/log.md": 0},
        "q3": {"git/stash.md#2": 1},
        "o2": {"git/log.md": 0},
    }
    assert [j.judge for j in golden.qrels] == [""] * 6
    assert golden.warnings == []


def test_a_0_1_file_is_written_back_line_for_line(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    write_golden_jsonl(load_golden(write(tmp_path, *V01)), out)
    assert out.read_text(encoding="utf-8").splitlines() == V01


# --- intent -----------------------------------------------------------------------------------------


def test_explicit_intent_needs_no_expected_field(tmp_path: Path) -> None:
    golden = load_golden(write(
        tmp_path,
        '{"id": "o1", "question": "best pizza in town?", "intent": "off_topic"}',
        '{"id": "a1", "question": "undo a commit", "intent": "answerable", "expected": ["git/reset.md"]}',
        '{"id": "o2", "question": "judged, none relevant", "intent": "off_topic", "expected": {"git/log.md": 0}}',
    ))
    assert [(q.id, q.intent) for q in golden] == [("o1", "off_topic"), ("a1", "answerable"), ("o2", "off_topic")]
    assert [q.id for q in golden.off_topic] == ["o1", "o2"]
    assert golden.grades("o1") == {} and golden.grades("o2") == {"git/log.md": 0}


def test_explicit_answerable_with_only_non_relevant_judgments_loads_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "t1", "question": "a pooled topic", "intent": "answerable", '
                           '"expected": {"a.md": 0, "b.md": -1}}')
    golden = load_golden(path)
    assert golden["t1"].intent == "answerable" and golden.relevant("t1") == {}
    assert golden.grades("t1") == {"a.md": 0, "b.md": -1}
    assert golden.warnings == [f"1 answerable question(s) of {path} have judged documents but none relevant "
                               "(kept as answerable; nothing relevant can be found for them): `t1`"]


def test_off_topic_with_a_relevant_judgment_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "o1", "question": "weather?", "intent": "off_topic", "expected": ["a.md", "b.md"]}')
    problem = only_problem(path)
    assert str(problem).splitlines()[0] == (
        f"{path}:1: question `o1`: intent is off_topic but `a.md` is judged relevant (grade 1) (and 1 more)")
    assert problem.value == "a.md"
    assert problem.hint == ('an off-topic question has no relevant document: give these ids grade 0, or drop '
                            '"intent": "off_topic" if the corpus does answer it')


def test_answerable_without_any_judgment_is_an_error(tmp_path: Path) -> None:
    problem = only_problem(write(tmp_path, '{"id": "a1", "question": "undo?", "intent": "answerable", "expected": []}'))
    assert problem.line == 1 and problem.value == "answerable"
    assert problem.reason == "question `a1`: intent is answerable but no document is judged for it"
    assert 'or write "intent": "off_topic"' in str(problem.hint)


def test_an_unknown_intent_suggests_the_spelling(tmp_path: Path) -> None:
    problem = only_problem(write(tmp_path, '{"id": "o1", "question": "weather?", "intent": "off-topic"}'))
    assert problem.reason == 'question `o1`: unknown intent "off-topic"'
    assert str(problem.hint).startswith("did you mean `off_topic`?")


def test_write_adds_intent_only_where_the_reader_would_not_infer_it() -> None:
    off = question_record(Question("o", "q?", "off_topic"), [Judgment("o", "a.md", 0)])
    odd = question_record(Question("t", "q?", "answerable"), [Judgment("t", "a.md", 0)])
    assert off == {"id": "o", "question": "q?", "expected": {"a.md": 0}}
    assert odd == {"id": "t", "question": "q?", "intent": "answerable", "expected": {"a.md": 0}}


# --- grades ---------------------------------------------------------------------------------------


def test_grade_0_is_judged_not_relevant_and_differs_from_unjudged(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, '{"id": "q", "question": "q?", "expected": {"a.md": 2, "b.md": 0}}'))
    assert golden.grades("q") == {"a.md": 2, "b.md": 0}
    assert golden.relevant("q") == {"a.md": 2}
    assert golden.qrels.is_judged("q", "b.md")
    assert not golden.qrels.is_judged("q", "c.md") and "c.md" not in golden.grades("q")


# --- provenance ---------------------------------------------------------------------------------------

SYNTHETIC = {
    "kind": "synthetic", "generator": "openai", "model": "gpt-4o-mini-2024-07-18", "temperature": 0.7,
    "prompt_hash": "sha256:9f2c41d0", "source_passage": "git/stash.md#2", "source_offsets": [120, 388],
    "created": "2026-11-02T09:14:00Z", "history": [{"at": "2026-11-03", "by": "ann", "did": "edited"}],
}


def test_synthetic_provenance_round_trips(tmp_path: Path) -> None:
    line = json.dumps({"id": "s1", "question": "see what I stashed", "expected": ["git/stash.md"],
                       "provenance": SYNTHETIC})
    golden = load_golden(write(tmp_path, line))
    q = golden["s1"]
    assert q.source == "synthetic" and q.provenance.kind == "synthetic"
    assert dict(q.provenance.details) == {k: v for k, v in SYNTHETIC.items() if k != "kind"}
    out = tmp_path / "out.jsonl"
    write_golden_jsonl(golden, out)
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(line)
    assert load_golden(out)["s1"] == q


def test_source_is_a_shorthand_for_the_provenance_kind(tmp_path: Path) -> None:
    golden = load_golden(write(
        tmp_path,
        '{"id": "a", "question": "q?", "expected": ["x"], "source": "log", "provenance": {"log": "queries.log", "count": 41}}',
        '{"id": "b", "question": "q?", "expected": ["x"], "source": "incident"}',
        '{"id": "c", "question": "q?", "expected": ["x"], "source": "synthetic", "provenance": {"kind": "synthetic"}}',
    ))
    assert [q.provenance for q in golden] == [
        Provenance("log", {"log": "queries.log", "count": 41}), Provenance("incident"), Provenance("synthetic")]


def test_source_and_provenance_kind_that_disagree_are_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "a", "question": "q?", "expected": ["x"], "source": "hand", '
                           '"provenance": {"kind": "synthetic", "model": "m"}}')
    problem = only_problem(path)
    assert str(problem).splitlines()[0] == (
        f'{path}:1: question `a`: `source` is "hand" but `provenance.kind` is "synthetic"')
    assert problem.value == "hand"
    assert problem.hint == "they say the same thing: keep `provenance` and drop `source`, or make them agree"


@pytest.mark.parametrize(("provenance", "reason", "hint"), [
    ('"synthetic"', "question `a`: `provenance` must be an object with a `kind`, found string", 'e.g. "provenance": {'),
    ('{"model": "m"}', "question `a`: `provenance` has no `kind`", 'add "kind": "hand", "synthetic"'),
    ('{"kind": "synthetc"}', "question `a`: unknown provenance kind 'synthetc'", "did you mean `synthetic`?"),
])
def test_bad_provenance(tmp_path: Path, provenance: str, reason: str, hint: str) -> None:
    problem = only_problem(write(tmp_path, f'{{"id": "a", "question": "q?", "expected": ["x"], "provenance": {provenance}}}'))
    assert problem.reason == reason and str(problem.hint).startswith(hint)


def test_unknown_top_level_fields_are_still_refused(tmp_path: Path) -> None:
    problem = only_problem(write(tmp_path, '{"id": "a", "question": "q?", "expected": ["x"], "judgements": []}'))
    assert problem.reason == "unknown field `judgements`"
    assert str(problem.hint).startswith("did you mean `judgments`?")


# --- judgments --------------------------------------------------------------------------------------


def test_judgments_with_judge_and_time_merge_with_expected(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, json.dumps({
        "id": "q", "question": "undo a commit", "expected": ["git/reset.md", "git/revert.md"],
        "judgments": [
            {"doc": "git/revert.md", "grade": 1, "judge": "ann", "at": "2026-11-03"},
            {"doc": "git/log.md", "grade": 0, "judge": "pool:bm25+dense", "at": "2026-11-04T10:00:00Z",
             "note": "lists commits, does not undo them"},
        ],
    })))
    assert list(golden.qrels) == [
        Judgment("q", "git/reset.md", 1),
        Judgment("q", "git/revert.md", 1, "ann", "2026-11-03"),
        Judgment("q", "git/log.md", 0, "pool:bm25+dense", "2026-11-04T10:00:00Z", "lists commits, does not undo them"),
    ]
    assert golden["q"].intent == "answerable"


def test_judgments_alone_make_a_question(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, '{"id": "q", "question": "q?", "judgments": [{"doc": 7, "grade": 2}]}'))
    assert golden.grades("q") == {"7": 2} and golden["q"].intent == "answerable"


def test_judgments_round_trip_and_plain_ones_go_to_expected(tmp_path: Path) -> None:
    judged = [Judgment("q", "a.md", 2), Judgment("q", "b.md", 0, "ann", "2026-11-03"), Judgment("q", "c.md", 1)]
    golden = GoldenSet([Question("q", "q?")], Qrels(judged))
    out = tmp_path / "out.jsonl"
    write_golden_jsonl(golden, out)
    assert json.loads(out.read_text(encoding="utf-8")) == {
        "id": "q", "question": "q?", "expected": {"a.md": 2, "c.md": 1},
        "judgments": [{"doc": "b.md", "grade": 0, "judge": "ann", "at": "2026-11-03"}],
    }
    assert sorted(load_golden(out).qrels, key=lambda j: j.doc_id) == judged


def test_a_grade_that_disagrees_with_expected_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "q", "question": "q?", "expected": ["a.md"], '
                           '"judgments": [{"doc": "a.md", "grade": 2, "judge": "ann"}]}')
    problem = only_problem(path)
    assert str(problem).splitlines()[0] == f"{path}:1: question `q`: `a.md` has grade 1 in `expected` but 2 in `judgments`"
    assert problem.value == "a.md"
    assert problem.hint == ("give it one grade: drop it from `expected` (the judgment says who judged it) or make "
                            "the two grades agree")


def test_a_document_judged_twice_with_different_grades_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "q", "question": "q?", "expected": ["a.md"], "judgments": '
                           '[{"doc": "b.md", "grade": 1, "judge": "ann"}, {"doc": "b.md", "grade": 0, "judge": "bob"}]}')
    problem = only_problem(path)
    assert str(problem).splitlines()[0] == (
        f"{path}:1: question `q`: `b.md` is judged twice in `judgments`, with grades 1 and 0")
    assert str(problem.hint).startswith("keep one judgment per document")


def test_every_bad_judgment_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"id": "q", "question": "q?", "judgments": [
        {"doc": "a.md", "relevance": 1},
        {"grade": 1},
        {"doc": "c.md", "grade": True, "at": "yesterday"},
        "d.md",
    ]}))
    with pytest.raises(InputErrors) as info:
        load_golden(path)
    assert [(p.line, p.reason) for p in info.value.problems] == [
        (1, "question `q`: judgment 1: unknown field `relevance`"),
        (1, "question `q`: judgment 1: `grade` must be an integer, found none"),
        (1, "question `q`: judgment 2: `doc` must be a non-empty doc or chunk id"),
        (1, "question `q`: judgment 3: `grade` must be an integer, found true"),
        (1, "question `q`: judgment 3: `at` is not an ISO 8601 date or time"),
        (1, "question `q`: judgment 4: expected an object, found string"),
    ]
    assert str(info.value.problems[0].hint).startswith("did you mean `grade`?")


def test_judged_ids_are_checked_against_the_corpus_grade_0_too(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "q", "question": "q?", "expected": ["git/stash.md"], '
                           '"judgments": [{"doc": "git/lgo.md", "grade": 0, "judge": "ann"}]}')
    with pytest.raises(InputErrors) as info:
        load_golden(path, corpus={"git/stash.md", "git/log.md"})
    (problem,) = info.value.problems
    assert problem.reason == "question `q`: expected id `git/lgo.md` is not in the corpus; did you mean `git/log.md`?"


# --- one home for "is this question off-topic" (issue 18, item 7) ---------------------------------

RULE_CASES = [
    # (record, intent the reader gives it, whether the writer states it)
    ('{"id": "n1", "question": "q", "expected": []}', "off_topic", False),
    ('{"id": "n2", "question": "q", "expected": {"d": 0}}', "off_topic", False),
    ('{"id": "n3", "question": "q", "expected": {"d": 2, "e": 0}}', "answerable", False),
    ('{"id": "n4", "question": "q", "intent": "answerable", "expected": {"d": 0}}', "answerable", True),
    ('{"id": "n5", "question": "q", "intent": "off_topic", "expected": []}', "off_topic", False),
    ('{"id": "n6", "question": "q", "intent": "answerable", "expected": ["d"]}', "answerable", False),
]


@pytest.mark.parametrize(("record", "intent", "stated"), RULE_CASES)
def test_reader_writer_and_fingerprint_read_intent_by_one_rule(
        tmp_path: Path, record: str, intent: str, stated: bool) -> None:
    golden = load_golden(write(tmp_path, record))
    (q,) = golden
    assert q.intent == intent
    written = question_record(q, golden.qrels.judgments(q.id))
    assert ("intent" in written) is stated
    # the same question with its intent written out, or left for the reader: one fingerprint
    explicit = {**json.loads(record), "intent": intent}
    assert load_golden(write(tmp_path, json.dumps(explicit), name="b.jsonl")).fingerprint() == golden.fingerprint()


def test_the_intent_is_in_the_fingerprint_exactly_when_it_differs_from_the_implied_one(tmp_path: Path) -> None:
    implied = load_golden(write(tmp_path, '{"id": "n", "question": "q", "expected": {"d": 0}}'))
    stated = load_golden(write(tmp_path, '{"id": "n", "question": "q", "intent": "answerable", "expected": {"d": 0}}',
                               name="b.jsonl"))
    assert implied.fingerprint() != stated.fingerprint()


def test_the_fingerprint_of_a_0_1_file_is_the_one_0_1_results_recorded(tmp_path: Path) -> None:
    # the value goldeval computed before the intent rule had one home (commit e0c56a6): results and
    # version sidecars that recorded it must still match
    extra = '{"id": "a9", "question": "answerable judged none", "intent": "answerable", "expected": {"git/log.md": 0}}'
    golden = load_golden(write(tmp_path, *V01, extra))
    assert golden.fingerprint() == "73cd870079dcba6ef3f376034b1f28170f35374e255e77a942fbf164873239f2"
