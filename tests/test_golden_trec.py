"""TREC golden sets: qrels and topics import, qrels/topics export, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeval.errors import InputError, InputErrors
from goldeval.golden import (
    GoldenSet,
    Qrels,
    Question,
    load_golden,
    load_trec_golden,
    load_trec_qrels,
    load_trec_topics,
    write_golden_jsonl,
    write_trec_qrels,
    write_trec_topics,
)

TREC_EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval"

SGML_TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>

<num> Number: 302
<title> Topic: Poliomyelitis and
Post-Polio

<desc> Description:
Is the disease of Poliomyelitis (polio) under control in the world?

</top>
<top>
<num> Number: 399
<title> Never judged
<desc> Description:
Nobody judged this one.
</top>
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_qrels_from_trec_eval_test_vectors() -> None:
    qrels = load_trec_qrels(TREC_EVAL / "qrels.test")
    # counts from `awk '{print $1, $4}' qrels.test | sort | uniq -c`
    assert {q: len(d) for q, d in qrels.items()} == {"301": 1708, "302": 1061, "303": 912}
    assert {q: sum(r > 0 for r in d.values()) for q, d in qrels.items()} == {"301": 474, "302": 77, "303": 10}
    assert qrels["301"]["CR93E-1282"] == 1
    assert qrels["301"]["CR93E-10279"] == 0


def test_qrels_keep_graded_and_negative_levels() -> None:
    qrels = load_trec_qrels(TREC_EVAL / "qrels.rel_level")
    grades = sorted(r for d in qrels.values() for r in d.values())
    # counts from `awk '{print $4}' qrels.rel_level | sort | uniq -c`
    assert [grades.count(g) for g in (-1, 0, 1, 2, 3, 4)] == [304, 2818, 462, 14, 77, 6]


def test_qrels_problems_are_all_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels", "1 0 d1 1\n1 0 d2\n1 0 d3 yes\n\n1 0 d1 2\n2 0 d1 1\n")
    with pytest.raises(InputErrors) as info:
        load_trec_qrels(path)
    assert [(p.line, p.reason) for p in info.value.problems] == [
        (2, "expected 4 fields `qid iter docno rel`, found 3"),
        (3, "relevance `yes` is not an integer"),
        (5, "`d1` is judged twice for topic `1` with different grades (1 and 2)"),
    ]


def test_a_run_file_is_not_qrels() -> None:
    with pytest.raises(InputErrors, match=r"results\.test:1: expected 4 fields `qid iter docno rel`, found 6"):
        load_trec_qrels(TREC_EVAL / "results.test")


def test_missing_qrels_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"qrels file not found"):
        load_trec_qrels(tmp_path / "nope")


def test_sgml_topics_title_and_desc(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.301-303", SGML_TOPICS)
    titles = load_trec_topics(path)
    assert titles == {
        "301": ("International Organized Crime", 1),
        "302": ("Poliomyelitis and Post-Polio", 13),
        "399": ("Never judged", 23),
    }
    descs = load_trec_topics(path, field="desc")
    assert descs["301"][0] == "Identify organizations that participate in international criminal activity."
    assert descs["302"][0] == "Is the disease of Poliomyelitis (polio) under control in the world?"


def test_xml_topics(tmp_path: Path) -> None:
    text = """<topics>
  <topic number="1" type="faceted">
    <query>obama family tree</query>
    <description>Find information on President Barack Obama&apos;s family history.</description>
  </topic>
  <topic number="2">
    <query>AT&amp;T phone plans</query>
    <description>Which plans?</description>
  </topic>
