"""The common golden-set record read in one pass (`golden.plain`, issue 23) gives what `parse_record` gives, or
leaves the record to it: never a record `parse_record` would refuse, never another question or grade."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from goldeval.errors import InputErrors
from goldeval.golden import Qrels, load_golden, plain
from goldeval.golden import io as golden_io
from goldeval.golden.plain import read_plain
from goldeval.golden.records import parse_record

PATH = Path("golden.jsonl")

TAKEN = [  # the common shapes: read by `read_plain`
    '{"id": "q1", "question": "How do I undo a commit?", "expected": ["git/reset.md"]}',
    '{"id": 7, "question": "q?", "expected": {"a": 2, "b": 0, "c": 1}}',
    '{"id": "q2", "question": "q?", "expected": {"a": 1}, "judgments": [{"doc": "x", "grade": 0}, {"doc": "y", "grade": 0}]}',
    '{"id": "q3", "question": "q?", "judgments": [{"doc": "x", "grade": 2}]}',
    '{"id": "q4", "question": "off?", "expected": []}',
    '{"id": "q5", "question": "off?", "expected": {"a": 0}, "intent": "off_topic"}',
    '{"id": "q6", "question": "q?", "expected": ["a"], "intent": "answerable", "tags": ["x", "y"], "source": "log", "notes": "n"}',
    '{"id": "q7", "question": "q?", "expected": ["a"], "_mine": 3, "_also": "text"}',
    '{"id": "q8", "question": "q?", "expected": {"a": 1}, "judgments": [{"grade": 1, "doc": "a"}]}',
    '{"id": "q9", "question": "q?", "expected": ["a"], "judgments": [{"doc": "b", "grade": 1}, {"doc": "b", "grade": 1}]}',
    '{"id":"q10","question":"no spaces","expected":{"a":3}}',
    '{"id": "q11", "question": "Ünïcödé ✓", "expected": ["döc/ü"], "tags": []}',
    '{"id": "q12", "question": "q?", "expected": ["a"], "source": "hand", "notes": ""}',
    '{"id": "q13", "question": "What is 10:30?", "expected": ["http://x/a"], "tags": ["a:b"]}',  # colons in texts
    '{"id": "q15", "question": "q?", "expected": ["a"], "_x": {"k": 1}}',  # an object of the user's own
    '{"id": "q:14", "question": "q?", "expected": {"u:rn": 1}, "_own": {"k:": [1, {"x": "y:"}]}}',
]

LEFT = [  # anything else: left to `parse_record` (a problem to report, or a shape read the general way)
    '{"id": "q", "question": "q?", "expected": ["a"], "id": "q2"}',  # a key given twice
    '{"id": "q", "question": "q?", "expected": {"a": 1, "a": 2}}',
    '{"id": "q", "question": "q?", "judgments": [{"doc": "a", "doc": "b", "grade": 1}]}',
    '{"id": "q", "question": "What is 10:30\\u0021", "expected": ["a"]}',  # a colon, and an escape
    '{"id": "q", "question": "What is 10:30?", "expected": ["a"], "id": "r"}',
    '{"id": "q", "question": "q?", "expected": ["a"], "_x": {"k": 1, "k": 2}}',
    '{"id": "", "question": "q?", "expected": ["a"]}',
    '{"id": "  ", "question": "q?", "expected": ["a"]}',
    '{"id": true, "question": "q?", "expected": ["a"]}',
    '{"id": 1.5, "question": "q?", "expected": ["a"]}',
    '{"question": "q?", "expected": ["a"]}',
    '{"id": "q", "question": "", "expected": ["a"]}',
    '{"id": "q", "question": " ", "expected": ["a"]}',
    '{"id": "q", "question": 3, "expected": ["a"]}',
    '{"id": "q", "expected": ["a"]}',
    '{"id": "q", "question": "q?"}',
    '{"id": "q", "question": "q?", "intent": "off_topic"}',
    '{"id": "q", "question": "q?", "expected": ["a", "a"]}',
    '{"id": "q", "question": "q?", "expected": ["a", ""]}',
    '{"id": "q", "question": "q?", "expected": ["a", 3]}',
    '{"id": "q", "question": "q?", "expected": "a"}',
    '{"id": "q", "question": "q?", "expected": null, "judgments": [{"doc": "a", "grade": 1}]}',
    '{"id": "q", "question": "q?", "expected": ["a"], "judgments": null}',
    '{"id": "q", "question": "q?", "expected": null}',
    '{"id": "q", "question": "q?", "expected": {"a": true}}',
    '{"id": "q", "question": "q?", "expected": {"a": 1.0}}',
    '{"id": "q", "question": "q?", "expected": {"": 1}}',
    '{"id": "q", "question": "q?", "expected": {"a": 1}, "judgments": [{"doc": "a", "grade": 2}]}',
    '{"id": "q", "question": "q?", "judgments": [{"doc": "a", "grade": 1}, {"doc": "a", "grade": 2}]}',
    '{"id": "q", "question": "q?", "judgments": [{"doc": "a", "grade": 1, "judge": "ann"}]}',
    '{"id": "q", "question": "q?", "judgments": [{"doc": "", "grade": 1}]}',
    '{"id": "q", "question": "q?", "judgments": [{"doc": 3, "grade": 1}]}',
    '{"id": "q", "question": "q?", "judgments": [{"doc": "a", "grade": false}]}',
    '{"id": "q", "question": "q?", "judgments": [{"doc": "a"}]}',
    '{"id": "q", "question": "q?", "judgments": ["a"]}',
    '{"id": "q", "question": "q?", "judgments": {"doc": "a", "grade": 1}}',
    '{"id": "q", "question": "q?", "expected": ["a"], "intent": "off_topic"}',
    '{"id": "q", "question": "q?", "expected": [], "intent": "answerable"}',
    '{"id": "q", "question": "q?", "expected": ["a"], "intent": "offtopic"}',
    '{"id": "q", "question": "q?", "expected": ["a"], "tags": "x"}',
    '{"id": "q", "question": "q?", "expected": ["a"], "tags": ["x", 1]}',
    '{"id": "q", "question": "q?", "expected": ["a"], "source": "human"}',
    '{"id": "q", "question": "q?", "expected": ["a"], "source": 3}',
    '{"id": "q", "question": "q?", "expected": ["a"], "provenance": {"kind": "log"}}',
    '{"id": "q", "question": "q?", "expected": ["a"], "notes": 3}',
    '{"id": "q", "question": "q?", "expected": ["a"], "query": "other"}',
    '{"id": "q", "question": "q?", "expected": ["a"], "_id": "alias"}',
    '{"_notes": "a header"}',
    '["a list"]',
    '"text"',
    ' {"id": "q", "question": "q?", "expected": ["a"]}',
    '{"id": "q", "question": "q?", "expected": ["a"]} ',
    '{"id": "q", "question": "q?", "expected": ["a"]} {}',
    '{"id": "q", "question": "q?", "expected": ["a"]',
    '{"id": "q", "question": "q?", "expected": [NaN]}',
    '\ufeff{"id": "q", "question": "q?", "expected": ["a"]}',
]


def general(line: str, number: int = 3) -> tuple[object, dict[str, int]] | None:
    """What `parse_record` makes of the line (decoded as the reader decodes any record): its question and
    grades when it finds no problem and every judgment is a bare grade; None otherwise."""
    try:
        obj = golden_io._DECODER.decode(line)
    except ValueError:
        return None
    parsed = parse_record(obj, PATH, number)
    if parsed.problems or parsed.question is None or any(j.judge or j.at or j.note for j in parsed.judgments):
        return None
    return parsed.question, {j.doc_id: j.grade for j in parsed.judgments}


@pytest.fixture(autouse=True, params=[pytest.param("orjson", marks=pytest.mark.fast), "scanner"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here twice: records decoded by orjson (the `fast` extra), and by the json module's scanner."""
    if request.param == "orjson":
        assert plain._LOADS is not None
    else:
        monkeypatch.setattr(plain, "_LOADS", None)
    return str(request.param)


