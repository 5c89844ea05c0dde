"""Load a folder corpus (Markdown, reST, HTML), see what was skipped, and chunk it by headings.

    python examples/corpus_load_and_chunk.py            # a small folder written to a temp dir
    python examples/corpus_load_and_chunk.py path/to/docs 800:100
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from goldeval.corpus import load_corpus, parse_chunk_spec


def sample_folder(root: Path) -> Path:
    (root / "git").mkdir()
    (root / "git" / "stash.md").write_text(
        "# git stash\n\nPut uncommitted changes aside.\n\n## Restoring\n\n`git stash pop` brings them back.\n"
    )
    (root / "library").mkdir()
    (root / "library" / "json.rst.txt").write_text(
        ":mod:`json` --- JSON encoder\n============================\n\nEncode and decode JSON.\n\n"
        "Basic usage\n-----------\n\nCall json.dumps and json.loads.\n"
    )
    (root / "page.html").write_text("<title>Home</title><script>track()</script><p>Welcome &amp; hello.</p>")
    (root / "empty.txt").write_text("")
    (root / "legacy.txt").write_bytes("caf\u00e9".encode("latin-1"))
    return root


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="goldeval-example-") as tmp:
        run(Path(tmp))


def run(tmp: Path) -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else sample_folder(tmp)
    spec = parse_chunk_spec(sys.argv[2] if len(sys.argv) > 2 else "400:50")
    corpus = load_corpus(folder)
    print(f"{len(corpus)} documents from {folder}")
    for warning in corpus.warnings:
        print(f"  warning: {warning}")
    for doc in corpus:
        print(f"  {doc.id:<28} title={doc.title!r}")
    passages = corpus.passages(spec)
    print(f"{len(passages)} chunks with spec {spec}:")
    for p in passages[:12]:
        assert corpus.documents[p.doc_id].text[p.start : p.end] == p.text
        print(f"  {p.id:<30} [{p.start}:{p.end}] {p.title!r}")


if __name__ == "__main__":
    main()
