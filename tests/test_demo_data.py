"""The demo's data: the stdlib corpus built from pydoc, its cache, and the shipped golden set."""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from goldeval.corpus import stdlib
from goldeval.corpus.model import Corpus, Document
from goldeval.corpus.stdlib import build_stdlib_corpus, read_module_list
from goldeval.errors import GoldevalError
from goldeval.golden.demo import demo_golden_path, drop_unavailable
from goldeval.golden.model import GoldenSet, Qrels, Question

HARD_KINDS = {"misspelling", "abbreviation", "other-language", "lexical-bait"}
NOT_TOPICS = HARD_KINDS | {"hard", "off-topic"}
SMALL = ["json", "textwrap", "colorsys"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace") / ".goldeval"


@pytest.fixture(scope="module")
def corpus(workspace: Path) -> Corpus:
    """The full demo corpus, rendered once (about 4 s on 2 cores) and cached in `workspace`."""
    return build_stdlib_corpus(workspace=workspace)


@pytest.fixture(scope="module")
def golden_records() -> list[dict]:
    lines = demo_golden_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# --- the corpus ---------------------------------------------------------------------------------


def test_corpus_has_the_curated_modules(corpus: Corpus) -> None:
    names = read_module_list()
    assert 150 <= len(names) <= 250
    assert len(corpus) == len(names)  # every listed module imports on Python 3.11
    assert list(corpus.documents) == names  # doc ids are module names, in list order
    for name in ["json", "os.path", "collections", "pathlib", "unittest.mock", "xml.etree.ElementTree"]:
        assert name in corpus
    assert corpus.warnings == []


def test_corpus_text_is_clean_pydoc(corpus: Corpus) -> None:
    docs = corpus.documents
    assert docs["json"].title.startswith("JSON (JavaScript Object Notation)")
    assert docs["os.path"].title == "Common operations on Posix pathnames."
    assert docs["ast"].title.startswith("The `ast` module helps")  # not the "ast" / "~~~" heading
    assert docs["pathlib"].title == "pathlib"  # no docstring: falls back to the name
    assert "dumps(obj, *, skipkeys=False" in docs["json"].text
    for doc in corpus:
        assert "\b" not in doc.text, doc.id
        assert "MODULE REFERENCE" not in doc.text and "\nFILE\n" not in doc.text, doc.id
        assert " at 0x" not in doc.text, doc.id
    # inherited-member blocks are dropped: they are most of builtins' page otherwise
    assert "inherited from" not in docs["builtins"].text
    assert "class SystemExit(BaseException)" in docs["builtins"].text


def test_corpus_is_deterministic_across_fresh_renders(corpus: Corpus) -> None:
    again = build_stdlib_corpus(workspace=None)  # renders afresh, in new child processes
    assert again.documents == corpus.documents


def test_second_build_reads_the_cache(corpus: Corpus, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (cache,) = workspace.glob("stdlib-*.jsonl")
    assert cache.name.startswith("stdlib-3.")

    def no_render(*args: object) -> None:
        raise AssertionError("rendered again although the cache is valid")

    monkeypatch.setattr(stdlib, "_render", no_render)
    calls: list[tuple[int, int]] = []
    cached = build_stdlib_corpus(workspace=workspace, progress=lambda done, total: calls.append((done, total)))
    assert cached.documents == corpus.documents
    assert cached.warnings == []
    assert calls == [(len(corpus), len(corpus))]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="truncated"),
        pytest.param(lambda b: b.replace(b"JSON", b"JSOX", 1), id="flipped-byte"),
        pytest.param(lambda b: b"not json\n" + b, id="bad-header"),
        pytest.param(lambda b: b"", id="empty"),
    ],
)
def test_corrupt_cache_is_detected_and_rebuilt(tmp_path: Path, damage) -> None:
    fresh = build_stdlib_corpus(workspace=tmp_path, modules=SMALL)
    (cache,) = tmp_path.glob("stdlib-*.jsonl")
    cache.write_bytes(damage(cache.read_bytes()))
    rebuilt = build_stdlib_corpus(workspace=tmp_path, modules=SMALL)
    assert rebuilt.documents == fresh.documents
    assert len(rebuilt.warnings) == 1
    assert "is unusable" in rebuilt.warnings[0] and "rebuilt it" in rebuilt.warnings[0]
    # the rebuilt cache is whole again: the next build trusts it without a word
    assert build_stdlib_corpus(workspace=tmp_path, modules=SMALL).warnings == []
    assert not list(tmp_path.glob("*.tmp"))  # atomic write leaves no temp file behind


def test_cache_key_follows_the_module_list(tmp_path: Path) -> None:
    build_stdlib_corpus(workspace=tmp_path, modules=SMALL)
    build_stdlib_corpus(workspace=tmp_path, modules=SMALL[:2])
    assert len(list(tmp_path.glob("stdlib-*.jsonl"))) == 2


def test_module_that_does_not_import_is_skipped_with_a_warning(tmp_path: Path) -> None:
    corpus = build_stdlib_corpus(workspace=tmp_path, modules=["json", "no_such_module_xyz"])
    assert list(corpus.documents) == ["json"]
    assert len(corpus.warnings) == 1
    assert "module no_such_module_xyz skipped" in corpus.warnings[0]
    assert "ModuleNotFoundError" in corpus.warnings[0]


