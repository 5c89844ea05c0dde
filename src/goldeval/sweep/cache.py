"""What a sweep stores in the workspace, each stage's output keyed by the content it came from.

Under `<workspace>/sweep/`:

    chunks/<key>.json       the passages of one corpus under one chunking
                            (key: corpus fingerprint + chunk spec)
    runs/<key>.json         one retriever's ranked results for every question, with its resolved
                            configuration and what it cost (`goldeval.runstore`: the key, and how
                            `goldeval eval` keeps its own runs the same way)
    embedding-time/<key>.json   how long one model took to embed one set of passages

Embeddings themselves live in the workspace's embedding cache (`goldeval.store.cache`), shared with
`goldeval eval`. Every file is written atomically (`goldeval.store.atomic`), so a crash or two sweeps
at once leave the old file or the new one, and carries a checksum of its content (`goldeval.store.kept`):
a file that does not parse, or parses but fails its checksum (a flipped byte in a passage), is a miss,
said in a warning naming it, and is written again.
The sweep's statistics are kept with eval's, under `<workspace>/stats/` (`goldeval.stats.stored`).
Fusion and scoring are not stored: they are pure and take milliseconds, so a new fusion weight or a
new k is computed from stored runs without searching again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from goldeval.corpus.model import Corpus, Passage
from goldeval.fingerprint import Fingerprinter, fingerprint
from goldeval.runstore import FORMAT, RunStore, StoredRun
from goldeval.store.atomic import write_atomic
from goldeval.store.kept import kept_json, read_kept
from goldeval.store.workspace import Workspace


def corpus_fingerprint(corpus: Corpus) -> str:
    """The documents in order, one `Fingerprinter` record (id, title, text) each: the chunks' key."""
    digest = Fingerprinter()
    for doc in corpus:
        digest.record(doc.id, doc.title, doc.text)
    return digest.hexdigest()


class SweepCache:
    """The sweep's stored stage outputs in one workspace."""

    def __init__(self, workspace: Workspace) -> None:
        self.root = workspace.root / "sweep"
        self.runs = RunStore(self.root / "runs")

    # --- chunks ----------------------------------------------------------------------------------

    def chunks(self, corpus: Corpus, corpus_key: str, spec: str) -> tuple[list[Passage], bool]:
        """The passages of `corpus` under chunk spec `spec` (`none` or `SIZE:OVERLAP`), and whether
        they came from the cache."""
        path = self.root / "chunks" / f"{fingerprint(['chunks', FORMAT, corpus_key, spec])}.json"
        stored = self._read(path)
        if stored is not None:
            return [Passage(*row) for row in stored["passages"]], True
        from goldeval.corpus.chunking import parse_chunk_spec

        passages = list(corpus.passages(parse_chunk_spec(spec)))
        rows = [[p.id, p.doc_id, p.text, p.title, p.start, p.end] for p in passages]
        self._write(path, {"format": FORMAT, "corpus": corpus_key, "chunking": spec, "passages": rows})
        return passages, False

    # --- runs ------------------------------------------------------------------------------------

    def get_run(self, key: str) -> StoredRun | None:
        return self.runs.get(key)

    def put_run(self, key: str, run: StoredRun) -> None:
        self.runs.put(key, run)

    # --- embedding time --------------------------------------------------------------------------

    def embedding_time(self, key: str) -> dict[str, Any] | None:
        return self._read(self.root / "embedding-time" / f"{key}.json")

    def put_embedding_time(self, key: str, record: Mapping[str, Any]) -> None:
        self._write(self.root / "embedding-time" / f"{key}.json", dict(record))

    # --- files -----------------------------------------------------------------------------------

    def _read(self, path: Path) -> dict[str, Any] | None:
        return read_kept(path, "sweep cache file", "computing it again")

    def _write(self, path: Path, data: Mapping[str, Any]) -> None:
        write_atomic(path, kept_json(data))


def passages_texts(passages: Sequence[Passage]) -> list[str]:
    """What a dense model embeds for each passage (`goldeval.retrievers.dense.passage_text`)."""
    from goldeval.retrievers.dense import passage_text

    return [passage_text(p) for p in passages]
