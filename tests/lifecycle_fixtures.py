"""A golden set with a life, for the page's lifecycle views: synthetic questions beside hand-written ones,
a frozen version, two recorded evaluations in a run history, and a golden-set file label fixes write into.

The synthetic questions below are TEST DATA, written by hand for these tests the way a generator writes
them (reading the passage, borrowing its words), with `Provenance(kind="synthetic")` and the passage
they came from. goldeval ships no generated question; nothing here leaves the tests.
"""

from __future__ import annotations

import copy
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import overlap_search, tiny_corpus, tiny_golden

__all__ = ["SYNTHETIC", "World", "card_of", "evaluate_world", "golden_with_synthetic", "overlap_search", "world"]
from goldeval.golden.model import GoldenSet, Judgment, Provenance, Question

SYNTHETIC = [  # test data (see the module docstring): (id, question, source passage)
    ("syn-01", "how does git stash pop bring my uncommitted changes back later", "git/stash.md"),
    ("syn-02", "record changes to the repository with a commit message", "git/commit.md"),
    ("syn-03", "how does json.dumps turn objects into JSON strings", "python/json.md"),
    ("syn-04", "time.sleep pauses the program for a number of seconds", "python/time.md"),
    ("syn-05", "match, search and replace text patterns with regular expressions", "python/re.md"),
]


def golden_with_synthetic() -> GoldenSet:
    """The tiny hand-written set plus the synthetic test questions above."""
    golden = tiny_golden()
    for i, (qid, text, source) in enumerate(SYNTHETIC):
        details = {"source_passage": source, "generator": "test data written by hand for goldeval's tests"}
        golden.questions.append(Question(qid, text, "answerable", ("synthetic-test",), Provenance("synthetic", details),
                                         line=100 + i))
        golden.qrels.add(Judgment(qid, source, 1))
    return golden


@dataclass
class World:
    golden: Path
    """The golden-set JSONL, frozen as version 1."""
    workspace: Path
    """Holds the run history: two evaluations on version 1."""
    results: Path
    """The second evaluation's results JSON."""
    cards: list[dict[str, Any]]
    """Both evaluations' scorecards, oldest first."""

    def golden_copy(self, folder: Path) -> Path:
        """A copy of the golden set (with its versions) that a test may change."""
        from goldeval.golden.versions import sidecar_path

        folder.mkdir(parents=True, exist_ok=True)
        out = folder / self.golden.name
        shutil.copy(self.golden, out)
        shutil.copy(sidecar_path(self.golden), sidecar_path(out))
        return out


def evaluate_world(golden_path: Path, workspace: Path, retrievers: list[Any]) -> dict[str, Any]:
    """A real evaluation with statistics (leakage included) of the golden-set file."""
    from goldeval.evaluation import evaluate
    from goldeval.golden.io import load_golden
    from goldeval.stats.annotate import compare

    corpus = tiny_corpus()
    golden = load_golden(golden_path)
    card = evaluate(retrievers, golden_path, corpus=corpus, k=(1, 3, 5, 10), depth=20, workspace=workspace)
    return compare(card, resamples=300, seed=1, passages=corpus.passages(None), golden=golden).to_dict()


def overlap_search_v1(question: str, k: int) -> list[tuple[str, float]]:
    """An earlier version of the user's search function, with an off-by-one bug the second run fixed: it
    drops its best result when it has others. Same name, so the history follows one retriever."""
    found = overlap_search(question, k + 1)
    return (found[1:] if len(found) > 1 else found)[:k]


overlap_search_v1.__name__ = "overlap_search"

_WORLD: dict[str, World] = {}


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """Built once per session: freeze, evaluate twice (BM25 with two settings and a search function),
    record both runs in the history, save the second as results.json."""
    if "world" in _WORLD:
        return _WORLD["world"]
    from goldeval.golden.io import load_golden, write_golden_jsonl
    from goldeval.golden.versions import freeze
    from goldeval.history.db import History
    from goldeval.scorecard import Scorecard

    root = tmp_path_factory.mktemp("world")
    golden_path = root / "golden.jsonl"
    write_golden_jsonl(golden_with_synthetic(), golden_path)
    freeze(load_golden(golden_path), by="tests")
    workspace = root / "ws"
    cards = []
    for i, search in enumerate((overlap_search_v1, overlap_search)):
        card = evaluate_world(golden_path, root / f"cache{i}", ["bm25", search])  # a fresh cache: run it again
        History.of(workspace).record(Scorecard.from_dict(card))
        cards.append(card)
    results = root / "results.json"
    Scorecard.from_dict(cards[-1]).save(results)
    _WORLD["world"] = World(golden_path, workspace, results, cards)
    return _WORLD["world"]


def card_of(world: World) -> dict[str, Any]:
    return copy.deepcopy(world.cards[-1])
