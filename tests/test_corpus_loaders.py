"""load_corpus on folders and JSONL files: ids, titles, HTML text, and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeval.corpus import load_corpus
from goldeval.corpus.loaders import detect_format
from goldeval.errors import InputError, InputErrors


def _write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


HTML = """<!doctype html><html><head><title>Stash &amp; switch</title>
<style>body { color: red }</style><script>var secret = "do not index";</script></head>
<body><nav>Home</nav><h1>git stash</h1><p>Put changes&nbsp;aside.</p>
<script type="text/javascript">alert("nope")</script><p>Then <b>switch</b> branches.</p></body></html>
"""


@pytest.fixture()
def docs_folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    _write(root, "readme.md", "Intro line\n\n# Getting started\n\nInstall it.\n")
    _write(root, "library/json.rst.txt", ":mod:`json`\n===========\n\nJSON encoder and decoder.\n")
    _write(root, "library/os.rst", ".. module:: os\n\nos --- Misc\n===========\n\nOperating system.\n")
    _write(root, "notes/plain.txt", "Just some plain words.\n")
    _write(root, "web/git/stash.html", HTML)
    _write(root, "web/Upper.HTM", "<p>Shouting extension</p>")
    _write(root, "images/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    _write(root, ".git/config", "[core]\n")
    _write(root, ".hidden.md", "# secret\n")
    return root


def test_folder_ids_are_relative_posix_paths_sorted_with_extension(docs_folder: Path) -> None:
    corpus = load_corpus(docs_folder)
    assert list(corpus.documents) == [
        "library/json.rst.txt",
        "library/os.rst",
        "notes/plain.txt",
        "readme.md",
        "web/Upper.HTM",
        "web/git/stash.html",
    ]
    assert corpus.documents["readme.md"].source == str(docs_folder / "readme.md")


def test_folder_titles_come_from_first_heading_or_html_title(docs_folder: Path) -> None:
    docs = load_corpus(docs_folder).documents
    assert docs["readme.md"].title == "Getting started"
    assert docs["library/json.rst.txt"].title == "json"  # the reST role is markup, not title text
    assert docs["library/os.rst"].title == "os --- Misc"
    assert docs["notes/plain.txt"].title == ""
    assert docs["web/git/stash.html"].title == "Stash & switch"
    assert docs["web/Upper.HTM"].title == ""


def test_html_keeps_text_and_drops_scripts_and_styles(docs_folder: Path) -> None:
    text = load_corpus(docs_folder).documents["web/git/stash.html"].text
    assert "Put changes aside." in text
    assert "Then switch branches." in text
    assert "git stash" in text
    for hidden in ("do not index", "alert", "color: red", "<p>", "&amp;", "Stash & switch"):
        assert hidden not in text


def test_readme_title_from_setext_heading_after_a_badge(tmp_path: Path) -> None:
    _write(tmp_path, "README.md", "[![CI](https://ci/badge.svg)](https://ci)\n\nThe [Tool](https://t.org)\n========\n\nText.\n")
    assert load_corpus(tmp_path).documents["README.md"].title == "The Tool"


def test_html_headings_become_markdown_sections_for_chunking(tmp_path: Path) -> None:
    from goldeval.corpus import ChunkSpec

    _write(tmp_path, "p.html", "<title>Page</title><h1>Intro</h1><p>One.</p><h2>Usage</h2><p>Two.</p><h2></h2>")
    corpus = load_corpus(tmp_path)
    assert corpus.documents["p.html"].text == "# Intro\n\nOne.\n\n## Usage\n\nTwo."
    assert [(c.title, c.text) for c in corpus.passages(ChunkSpec())] == [
        ("Page > Intro", "# Intro\n\nOne."),
        ("Page > Intro > Usage", "## Usage\n\nTwo."),
    ]


def test_html_title_falls_back_to_first_heading(tmp_path: Path) -> None:
    _write(tmp_path, "page.html", "<body><h2>Second <i>level</i></h2><p>Body.</p></body>")
    assert load_corpus(tmp_path).documents["page.html"].title == "Second level"


def test_unsupported_extensions_are_counted_not_read(docs_folder: Path) -> None:
    corpus = load_corpus(docs_folder)
    assert "ignored 1 files with unsupported extensions (.png: 1)" in corpus.warnings
    assert not any(".git" in doc_id or "hidden" in doc_id for doc_id in corpus.documents)


def test_bad_files_are_skipped_with_a_warning_each_and_a_counted_summary(tmp_path: Path) -> None:
    _write(tmp_path, "good.md", "# Good\n\nUsable text.\n")
    _write(tmp_path, "empty.md", "")
    _write(tmp_path, "blank.txt", "  \n\n\t\n")
    _write(tmp_path, "binary.txt", b"abc\x00\x01\x02def")
    _write(tmp_path, "latin1.rst", "caf\u00e9 cr\u00e8me\n".encode("latin-1"))
    _write(tmp_path, "sub/huge.txt", "word " * 400)
    _write(tmp_path, "utf16.md", "# Notes\n".encode("utf-16"))
    corpus = load_corpus(tmp_path, max_bytes=1000)
    assert list(corpus.documents) == ["good.md"]
    warnings = "\n".join(corpus.warnings)
    assert "skipped empty.md: empty file" in warnings
    assert "skipped blank.txt: empty file" in warnings
    assert "skipped binary.txt: binary file (contains NUL bytes)" in warnings
    assert "skipped latin1.rst: not valid UTF-8 (byte 0xe9 at offset 3)" in warnings
    assert "skipped sub/huge.txt: 2,000 bytes is over the 1,000-byte limit" in warnings
    assert "skipped utf16.md: UTF-16 text; re-save it as UTF-8" in warnings
    assert corpus.warnings[0] == "skipped 6 of 7 files: 1 binary, 2 empty, 2 non-utf8, 1 too-large"
    assert len(corpus.warnings) == 7


def test_unreadable_file_is_skipped_not_a_crash(tmp_path: Path) -> None:
    _write(tmp_path, "good.md", "text")
    (tmp_path / "gone.md").symlink_to(tmp_path / "deleted.md")  # a dangling link: listed, not readable
    corpus = load_corpus(tmp_path)
    assert list(corpus.documents) == ["good.md"]
    assert corpus.warnings[0] == "skipped 1 of 2 files: 1 unreadable"
    assert corpus.warnings[1] == "skipped gone.md: cannot be read (No such file or directory)"


def test_default_size_cap_keeps_ordinary_files(tmp_path: Path) -> None:
    _write(tmp_path, "big.txt", "word " * 200_000)  # 1 MB, under the 5 MB default
    assert len(load_corpus(tmp_path).documents["big.txt"].text) == 1_000_000


def test_nothing_usable_names_the_folder_and_what_was_skipped(tmp_path: Path) -> None:
    _write(tmp_path, "empty.md", "")
    _write(tmp_path, "binary.txt", b"\x00\x00")
    with pytest.raises(InputError, match=r"no usable documents: skipped 2 of 2 files: 1 binary, 1 empty") as err:
        load_corpus(tmp_path)
    assert err.value.path == str(tmp_path)
    assert "skipped empty.md: empty file" in str(err.value)


def test_folder_corpus_is_named_after_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "handbook", "a.md", "text")
    monkeypatch.chdir(tmp_path / "handbook")
    assert load_corpus(".").name == "handbook"
    assert load_corpus(".", name="hb").name == "hb"


def test_empty_folder_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    _write(tmp_path, "sub/data.csv", "a,b\n")
    with pytest.raises(InputError, match=r"no documents found: .* \(1 other files ignored\)"):
        load_corpus(tmp_path)


def test_missing_path_is_an_input_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope: corpus path not found\n  hint: give a folder"):
        load_corpus(tmp_path / "nope")


def test_html_page_without_text_is_skipped(tmp_path: Path) -> None:
    _write(tmp_path, "a.html", "<html><script>only()</script></html>")
    _write(tmp_path, "b.md", "text")
    corpus = load_corpus(tmp_path)
    assert list(corpus.documents) == ["b.md"]
    assert any(w.startswith("skipped a.html: HTML page with no text") for w in corpus.warnings)


def test_crlf_and_bom_are_normalised(tmp_path: Path) -> None:
    _write(tmp_path, "win.md", b"\xef\xbb\xbf# Title\r\n\r\nline one\r\nline two\r\n")
    doc = load_corpus(tmp_path).documents["win.md"]
    assert doc.text == "# Title\n\nline one\nline two\n"
    assert doc.title == "Title"


# --- JSONL ----------------------------------------------------------------------------------


def _jsonl(path: Path, lines: list[object | str]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_corpus(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "corpus.jsonl", [
        {"id": "a", "title": "Alpha", "text": "first"},
        "",
        {"id": 7, "text": "number id", "extra": True},
        {"id": "c", "title": None, "text": "no title"},
    ])
    corpus = load_corpus(path)
    assert list(corpus.documents) == ["a", "7", "c"]
    assert corpus.documents["a"].title == "Alpha"
    assert corpus.documents["7"].source == f"{path}:3"
    assert corpus.documents["c"].title == ""
    assert corpus.name == "corpus"


def test_jsonl_reports_every_bad_line_with_file_line_and_value(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [
        {"id": "a", "text": "ok"},
        '{"id": "b", "text": "unterminated}',
        {"id": "c"},
        ["not", "an", "object"],
        {"id": "d", "text": 42},
    ])
    with pytest.raises(InputErrors, match=r"c\.jsonl: 4 problems in the corpus file") as err:
        load_corpus(path)
    problems = [str(p) for p in err.value.problems]
    assert problems[0].startswith(f"{path}:2: malformed JSON (Unterminated string")
    assert '"id": "b", "text": "unterminated}' in problems[0]
    assert problems[1].startswith(f"{path}:3: missing field 'text'")
    assert problems[2].startswith(f"{path}:4: expected a JSON object, got list")
    assert problems[3] == f"{path}:5: field 'text' must be a string, got 42"


def test_jsonl_duplicate_ids_are_listed(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [
        {"id": "a", "text": "1"}, {"id": "b", "text": "2"}, {"id": "a", "text": "3"},
        {"id": "b", "text": "4"}, {"id": "a", "text": "5"},
    ])
    with pytest.raises(InputErrors, match=r"duplicate id 'a' on lines 1, 3, 5") as err:
        load_corpus(path)
    assert "duplicate id 'b' on lines 2, 4" in str(err.value)


def test_jsonl_empty_text_is_skipped_with_warning(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "ok"}, {"id": "b", "text": "  "}])
    corpus = load_corpus(path)
    assert list(corpus.documents) == ["a"]
    assert corpus.warnings == ["skipped 1 of 2 records: 1 empty", "skipped b (line 2): empty text"]


def test_jsonl_with_only_empty_records_is_an_error(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": ""}])
    with pytest.raises(InputError, match=r"no usable documents: all 1 records have empty text"):
        load_corpus(path)


def test_jsonl_non_utf8_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(InputErrors, match=r"c\.jsonl:2: not valid UTF-8 \(byte 0xe9 at column 25\)"):
        load_corpus(path)


def test_format_detection_and_explicit_format_errors(tmp_path: Path) -> None:
    _write(tmp_path, "beir/corpus.jsonl", '{"_id": "1", "text": "x"}\n')
    _write(tmp_path, "cran/cran.all.1400", ".I 1\n.T\nt\n.W\nw\n")
    _write(tmp_path, "plain/a.md", "x")
    assert detect_format(tmp_path / "beir") == "beir"
    assert detect_format(tmp_path / "cran") == "cranfield"
    assert detect_format(tmp_path / "cran" / "cran.all.1400") == "cranfield"
    assert detect_format(tmp_path / "plain") == "folder"
    with pytest.raises(InputError, match=r"cannot tell the corpus format of file 'a\.md'"):
        load_corpus(tmp_path / "plain" / "a.md")
    with pytest.raises(InputError, match=r"a JSONL corpus must be a file"):
        load_corpus(tmp_path / "plain", fmt="jsonl")
    with pytest.raises(InputError, match=r"unknown corpus format 'csv'"):
        load_corpus(tmp_path / "plain", fmt="csv")
