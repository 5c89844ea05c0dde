"""A damaged cache is never a number (issue 20): every artefact goldeval keeps in the workspace, with one
flipped byte that still parses (so a reader without a checksum would trust it), is said in a warning
naming the file and computed again, and the numbers equal those of a fresh run in an empty workspace.

Kinds: a sweep's stored chunks (the issue's case: one configuration's hit@1 moved without a word), an
evaluation's stored runs, kept statistics, and an embedding cache entry.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from goldeval import evaluate
from goldeval.scorecard.io import scorecard_to_dict
from goldeval.stats.annotate import compare
from goldeval.sweep import Grid, Settings, sweep
from sweep_fixtures import tiny_corpus, tiny_golden

DAMAGED = re.compile(r"goldeval: warning: (.+?) (\S+) is damaged \(its checksum does not match its content\); (.+)")


def flip(path: Path, at: int) -> None:
    """Flip the lowest bit of the byte at `at`, and prove the file still parses as it did (JSON stays JSON, a
    letter stays a letter, a digit a digit): only a checksum can tell."""
    data = bytearray(path.read_bytes())
    before = chr(data[at])
    data[at] ^= 0x01
    assert before.isalnum() and chr(data[at]).isalnum(), (before, chr(data[at]))
    path.write_bytes(bytes(data))
    if path.suffix == ".json":
        json.loads(path.read_text(encoding="utf-8"))


def said_damaged(err: str, path: Path) -> list[str]:
    """The damage warnings on stderr that name `path`."""
    return [m.group(0) for m in DAMAGED.finditer(err) if m.group(2) == str(path)]


def metrics(card: object) -> list[object]:
    data = scorecard_to_dict(card)  # type: ignore[arg-type]
    return [(r["name"], r["metrics"], [(q["id"], q["rank"], q["metrics"]) for q in r["questions"]])
            for r in data["retrievers"]]


def test_a_flipped_byte_in_a_sweeps_chunks_is_said_and_chunked_again(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    grid = Grid(chunking=("120:30",), retriever=("bm25",))
    settings = Settings(k=(1, 3, 5), resamples=200, headline="hit@1")

    def run(workspace: Path):  # type: ignore[no-untyped-def]
        return sweep(grid, tiny_golden(), corpus=tiny_corpus(), settings=settings, workspace=workspace,
                     record_history=False)

    run(tmp_path / "ws")
    (chunks,) = (tmp_path / "ws" / "sweep" / "chunks").glob("*.json")
    # the stash page's passages now count for a document `git/rtash.md`: q01's answer would be a miss
    flip(chunks, chunks.read_bytes().index(b',"git/stash.md",') + len(b',"git/'))
    capsys.readouterr()
    again = run(tmp_path / "ws")
    err = capsys.readouterr().err
    assert len(said_damaged(err, chunks)) == 1, err
    assert "sweep cache file" in said_damaged(err, chunks)[0] and "Traceback" not in err
    fresh = run(tmp_path / "fresh")
    assert [(c.label, c.metrics) for c in again.cells] == [(c.label, c.metrics) for c in fresh.cells]
    assert b'"git/rtash.md"' not in chunks.read_bytes()  # written again, whole
    run(tmp_path / "ws")
    assert not said_damaged(capsys.readouterr().err, chunks)


def test_a_flipped_byte_in_a_stored_run_is_said_and_searched_again(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    evaluate("bm25", tiny_golden(), corpus=tiny_corpus(), workspace=tmp_path / "ws")
    (stored,) = (tmp_path / "ws" / "runs").glob("*.json")
    # q05's top hit, its one expected document, becomes `python/kson.md` (the order of the hits is what
    # counts, not their scores, so an id is where one byte moves a number: hit@1 of q05 would be 0)
    flip(stored, stored.read_bytes().index(b'"q05":[["python/json.md"') + len(b'"q05":[["python/'))
    capsys.readouterr()
    again = evaluate("bm25", tiny_golden(), corpus=tiny_corpus(), workspace=tmp_path / "ws")
    err = capsys.readouterr().err
    assert len(said_damaged(err, stored)) == 1 and "stored run" in err and "searching again" in err, err
    fresh = evaluate("bm25", tiny_golden(), corpus=tiny_corpus(), workspace=tmp_path / "fresh")
    assert metrics(again) == metrics(fresh)
    assert not any("results read from" in note for note in again.notes)  # searched, not read


def test_flipped_bytes_in_kept_statistics_are_said_and_resampled(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    card = evaluate(["bm25", "bm25?k1=0.9"], tiny_golden(), corpus=tiny_corpus(), workspace=tmp_path / "ws")
    passages = tiny_corpus().passages()
    computed = compare(card, passages=passages, resamples=500)
    compare(card, passages=passages, resamples=500, workspace=tmp_path / "ws")
    (kept,) = (tmp_path / "ws" / "stats").glob("*.json")
    text = kept.read_bytes()
    bound = re.compile(rb'":\[0\.(\d)').search(text, text.index(b'"intervals":'))
    assert bound is not None
    flip(kept, bound.start(1))  # one interval's lower bound moves by a tenth
    capsys.readouterr()
    read = compare(card, passages=passages, resamples=500, workspace=tmp_path / "ws")
    err = capsys.readouterr().err
    assert len(said_damaged(err, kept)) == 1 and "kept statistics" in err, err
    assert scorecard_to_dict(read) == scorecard_to_dict(computed)


@pytest.mark.models
def test_a_flipped_byte_in_an_embedding_entry_is_said_and_embedded_again(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    evaluate("dense:wordllama", tiny_golden(), corpus=tiny_corpus(), workspace=tmp_path / "ws")
    shutil.rmtree(tmp_path / "ws" / "runs")  # so the next evaluation embeds, reading the embedding cache
    entries = sorted((tmp_path / "ws" / "embeddings").rglob("*.gsemb"), key=lambda p: p.stat().st_size)
    entry = entries[-1]  # the passages' vectors
    data = bytearray(entry.read_bytes())
    data[-2] ^= 0x01  # in the last vector: one float's high byte (little-endian float32)
    entry.write_bytes(bytes(data))
    capsys.readouterr()
    again = evaluate("dense:wordllama", tiny_golden(), corpus=tiny_corpus(), workspace=tmp_path / "ws")
    err = capsys.readouterr().err
    assert len(said_damaged(err, entry)) == 1 and "embedding cache entry" in err, err
    fresh = evaluate("dense:wordllama", tiny_golden(), corpus=tiny_corpus(), workspace=tmp_path / "fresh")
    assert metrics(again) == metrics(fresh)