@pytest.mark.parametrize("line", TAKEN)
def test_a_common_record_is_read_as_parse_record_reads_it(line: str) -> None:
    read = read_plain(line, 3)
    assert read is not None
    expected = general(line)
    assert expected is not None
    assert read == expected
    assert list(read[1].items()) == list(expected[1].items())  # the judgments' order too


@pytest.mark.parametrize("line", LEFT)
def test_any_other_record_is_left_to_parse_record(line: str) -> None:
    assert read_plain(line, 3) is None


def test_records_of_random_shapes_are_read_as_parse_record_reads_them_or_left_to_it() -> None:
    rng = random.Random(23)
    values = ["a", "b", "a:b", "", " ", 1, 0, -1, 2.5, True, None, "ü", "x#1", [], {}, ["a"], {"a": 1}]
    keys = ["id", "question", "expected", "judgments", "tags", "source", "notes", "intent", "_own", "qid", "doc"]
    taken = good = 0
    for _ in range(3000):
        record: dict[str, object] = {"id": rng.choice(["q1", 5, "", "q:2"]), "question": rng.choice(["q?", "", "a: b"])}
        for key in rng.sample(keys, rng.randint(0, 4)):
            record[key] = rng.choice(values)
        if rng.random() < 0.6:
            record["expected"] = rng.choice([["a", "b"], ["a", "a"], {"a": 2, "b": 0}, {"a": True}, [], ["a", 1]])
        if rng.random() < 0.4:
            record["judgments"] = [{"doc": rng.choice(["a", "c", "", 1]), "grade": rng.choice([0, 1, 2, False, 1.0])}
                                   for _ in range(rng.randint(0, 3))]  # fmt: skip
        line = json.dumps(record, ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.1:  # a key given twice
            line = line[:-1] + ', "id": "twice"}'
        read, expected = read_plain(line, 9), general(line, 9)
        good += expected is not None
        if read is not None:
            taken += 1
            assert read == expected, line
    assert taken > 100 and taken > good * 2 / 3  # the common shapes came up, and most good ones were read the fast way
    deep = '{"id": "q", "question": "q:", "expected": ["a"], "_x": ' + "[" * 5000 + "]" * 5000 + "}"
    assert read_plain(deep, 1) is None


def test_a_file_reads_the_same_with_the_plain_reader_as_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ['{"_notes": "notes"}', *TAKEN, '{"id": "r", "question": "q?", "judgments": [{"doc": "a", "grade": 1, "judge": "ann"}]}',
             '{"id": "s", "question": "What is 10:30?", "expected": ["x"], "tags": ["t"]}', "# a comment", "",
             '{"id": "t", "question": "q?", "expected": ["a"], "_x": NaN}',  # the scanner reads these two, orjson
             '{"id": "u", "question": "q?", "expected": ["a"], "_n": 123456789012345678901234567890}']  # refuses them
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast = load_golden(path)
    monkeypatch.setattr(golden_io, "read_plain", lambda line, number: None)
    slow = load_golden(path)
    assert fast.questions == slow.questions and fast.notes == slow.notes == "notes"
    assert list(fast.qrels) == list(slow.qrels) and fast.qrels.to_dict() == slow.qrels.to_dict()
    assert fast.fingerprint() == slow.fingerprint()
    last = 2 + len(TAKEN) + 2  # the TAKEN lines, r and s; then a comment, a blank line, t and u
    assert [q.line for q in fast] == [*range(2, last), last + 2, last + 3]


def test_a_bad_file_names_the_same_problems_with_the_plain_reader_as_without(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join([TAKEN[0], TAKEN[1], *LEFT[:20], TAKEN[0]]) + "\n", encoding="utf-8")
    with pytest.raises(InputErrors) as fast:
        load_golden(path)
    monkeypatch.setattr(golden_io, "read_plain", lambda line, number: None)
    with pytest.raises(InputErrors) as slow:
        load_golden(path)
    assert [str(e) for e in fast.value.problems] == [str(e) for e in slow.value.problems]
    assert "duplicate question id `q1`: already used on line 1" in str(fast.value)


def test_qrels_give_back_the_judgments_added_whatever_they_say() -> None:
    from goldeval.golden import Judgment

    given = [Judgment("a", "x", 1), Judgment("a", "y", 0, "ann", "2026-11-03", "why"), Judgment("b", "x", 2),
             Judgment("a", "x", 3, "bob")]  # the last replaces the first, in its place
    qrels = Qrels(given)
    assert list(qrels) == [Judgment("a", "x", 3, "bob"), given[1], given[2]]
    assert qrels.grades("a") == {"x": 3, "y": 0} and qrels.relevant("a") == {"x": 3} and len(qrels) == 3
    qrels.add(Judgment("a", "x", 2))  # a bare grade again: nothing more is said about it
    assert qrels.judgments("a")[0] == Judgment("a", "x", 2)
    assert qrels.any_not_relevant() and qrels.judged_ids(["b"]) == {"x"} and "c" not in qrels
    assert [dict(g) for g in qrels.graded(["b", "c"])] == [{"x": 2}, {}]
    assert Qrels.from_grades({"a": {"x": 1}, "e": {}}, judge="pool:x").judgments("a") == [Judgment("a", "x", 1, "pool:x")]
    assert "e" not in Qrels.from_grades({"a": {"x": 1}, "e": {}})
