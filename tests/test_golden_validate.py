"""Validating a golden set against a corpus: a typo must never score as a silent miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeval.corpus.model import Corpus, Document
from goldeval.errors import InputErrors
from goldeval.golden import GoldenSet, Provenance, Qrels, Question, load_golden, validate_golden
from goldeval.golden.validate import IdSuggester, resolve_doc_id


def make_corpus(*ids: str) -> Corpus:
    return Corpus({i: Document(i, f"text of {i}") for i in ids}, name="git-docs", path="docs/")


GIT = make_corpus("git/git-stash", "git/git-reset", "git/git-revert", "git/git-commit", "claude/claude-git-workflow")


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_unknown_expected_id_names_line_and_suggests_closest(tmp_path: Path) -> None:
    lines = [f'{{"id": "q{n}", "question": "q{n}?", "expected": ["git/git-commit"]}}' for n in range(11)]
    lines.append('{"id": "h05", "question": "How do I put my changes aside?", "expected": ["git/git-stsh"]}')
    path = write(tmp_path, *lines)
    with pytest.raises(InputErrors, match=r"golden\.jsonl:12: question `h05`: expected id `git/git-stsh` is not "
                                          r"in the corpus; did you mean `git/git-stash`\?"):
        load_golden(path, corpus=GIT)


def test_problem_carries_path_line_and_value(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "a", "question": "q?", "expected": ["git/git-rset"]}')
    with pytest.raises(InputErrors) as info:
        load_golden(path, corpus=GIT)
    (problem,) = info.value.problems
    assert (problem.path, problem.line, problem.value) == (str(path), 1, "git/git-rset")


def test_parse_and_corpus_problems_come_together(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"id": "a", "question": "", "expected": ["git/git-stash"]}',
        '{"id": "b", "question": "q?", "expected": ["git/git-revrt"]}',
        '{"id": "a", "question": "q?", "expected": ["nothing-like-it-at-all-zzzz"]}',
    )
    with pytest.raises(InputErrors) as info:
        load_golden(path, corpus=GIT)
    reasons = [(p.line, p.reason) for p in info.value.problems]
    assert reasons == [
        (1, "question `a`: question is empty"),
        (2, "question `b`: expected id `git/git-revrt` is not in the corpus; did you mean `git/git-revert`?"),
        (3, "duplicate question id `a`: already used on line 1"),
        (3, "question `a`: expected id `nothing-like-it-at-all-zzzz` is not in the corpus"),
    ]
    assert "corpus ids look like `git/git-stash`" in str(info.value.problems[-1].hint)


def test_chunk_id_accepted_when_its_document_exists(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "a", "question": "q?", "expected": ["git/git-stash#3", "git/git-reset"]}')
    golden = load_golden(path, corpus=GIT)
    assert golden.grades("a") == {"git/git-stash#3": 1, "git/git-reset": 1}


def test_chunk_id_of_a_missing_document_suggests_a_chunk_id(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "a", "question": "q?", "expected": ["git/git-stsh#3"]}')
    with pytest.raises(InputErrors, match=r"expected chunk id `git/git-stsh#3`: its document `git/git-stsh` is not "
                                          r"in the corpus; did you mean `git/git-stash#3`\?"):
        load_golden(path, corpus=GIT)


def test_doc_id_containing_hash_is_matched_exactly() -> None:
    ids = {"faq.md#install", "faq.md"}
    assert resolve_doc_id("faq.md#install", ids) == "faq.md#install"
    assert resolve_doc_id("faq.md#2", ids) == "faq.md"
    assert resolve_doc_id("faq.md#install#1", ids) == "faq.md#install"
    assert resolve_doc_id("faq#2", ids) is None


def test_extension_and_case_slips_are_suggested() -> None:
    corpus = make_corpus("guide/Install.md", "guide/upgrade.md", "api/json.rst.txt")
    golden = GoldenSet([Question("a", "q?", line=1), Question("b", "q?", line=2)],
                       Qrels.from_grades({"a": {"guide/install.md": 1}, "b": {"api/json": 1}}), path="g.jsonl")
    problems = validate_golden(golden, corpus)
    assert [p.reason for p in problems] == [
        "question `a`: expected id `guide/install.md` is not in the corpus; did you mean `guide/Install.md`?",
        "question `b`: expected id `api/json` is not in the corpus; did you mean `api/json.rst.txt`?",
    ]


def test_validate_golden_in_memory_finds_structural_problems() -> None:
    golden = GoldenSet([
        Question("a", "fine?", line=1),
        Question("b", "   ", "off_topic", line=2),
        Question("a", "dup?", provenance=Provenance("llm"), line=3),
        Question("c", "graded?", line=4),
    ], Qrels.from_grades({"a": {"git/git-stash": 1}, "c": {"git/git-reset": 1.5}}), path="mem")  # type: ignore[dict-item]
    reasons = [(p.line, p.reason) for p in validate_golden(golden, GIT)]
    assert reasons == [
        (2, "question `b`: question is empty"),
        (3, "question `a`: unknown source 'llm'"),
        (3, "duplicate question id `a`: already used on line 1"),
        (4, "question `c`: relevance 1.5 of `git/git-reset` is not an integer"),
    ]


def test_validate_golden_checks_intent_against_the_judgments() -> None:
    golden = GoldenSet([
        Question("off", "weather?", "off_topic", line=1),
        Question("never", "forgot the answers?", line=2),
        Question("trec", "nothing relevant found", line=3),
    ], Qrels.from_grades({"off": {"git/git-stash": 2}, "trec": {"git/git-reset": 0}, "gone": {"x": 1}}),
        path="mem")
    problems = validate_golden(golden)
    assert [(p.line, p.reason, p.value) for p in problems] == [
        (None, "judgments for question `gone`, which is not in the golden set", "gone"),
        (1, "question `off`: intent is off_topic but `git/git-stash` is judged relevant (grade 2)", "git/git-stash"),
        (2, "question `never`: intent is answerable but no document is judged for it", "answerable"),
    ]
    assert 'give these ids grade 0, or drop "intent": "off_topic"' in str(problems[1].hint)
    assert 'or write "intent": "off_topic"' in str(problems[2].hint)


def test_validate_golden_without_corpus_and_valid_set_is_empty() -> None:
    golden = GoldenSet([Question("a", "q?"), Question("b", "off-topic?", "off_topic")],
                       Qrels.from_grades({"a": {"anything": 1}}))
    assert validate_golden(golden) == []
    assert validate_golden(golden, {"anything"}) == []


def test_wrong_corpus_is_called_out_once() -> None:
    golden = GoldenSet([Question(str(n), "q?", line=n) for n in range(1, 7)],
                       Qrels.from_grades({str(n): {f"{n}": 1} for n in range(1, 7)}), path="g.jsonl")
    problems = validate_golden(golden, GIT)
    assert problems[0].line is None
    assert problems[0].reason == "6 of 6 expected ids are not in the corpus `docs/`"
    assert "is this golden set meant for this corpus?" in str(problems[0].hint)
    assert len(problems) == 7


def test_empty_corpus_is_one_problem() -> None:
    golden = GoldenSet([Question("a", "q?")], Qrels.from_grades({"a": {"x": 1}}))
    (problem,) = validate_golden(golden, Corpus({}))
    assert problem.reason == "the corpus is empty, so no expected id can be found in it"


def test_off_topic_questions_need_no_corpus_ids(tmp_path: Path) -> None:
    path = write(tmp_path, '{"id": "a", "question": "What is the capital of Peru?", "expected": []}')
    assert load_golden(path, corpus=GIT).off_topic[0].id == "a"


def test_suggester_finds_the_typo_among_ten_thousand_ids() -> None:
    ids = [f"section-{s:03d}/page-{p:02d}.md" for s in range(500) for p in range(20)]
    suggester = IdSuggester(ids)
    assert suggester.suggest("section-123/pgae-07.md")[0] == "section-123/page-07.md"
    assert suggester.suggest("/section-321/page-19")[0] == "section-321/page-19.md"
    assert suggester.suggest("SECTION-042/PAGE-00.MD") == ["section-042/page-00.md"]
    assert suggester.suggest("zzzz") == []


def test_many_questions_with_typos_against_a_large_corpus() -> None:
    ids = [f"docs/topic{n:05d}.md" for n in range(10_000)]
    grades = {f"q{n}": {f"docs/topic{n * 7:05d}.md": 1} for n in range(1000)}
    grades |= {f"t{n}": {f"docs/topc{n * 31:05d}.md": 1} for n in range(50)}
    questions = [Question(qid, "q?", line=n) for n, qid in enumerate(grades, 1)]
    problems = validate_golden(GoldenSet(questions, Qrels.from_grades(grades), path="big.jsonl"), set(ids))
    assert len(problems) == 50
    assert problems[0].reason.endswith("did you mean `docs/topic00000.md`?")
    assert problems[-1].reason.startswith("question `t49`: expected id `docs/topc01519.md`")
    assert "`docs/topic01519.md`" in problems[-1].reason


def test_shipped_example_golden_set_matches_its_corpus() -> None:
    from goldeval.corpus import load_corpus

    data = Path(__file__).resolve().parents[1] / "examples" / "data"
    golden = load_golden(data / "golden_example.jsonl", corpus=load_corpus(data / "corpus"))
    assert (len(golden.answerable), len(golden.off_topic)) == (9, 2)
    assert golden.grades("h02") == {"git/git-reset.md": 2, "git/git-commit.md": 1}


def test_regression_a_chunk_position_that_is_not_a_number_is_a_typo() -> None:
    from goldeval.corpus.model import Corpus, Document
    from goldeval.errors import InputErrors
    from goldeval.golden.model import GoldenSet, Qrels, Question
    from goldeval.golden.validate import validate_golden

    corpus = Corpus({"git/git-stash.md": Document("git/git-stash.md", "stash")})
    golden = GoldenSet([Question("b", "x", line=3)], Qrels.from_grades({"b": {"git/git-stash.md#x": 1}}), path="g.jsonl")
    (problem,) = validate_golden(golden, corpus)
    assert "`x` after `#` is not a chunk number" in str(problem) and "g.jsonl:3" in str(problem)
    assert not isinstance(problem, InputErrors)


def test_ids_differing_only_in_unicode_normalisation_say_so() -> None:
    import unicodedata

    from goldeval.corpus.model import Corpus, Document
    from goldeval.golden.model import GoldenSet, Qrels, Question
    from goldeval.golden.validate import validate_golden

    nfd = unicodedata.normalize("NFD", "café.md")
    corpus = Corpus({nfd: Document(nfd, "coffee")})
    golden = GoldenSet([Question("a", "coffee", line=1)],
                       Qrels.from_grades({"a": {unicodedata.normalize("NFC", "café.md"): 1}}))
    (problem,) = validate_golden(golden, corpus)
    assert "differ only in Unicode normalisation" in str(problem)