</topics>
"""
    path = write(tmp_path, "topics.xml", text)
    assert load_trec_topics(path) == {"1": ("obama family tree", 2), "2": ("AT&T phone plans", 6)}
    assert load_trec_topics(path, field="desc")["1"][0] == "Find information on President Barack Obama's family history."


def test_tsv_topics_and_their_problems(tmp_path: Path) -> None:
    good = write(tmp_path, "queries.tsv", "1\twhat is  a\tgolden set\n\n2\thow are you\n")
    assert load_trec_topics(good) == {"1": ("what is a golden set", 1), "2": ("how are you", 3)}
    bad = write(tmp_path, "bad.tsv", "1\tfine\n2 no tab here\n1\tagain\n3\t \n")
    with pytest.raises(InputErrors) as info:
        load_trec_topics(bad)
    assert [(p.line, p.reason) for p in info.value.problems] == [
        (2, "expected `qid<TAB>text`, found no tab"),
        (3, "duplicate topic number `1`: already used on line 1"),
        (4, "topic `3` has no title text"),
    ]


def test_unknown_topic_field() -> None:
    with pytest.raises(InputError, match=r"unknown topic field 'narr'"):
        load_trec_topics(TREC_EVAL / "qrels.test", field="narr")


def test_trec_golden_from_sgml_topics_drops_unjudged_with_a_warning(tmp_path: Path) -> None:
    topics = write(tmp_path, "topics", SGML_TOPICS)
    golden = load_trec_golden(TREC_EVAL / "qrels.test", topics)
    assert [(q.id, q.question, q.line) for q in golden] == [
        ("301", "International Organized Crime", 1),
        ("302", "Poliomyelitis and Post-Polio", 13),
    ]
    assert len(golden.grades("301")) == 1708  # judged-non-relevant documents are kept
    assert len(golden.relevant("302")) == 77
    assert golden.grades("301")["CR93E-10279"] == 0
    assert [q.intent for q in golden] == ["answerable", "answerable"]
    assert len(golden.warnings) == 2
    assert "1 topic(s) of" in golden.warnings[0] and "unjudged in TREC terms): `399`" in golden.warnings[0]
    assert "missing from" in golden.warnings[1] and "`303`" in golden.warnings[1]


def test_regression_a_topic_judged_with_nothing_relevant_stays_answerable(tmp_path: Path) -> None:
    # issue 8: such a topic used to become an off-topic question and feed the threshold analysis
    qrels = write(tmp_path, "qrels", "1 0 a 2\n1 0 b 0\n2 0 a 0\n2 0 c -1\n")
    topics = write(tmp_path, "topics.tsv", "1\tgraded one\n2\tnothing relevant\n")
    golden = load_trec_golden(qrels, topics)
    assert golden.grades("1") == {"a": 2, "b": 0}
    assert golden.off_topic == []
    assert golden["2"].intent == "answerable"
    assert golden.grades("2") == {"a": 0, "c": -1} and golden.relevant("2") == {}
    assert golden.warnings == [f"1 answerable question(s) of {qrels} have judged documents but none relevant "
                               "(kept as answerable; nothing relevant can be found for them): `2`"]


def test_no_common_topic_ids(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", "q1 0 a 1\n")
    topics = write(tmp_path, "topics.tsv", "1\tone\n")
    with pytest.raises(InputError, match=r"no topic of the topics file has judgments.*\n  hint: topic ids look like `1`; "
                                         r"qrels topic ids look like `q1`"):
        load_trec_golden(qrels, topics)


def test_export_qrels_writes_every_judgment_grade_0_included_and_leaves_off_topic_questions_out(tmp_path: Path) -> None:
    # regression (issue 18): off-topic `c`'s grade-0 judgment became a TREC topic that scored 0 in trec_eval
    golden = GoldenSet([Question("a", "q?"), Question("b", "off?", "off_topic"), Question("c", "off too", "off_topic")],
                       Qrels.from_grades({"a": {"x.md": 1, "y.md#2": 3, "z.md": 0}, "c": {"w.md": 0}}))
    out = tmp_path / "out.qrels"
    assert write_trec_qrels(golden, out) == ["b", "c"]
    assert out.read_text(encoding="utf-8") == "a 0 x.md 1\na 0 y.md#2 3\na 0 z.md 0\n"


def test_export_refuses_ids_with_whitespace(tmp_path: Path) -> None:
    golden = GoldenSet([Question("my q", "q?")], Qrels.from_grades({"my q": {"a b.md": 1}}), path="g.jsonl")
    with pytest.raises(InputErrors, match=r"(?s)cannot write .*2 id\(s\) not TREC-safe.*'my q'.*'a b.md'"):
        write_trec_qrels(golden, tmp_path / "out.qrels")
    assert not (tmp_path / "out.qrels").exists()


def test_round_trip_jsonl_to_qrels_and_back(tmp_path: Path) -> None:
    source = write(tmp_path, "golden.jsonl", "\n".join([
        '{"id": "q1", "question": "How do I\\tstash   changes?", "expected": ["git/stash.md", "git/wip.md#1"]}',
        '{"id": "q2", "question": "Undo a commit", "expected": {"git/reset.md": 2, "git/revert.md": 1, "git/log.md": 0}}',
        '{"id": "q3", "question": "Weather in Paris?", "expected": []}',
    ]) + "\n")
    golden = load_golden(source)
    write_trec_qrels(golden, tmp_path / "qrels")
    write_trec_topics(golden, tmp_path / "topics.tsv")
    back = load_trec_golden(tmp_path / "qrels", tmp_path / "topics.tsv")
    assert [(q.id, q.question, back.grades(q.id)) for q in back] == [
        ("q1", "How do I stash changes?", {"git/stash.md": 1, "git/wip.md#1": 1}),
        ("q2", "Undo a commit", {"git/reset.md": 2, "git/revert.md": 1, "git/log.md": 0}),
    ]
    assert "`q3`" in back.warnings[0]  # off-topic questions have no qrels line: dropped, with a warning
    write_golden_jsonl(back, tmp_path / "again.jsonl")
    again = load_golden(tmp_path / "again.jsonl")
    assert again.qrels.to_dict() == {"q1": golden.grades("q1"), "q2": golden.grades("q2")}


def test_a_topic_with_nothing_relevant_round_trips_through_jsonl_as_answerable(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", "1 0 a 1\n2 0 a 0\n")
    golden = load_trec_golden(qrels, write(tmp_path, "topics.tsv", "1\tone\n2\tnothing relevant\n"))
    write_golden_jsonl(golden, tmp_path / "g.jsonl")
    lines = (tmp_path / "g.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    assert lines[1] == '{"id": "2", "question": "nothing relevant", "intent": "answerable", "expected": {"a": 0}}'
    again = load_golden(tmp_path / "g.jsonl")
    assert again["2"].intent == "answerable" and again.grades("2") == {"a": 0}
    assert len(again.warnings) == 1 and again.warnings[0].endswith("nothing relevant can be found for them): `2`")
