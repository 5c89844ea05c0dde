"""Loading and writing golden sets: JSONL and JSON list, every problem reported at once."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from goldeval.errors import InputError, InputErrors
from goldeval.golden import GoldenSet, Qrels, Question, load_golden, write_golden_jsonl


def write(tmp_path: Path, text: str, name: str = "golden.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """{"_notes": "hand-written for the git docs"}
# a comment line, then a blank one

{"id": "q1", "question": "How do I put my changes aside?", "expected": ["git/git-stash.md"], "tags": ["stash"]}
// another comment
{"id": 2, "question": "Undo the last commit", "expected": {"git/git-reset.md": 2, "git/git-revert.md": 1}}
{"id": "q3", "question": "What is the weather in Paris?", "expected": [], "source": "synthetic", "notes": "off-topic"}
"""


def test_jsonl_loads_fields_lines_and_header_notes(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, GOOD))
    assert golden.notes == "hand-written for the git docs"
    assert [q.id for q in golden] == ["q1", "2", "q3"]
    assert [q.line for q in golden] == [4, 6, 7]
    q1, q2, q3 = golden.questions
    assert golden.grades("q1") == {"git/git-stash.md": 1}
    assert q1.tags == ("stash",)
    assert (q1.source, q1.intent) == ("hand", "answerable")
    assert golden.grades("2") == {"git/git-reset.md": 2, "git/git-revert.md": 1}
    assert (q3.source, q3.notes, q3.intent, golden.grades("q3")) == ("synthetic", "off-topic", "off_topic", {})
    assert [(j.question_id, j.doc_id, j.grade, j.judge, j.at) for j in golden.qrels] == [
        ("q1", "git/git-stash.md", 1, "", ""), ("2", "git/git-reset.md", 2, "", ""), ("2", "git/git-revert.md", 1, "", ""),
    ]


def test_off_topic_questions_are_kept_and_counted_apart(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, GOOD))
    assert [q.id for q in golden.off_topic] == ["q3"]
    assert [q.id for q in golden.answerable] == ["q1", "2"]
    assert "q3" not in golden.qrels and golden.grades("q3") == {}


def test_without_intent_all_zero_grades_are_off_topic_as_in_0_1_and_the_zeros_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "z", "question": "q?", "expected": {"a.md": 0}}\n')
    golden = load_golden(path)
    (q,) = golden.questions
    assert q.off_topic
    assert golden.grades("z") == {"a.md": 0}
    assert golden.relevant("z") == {}
    assert golden.qrels.is_judged("z", "a.md") and not golden.qrels.is_judged("z", "b.md")


def test_json_list_form_with_element_lines(tmp_path: Path) -> None:
    text = """[
  {"id": "a", "question": "first?", "expected": ["x.md"]},

  {
    "id": "b",
    "question": "second?",
    "expected": {"y.md": 3}
  }
]
"""
    golden = load_golden(write(tmp_path, text, "golden.json"))
    assert [(q.id, q.line) for q in golden] == [("a", 2), ("b", 4)]
    assert golden.grades("b") == {"y.md": 3}


def test_json_list_header_object_sets_notes(tmp_path: Path) -> None:
    text = '[{"_notes": "n"}, {"id": "a", "question": "q?", "expected": []}]'
    assert load_golden(write(tmp_path, text, "g.json")).notes == "n"


def test_json_list_syntax_error_names_its_line(tmp_path: Path) -> None:
    text = '[\n {"id": "a", "question": "q?", "expected": []},\n {"id": "b" "question": "q?"}\n]\n'
    with pytest.raises(InputError, match=r"g\.json:3: malformed JSON: Expecting ',' delimiter"):
        load_golden(write(tmp_path, text, "g.json"))


def test_json_list_trailing_data_is_an_error(tmp_path: Path) -> None:
    text = '[{"id": "a", "question": "q?", "expected": []}]\n{"id": "b"}\n'
    with pytest.raises(InputError, match=r"g\.json:2: extra data after the closing"):
        load_golden(write(tmp_path, text, "g.json"))


def test_malformed_jsonl_line_names_file_line_and_json_problem(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": []}\n{"id": "b", "question": "q?", "expected": [}\n'
    with pytest.raises(InputErrors, match=r'golden\.jsonl:2: malformed JSON: Expecting value \(column 44, near `\.\.\., "expected": \[}`\)'):
        load_golden(write(tmp_path, text))


def test_single_quotes_get_a_double_quote_hint(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": []}\n{\'id\': \'b\'}\n'
    with pytest.raises(InputErrors, match=r"(?s):2: malformed JSON.*hint: JSON needs double quotes"):
        load_golden(write(tmp_path, text))


def test_pretty_printed_objects_get_a_json_list_hint(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": []}\n{\n  "id": "b"\n}\n'
    with pytest.raises(InputErrors, match=r"(?s):2: malformed JSON.*use a JSON list"):
        load_golden(write(tmp_path, text))


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = "\n".join([
        '{"id": "a", "question": "fine?", "expected": ["x.md"]}',
        '{"id": "b", "question": "", "expected": ["x.md"]}',
        '{"id": "c", "question": "q?", "expeted": ["x.md"]}',
        '{"id": "a", "question": "again?", "expected": []}',
        "not json at all",
        '{"id": "d", "question": "q?", "expected": "x.md", "source": "handmade"}',
        '{"id": true, "question": 3, "expected": {"x.md": 1.5}, "tags": "t"}',
    ]) + "\n"
    with pytest.raises(InputErrors) as info:
        load_golden(write(tmp_path, text))
    problems = info.value.problems
    by_line = sorted((p.line, p.reason) for p in problems)
    assert str(info.value).startswith(f"{len(problems)} problems in golden set ")
    assert (2, "question `b`: question is empty") in by_line
    assert (3, "unknown field `expeted`") in by_line
    assert (3, "question `c`: missing field `expected`") in by_line
    assert (4, "duplicate question id `a`: already used on line 1") in by_line
    assert any(line == 5 and reason.startswith("malformed JSON") for line, reason in by_line)
    assert (6, "question `d`: `expected` must be a list of ids or an id -> relevance object, found string") in by_line
    assert (6, "question `d`: unknown source 'handmade'") in by_line
    assert (7, "question id must be a string or an integer, found boolean") in by_line
    assert (7, "question must be a string, found number") in by_line
    assert (7, "relevance of `x.md` must be an integer, found 1.5") in by_line
    assert (7, "`tags` must be a list of strings") in by_line
    assert [p.line for p in problems] == sorted(p.line for p in problems if p.line is not None)
    assert all(p.path == str(tmp_path / "golden.jsonl") for p in problems)


def test_unknown_field_suggests_the_known_one(tmp_path: Path) -> None:
    text = '{"id": "a", "query": "q?", "expected": []}\n'
    with pytest.raises(InputErrors, match=r"(?s):1: unknown field `query`\n  hint: did you mean `question`\?"):
        load_golden(write(tmp_path, text))


def test_underscore_fields_are_the_users_own(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": [], "_reviewer": "ann"}\n'
    assert load_golden(write(tmp_path, text))["a"].question == "q?"


def test_beir_style_underscore_id_is_not_silently_ignored(tmp_path: Path) -> None:
    text = '{"_id": "a", "text": "q?", "expected": []}\n'
    with pytest.raises(InputErrors, match=r"unknown field `_id`\n  hint: did you mean `id`\?"):
        load_golden(write(tmp_path, text))


def test_missing_expected_explains_off_topic(tmp_path: Path) -> None:
    with pytest.raises(InputErrors, match=r'missing field `expected`\n  hint: .*"expected": \[\] \(or "intent": '
                                          r'"off_topic"\) for a question the corpus does not cover'):
        load_golden(write(tmp_path, '{"id": "a", "question": "q?"}\n'))


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    text = "\n".join(f'{{"id": "{i}", "question": "q{n}?", "expected": []}}' for n, i in enumerate("abca")) + "\n"
    with pytest.raises(InputErrors, match=r"golden\.jsonl:4: duplicate question id `a`: already used on line 1"):
        load_golden(write(tmp_path, text))


def test_key_given_twice_is_reported(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": ["x"], "expected": []}\n'
    with pytest.raises(InputErrors, match=r"field `expected` is given twice"):
        load_golden(write(tmp_path, text))


def test_expected_id_listed_twice_is_reported(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": ["x.md", "x.md"]}\n'
    with pytest.raises(InputErrors, match=r"question `a`: expected id `x.md` is listed twice"):
        load_golden(write(tmp_path, text))


def test_header_after_the_first_record_is_an_error(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": []}\n{"_notes": "late"}\n'
    with pytest.raises(InputErrors, match=r":2: a header object .* is only allowed as the first record"):
        load_golden(write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.jsonl: golden set not found"):
        load_golden(tmp_path / "nope.jsonl")


def test_folder_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"golden set is a folder, not a file"):
        load_golden(tmp_path)


@pytest.mark.parametrize("text", ["", "\n  \n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match=r"golden\.jsonl: golden set: empty file\n  hint: add one JSON"):
        load_golden(write(tmp_path, text))


def test_only_comments_means_no_questions(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"the golden set has no questions"):
        load_golden(write(tmp_path, '# nothing yet\n{"_notes": "draft"}\n'))


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    path.write_bytes(b'{"id": "a", "question": "caf\xe9?", "expected": []}\n')
    with pytest.raises(InputError, match=r"golden\.jsonl:1: golden set: not valid UTF-8 \(byte 0xe9 at offset 28\)\n"
                                         r"  hint: save the file as UTF-8"):
        load_golden(path)


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(InputError, match=r"golden set: binary file \(contains NUL bytes\)"):
        load_golden(path)


def test_a_csv_file_is_not_a_golden_set(tmp_path: Path) -> None:
    path = write(tmp_path, "id,question,expected\nq1,How?,a.md\n", "golden.csv")
    with pytest.raises(InputError, match=r"golden\.csv: not a JSONL or JSON golden set: no line is valid JSON"):
        load_golden(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    path.write_bytes('\ufeff{"id": "a", "question": "¿qué?", "expected": []}\n'.encode())
    assert load_golden(path)["a"].question == "¿qué?"


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, GOOD))
    out = tmp_path / "out.jsonl"
    write_golden_jsonl(golden, out)
    again = load_golden(out)
    assert again.questions == [replace(q, line=n) for n, q in enumerate(golden.questions, 2)]
    assert list(again.qrels) == list(golden.qrels)
    assert again.notes == golden.notes
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"_notes": "hand-written for the git docs"}
    assert json.loads(lines[1]) == {"id": "q1", "question": "How do I put my changes aside?",
                                    "expected": ["git/git-stash.md"], "tags": ["stash"]}
    assert json.loads(lines[2])["expected"] == {"git/git-reset.md": 2, "git/git-revert.md": 1}
    write_golden_jsonl(again, tmp_path / "out2.jsonl")
    assert (tmp_path / "out2.jsonl").read_bytes() == out.read_bytes()


def test_write_is_atomic_and_replaces(tmp_path: Path) -> None:
    out = tmp_path / "g.jsonl"
    out.write_text("old\n", encoding="utf-8")
    golden = GoldenSet([Question("a", "¿dónde?")], Qrels.from_grades({"a": {"x.md": 1}}))
    write_golden_jsonl(golden, out)
    assert out.read_text(encoding="utf-8") == '{"id": "a", "question": "¿dónde?", "expected": ["x.md"]}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl"]


def test_write_into_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"cannot write: the folder does not exist"):
        write_golden_jsonl(GoldenSet([]), tmp_path / "no" / "g.jsonl")


def test_fingerprint_ignores_order_and_notes_but_not_judgments() -> None:
    one, two = Question("1", "q one"), Question("2", "q two", "off_topic")
    a = GoldenSet([one, two], Qrels.from_grades({"1": {"x": 1, "y": 2}}), notes="a")
    b = GoldenSet([replace(two, tags=("t",)), one], Qrels.from_grades({"1": {"y": 2, "x": 1}}, judge="ann"))
    assert a.fingerprint() == b.fingerprint()
    assert len(a.fingerprint()) == 64
    c = GoldenSet([one, two], Qrels.from_grades({"1": {"x": 1, "y": 1}}))
    d = GoldenSet([replace(one, question="q one!"), two], Qrels.from_grades({"1": {"x": 1, "y": 2}}))
    e = GoldenSet([one, two], Qrels.from_grades({"1": {"x": 1, "y": 2, "z": 0}}))  # a judged 0 counts
    assert len({a.fingerprint(), c.fingerprint(), d.fingerprint(), e.fingerprint()}) == 4


def test_list_and_all_ones_mapping_have_one_fingerprint(tmp_path: Path) -> None:
    listed = load_golden(write(tmp_path, '{"id": "a", "question": "q?", "expected": ["x", "y"]}\n', "a.jsonl"))
    graded = load_golden(write(tmp_path, '{"id": "a", "question": "q?", "expected": {"y": 1, "x": 1}}\n', "b.jsonl"))
    assert listed.fingerprint() == graded.fingerprint()


def test_integer_expected_ids_become_strings(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, '{"id": 7, "question": "boundary layer?", "expected": [12, "13"]}\n'))
    assert golden.grades("7") == {"12": 1, "13": 1}


def test_a_record_that_is_not_an_object(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": []}\n["b", "q?", []]\n'
    with pytest.raises(InputErrors, match=r":2: expected a JSON object, found a JSON list"):
        load_golden(write(tmp_path, text))


def test_header_notes_must_be_text(tmp_path: Path) -> None:
    text = '{"_notes": ["not", "text"]}\n{"id": "a", "question": "q?", "expected": []}\n'
    with pytest.raises(InputErrors, match=r":1: `_notes` must be a string"):
        load_golden(write(tmp_path, text))


def test_empty_json_list_has_no_questions(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"the golden set has no questions"):
        load_golden(write(tmp_path, "[ ]\n", "g.json"))


def test_grade_given_twice_and_tags_as_string(tmp_path: Path) -> None:
    text = '{"id": "a", "question": "q?", "expected": {"x": 1, "x": 2}, "tags": "hard"}\n'
    with pytest.raises(InputErrors) as info:
        load_golden(write(tmp_path, text))
    assert [(p.reason, p.hint) for p in info.value.problems] == [
        ("question `a`: expected id `x` is given twice", "keep one grade per id"),
        ("question `a`: `tags` must be a list of strings", 'wrap it in a list: "tags": ["hard"]'),
    ]