def test_module_that_kills_the_interpreter_costs_only_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "crasher.py").write_text("import os\nos._exit(3)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    corpus = build_stdlib_corpus(modules=["json", "crasher", "textwrap"])
    assert list(corpus.documents) == ["json", "textwrap"]
    assert corpus.warnings == [
        "module crasher skipped: it does not import here (the interpreter failed while importing or rendering it)"
    ]


def test_module_printing_on_import_does_not_corrupt_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chatty.py").write_text('"""A chatty module."""\nprint("hello from chatty")\n')
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    corpus = build_stdlib_corpus(modules=["chatty", "json"])
    assert corpus.documents["chatty"].title == "A chatty module."
    assert "json" in corpus


def test_a_json_py_in_the_current_folder_does_not_shadow_the_stdlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "json.py").write_text('"""Not the standard library."""\n')
    monkeypatch.chdir(tmp_path)
    corpus = build_stdlib_corpus(modules=["json"])
    assert corpus.documents["json"].title.startswith("JSON (JavaScript Object Notation)")


def test_nothing_renderable_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GoldevalError, match=r"(?s)no standard-library module could be rendered.*no_such_module_xyz skipped"):
        build_stdlib_corpus(workspace=tmp_path, modules=["no_such_module_xyz"])


def test_module_list_file_format(tmp_path: Path) -> None:
    listing = tmp_path / "mods.txt"
    listing.write_text(textwrap.dedent("""\
        # a comment
        json   # trailing comment
        os.path

        json
        """))
    assert read_module_list(listing) == ["json", "os.path"]


def test_drop_unavailable_warns_and_keeps_the_rest() -> None:
    corpus = Corpus({"json": Document("json", "text")})
    golden = GoldenSet(
        [Question("a", "parse json"), Question("b", "read a toml file"), Question("c", "best pizza", "off_topic")],
        Qrels.from_grades({"a": {"json": 1}, "b": {"tomllib": 1, "json": 1}}),
    )
    with pytest.warns(UserWarning, match=r"demo question b dropped: expected module\(s\) tomllib not in"):
        kept = drop_unavailable(golden, corpus)
    assert [q.id for q in kept] == ["a", "c"]
    assert kept.qrels.to_dict() == {"a": {"json": 1}}  # b's judgments go with it
    assert [q.id for q in golden] == ["a", "b", "c"]  # the input is not changed
    assert golden.qrels.to_dict() == {"a": {"json": 1}, "b": {"tomllib": 1, "json": 1}}


# --- the golden set -----------------------------------------------------------------------------


def test_golden_set_size_and_topics(golden_records: list[dict]) -> None:
    answerable = [r for r in golden_records if r["expected"]]
    off_topic = [r for r in golden_records if not r["expected"]]
    assert len(answerable) >= 50
    assert len(off_topic) >= 8
    topics = {t for r in answerable for t in r["tags"]} - NOT_TOPICS
    assert len(topics) >= 15, sorted(topics)
    assert all(r["tags"] == ["off-topic"] for r in off_topic)
    assert sum(1 for r in answerable if len(r["expected"]) > 1) >= 10  # several correct modules


def test_golden_set_records_are_well_formed(golden_records: list[dict]) -> None:
    ids = [r["id"] for r in golden_records]
    assert len(set(ids)) == len(ids), [i for i, n in Counter(ids).items() if n > 1]
    for r in golden_records:
        assert set(r) == {"id", "question", "expected", "tags", "source", "notes"}, r["id"]
        assert r["question"].strip() and r["source"] == "hand", r["id"]
        assert len(set(r["expected"])) == len(r["expected"]), r["id"]
        assert r["tags"], r["id"]


def test_hard_cases_are_tagged(golden_records: list[dict]) -> None:
    kinds = Counter(t for r in golden_records for t in r["tags"] if t in HARD_KINDS)
    assert set(kinds) == HARD_KINDS and min(kinds.values()) >= 3, kinds
    for r in golden_records:
        if HARD_KINDS & set(r["tags"]):
            assert "hard" in r["tags"], r["id"]


def test_every_expected_module_is_in_the_corpus(golden_records: list[dict], corpus: Corpus) -> None:
    unknown = {(r["id"], e) for r in golden_records for e in r["expected"] if e not in corpus}
    assert unknown == set()


def test_golden_set_loads_with_goldeval_and_validates_against_the_corpus(
    corpus: Corpus, golden_records: list[dict]
) -> None:
    from goldeval.golden.io import load_golden

    golden = load_golden(demo_golden_path(), corpus=corpus)
    assert len(golden.answerable) >= 50 and len(golden.off_topic) >= 8
    assert golden.grades("q001") == {"os.path": 1, "pathlib": 1}
    assert [q.id for q in golden.off_topic] == [r["id"] for r in golden_records if not r["expected"]]
    assert len(drop_unavailable(golden, corpus)) == len(golden)


def test_review_fixes_are_recorded_in_notes(golden_records: list[dict]) -> None:
    fixed = {r["id"] for r in golden_records if "review:" in r["notes"]}
    assert {"q026", "q029", "q032"} <= fixed
