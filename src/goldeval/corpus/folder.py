"""Load a folder of documents: .md, .rst, .txt, .html/.htm, recursively, in sorted order.

A document's id is its path relative to the folder with `/` separators, extension kept
(`library/json.rst.txt`). Hidden files and folders (names starting with `.`) are not read.
Empty, binary, non-UTF-8 and over-large files are skipped with a warning each, after one counted
summary that comes first in `Corpus.warnings`; if nothing usable remains, InputError says what was
skipped. Symbolic links to folders are not followed, and a link to a file outside the corpus folder
(`notes.md -> /etc/passwd`) is skipped with a warning (issue 9): the corpus is what is in the folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from goldeval.corpus.files import DEFAULT_MAX_BYTES, Skipped, read_text, summarise
from goldeval.corpus.headings import first_title, style_for
from goldeval.corpus.html import html_to_text
from goldeval.corpus.model import Corpus, Document
from goldeval.errors import InputError
from goldeval.textsafe import clean, lone_surrogate

EXTENSIONS = (".md", ".markdown", ".rst", ".txt", ".html", ".htm")
"""File extensions a folder corpus reads (case-insensitive); other files are counted and ignored."""


def load_folder(folder: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, name: str | None = None) -> Corpus:
    """Read every supported file under `folder` into a Corpus."""
    corpus = Corpus({}, name=name or folder.resolve().name or str(folder), path=str(folder))
    files, ignored = _list_files(folder, corpus.warnings)
    skipped: list[Skipped] = []
    for path in files:
        doc_id = path.relative_to(folder).as_posix()
        result = _read_document(path, doc_id, max_bytes)
        if isinstance(result, Skipped):
            skipped.append(result)
            corpus.warnings.append(result.message(doc_id))
        else:
            corpus.documents[doc_id] = result
    if ignored:
        common = sorted(ignored.items(), key=lambda kv: (-kv[1], kv[0]))
        kinds = ", ".join(f"{ext or '(none)'}: {n}" for ext, n in common[:8])
        kinds += f", {len(common) - 8} more kinds" if len(common) > 8 else ""
        corpus.warnings.insert(0, f"ignored {sum(ignored.values())} files with unsupported extensions ({kinds})")
    if skipped:  # the counted summary first: a reader that shows only the first lines still sees it
        corpus.warnings.insert(0, summarise(skipped, len(files)))
    if not corpus.documents:
        raise _nothing_usable(folder, files, skipped, ignored)
    return corpus


def _list_files(folder: Path, warnings: list[str]) -> tuple[list[Path], dict[str, int]]:
    """Supported files in sorted order (by relative path), and a count of the others by extension."""
    found: list[Path] = []
    ignored: dict[str, int] = {}

    def unlistable(exc: OSError) -> None:
        shown = Path(exc.filename).relative_to(folder).as_posix() if exc.filename else str(folder)
        warnings.append(f"skipped folder {shown}: cannot be listed ({exc.strerror or exc})")

    inside = folder.resolve()
    for root, dirs, names in os.walk(folder, onerror=unlistable):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for filename in names:
            if filename.startswith("."):
                continue
            suffix = Path(filename).suffix.lower()
            if suffix not in EXTENSIONS:
                ignored[suffix] = ignored.get(suffix, 0) + 1
            elif lone_surrogate(str(Path(root) / filename)):
                shown = clean((Path(root) / filename).relative_to(folder).as_posix())
                warnings.append(f"skipped {shown}: its name is not valid UTF-8, so it cannot be an id")
            elif _outside(Path(root) / filename, inside):
                shown = (Path(root) / filename).relative_to(folder).as_posix()
                warnings.append(f"skipped {shown}: a symbolic link to a file outside the corpus folder")
            else:
                found.append(Path(root) / filename)
    found.sort(key=lambda p: p.relative_to(folder).as_posix())
    return found, ignored


def _outside(path: Path, inside: Path) -> bool:
    """A symbolic link whose target is not under the corpus folder (a dangling one stays: it is
    reported as unreadable, where it is)."""
    if not path.is_symlink():
        return False
    try:
        target = path.resolve()
    except (OSError, RuntimeError):  # a link loop
        return True
    return not target.is_relative_to(inside)


def _read_document(path: Path, doc_id: str, max_bytes: int) -> Document | Skipped:
    text = read_text(path, max_bytes=max_bytes)
    if isinstance(text, Skipped):
        return text
    if path.suffix.lower() in (".html", ".htm"):
        title, text = html_to_text(text)
        if not text.strip():
            return Skipped(path, "empty", "HTML page with no text outside tags, scripts and styles")
    else:
        title = first_title(text, style_for(doc_id))
    return Document(id=doc_id, text=text, title=title, source=str(path))


def _nothing_usable(folder: Path, files: list[Path], skipped: list[Skipped], ignored: dict[str, int]) -> InputError:
    if not files:
        other = f" ({sum(ignored.values())} other files ignored)" if ignored else ""
        return InputError(
            f"no documents found: the folder has no {', '.join(EXTENSIONS)} files{other}",
            path=folder,
            hint="point --corpus at a folder of text documents, a JSONL file, a BEIR or a Cranfield folder",
        )
    details = "; ".join(s.message(s.path.relative_to(folder).as_posix()) for s in skipped[:10])
    more = f"; and {len(skipped) - 10} more" if len(skipped) > 10 else ""
    return InputError(
        f"no usable documents: {summarise(skipped, len(files))} ({details}{more})",
        path=folder,
        hint="documents must be non-empty UTF-8 text under the size limit",
    )
