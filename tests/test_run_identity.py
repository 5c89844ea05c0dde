"""What a scorecard records about the run: corpus and golden fingerprints, versions, machine, configs."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import goldeval
from golden_factory import make_golden
from goldeval import evaluate
from goldeval.corpus.model import Corpus, Document
from goldeval.scorecard import RunIdentity, Scorecard

TEXTS = {
    "a.md": "# Alpha\n\nThe first alpha paragraph.\n\n# More alpha\n\nA second alpha paragraph, longer.",
    "b.md": "Bravo: a short document about bravo.",
}


def corpus(texts: dict[str, str] = TEXTS) -> Corpus:
    return Corpus({d: Document(d, t) for d, t in texts.items()})


def golden():  # type: ignore[no-untyped-def]
    return make_golden([("q1", "alpha paragraph", {"a.md": 1}), ("q2", "bravo", {"b.md": 1})], path="g.jsonl",
                       version=3)


def fixed(question: str, k: int) -> list[str]:
    return ["a.md", "b.md"][:k]


def identity(**kwargs) -> RunIdentity:  # type: ignore[no-untyped-def]
    return evaluate("bm25", golden(), corpus=kwargs.pop("docs", corpus()), k=(1,), **kwargs).identity


def test_the_corpus_fingerprint_is_the_passages_as_indexed() -> None:
    whole, again = identity(), identity()
    assert len(whole.corpus_fingerprint) == 64 and whole.corpus_fingerprint == again.corpus_fingerprint
    chunked = identity(chunking="40:0")
    other_chunks = identity(chunking="60:10")
    assert len({whole.corpus_fingerprint, chunked.corpus_fingerprint, other_chunks.corpus_fingerprint}) == 3
    assert identity(chunking="40:0").corpus_fingerprint == chunked.corpus_fingerprint
    edited = identity(docs=corpus({**TEXTS, "b.md": TEXTS["b.md"] + " Edited."}))
    assert edited.corpus_fingerprint != whole.corpus_fingerprint
    assert (whole.chunking, chunked.chunking) == (None, "40:0")


def test_the_corpus_fingerprint_is_also_in_the_corpus_summary_and_empty_without_a_corpus() -> None:
    card = evaluate("bm25", golden(), corpus=corpus(), k=(1,))
    assert card.corpus["fingerprint"] == card.identity.corpus_fingerprint
    assert card.corpus["n_passages"] == 2
    bare = evaluate(fixed, golden(), k=(1,))
    assert bare.identity.corpus_fingerprint == "" and bare.corpus["fingerprint"] == ""


def test_golden_fingerprint_version_goldeval_version_time_and_machine() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    card = evaluate(fixed, golden(), k=(1,))
    ident = card.identity
    assert ident.golden_fingerprint == golden().fingerprint() == card.golden["fingerprint"]
    assert ident.golden_version == 3 == card.golden["version"]
    assert ident.goldeval_version == goldeval.__version__ == card.version
    created = datetime.fromisoformat(ident.created)
    assert before <= created <= datetime.now(UTC) + timedelta(seconds=1)
    assert ident.machine["cores"] == os.cpu_count()
    assert ident.machine["python"] == platform.python_version()
    assert ident.machine["platform"] == f"{platform.system()} {platform.machine()}"


def test_a_changed_judgment_changes_the_golden_fingerprint() -> None:
    one = evaluate(fixed, golden(), k=(1,)).identity.golden_fingerprint
    regraded = make_golden([("q1", "alpha paragraph", {"a.md": 2}), ("q2", "bravo", {"b.md": 1})])
    assert evaluate(fixed, regraded, k=(1,)).identity.golden_fingerprint != one


def test_each_retriever_records_its_resolved_config_with_the_depth() -> None:
    card = evaluate({"bm25": "bm25", "plain": "bm25?stem=none", "mine": fixed}, golden(), corpus=corpus(), k=(1,),
                    depth=7)
    bm25, plain, mine = (card.retriever(n).config for n in ("bm25", "plain", "mine"))
    assert bm25["kind"] == "bm25" and bm25["spec"] == "bm25" and bm25["depth"] == 7
    assert bm25["implementation"].startswith("bm25s ")
    assert bm25["options"]["stem"] == "english" and plain["options"]["stem"] == "none"
    assert set(bm25["options"]) >= {"stem", "stopwords", "k1", "b"}
    assert mine["kind"] == "function" and mine["target"] == f"{__name__}:fixed" and mine["depth"] == 7


def test_the_recorded_depth_is_the_depth_searched_not_the_one_asked_for() -> None:
    card = evaluate(fixed, golden(), k=(1,), metrics=["recall@30"], depth=10)
    assert card.depth == 30 and card.retrievers[0].config["depth"] == 30


def test_identity_and_config_survive_the_results_file(tmp_path: Path) -> None:
    card = evaluate({"bm25": "bm25", "mine": fixed}, golden(), corpus=corpus(), k=(1,), chunking="40:0")
    card.save(tmp_path / "r.json")
    loaded = Scorecard.load(tmp_path / "r.json")
    assert loaded.identity == card.identity
    assert [r.config for r in loaded.retrievers] == [r.config for r in card.retrievers]


@pytest.mark.parametrize("chunking", [None, "40:0"])
def test_passages_fingerprint_changes_with_any_passage_id_or_text(chunking: str | None) -> None:
    from goldeval.corpus.chunking import parse_chunk_spec
    from goldeval.corpus.model import Passage
    from goldeval.evaluation import passages_fingerprint

    passages = corpus().passages(parse_chunk_spec(chunking) if chunking else None)
    base = passages_fingerprint(passages)
    first = passages[0]
    renamed = [Passage(first.id + "x", first.doc_id, first.text), *passages[1:]]
    retexted = [Passage(first.id, first.doc_id, first.text + " "), *passages[1:]]
    assert len({base, passages_fingerprint(renamed), passages_fingerprint(retexted)}) == 3
    assert passages_fingerprint(list(reversed(passages))) != base  # the order of the index counts


def test_the_golden_fingerprint_is_kept_until_the_set_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    # a frozen set's load, its scorecard and every configuration of a sweep ask for it: 0.3 s at 100k questions
    from dataclasses import replace

    from goldeval.golden import model
    from goldeval.golden.model import Judgment, Question

    made: list[object] = []
    real = model.plain_fingerprint
    monkeypatch.setattr(model, "plain_fingerprint", lambda value: made.append(value) or real(value))
    g = golden()
    first = g.fingerprint()
    assert g.fingerprint() == first and len(made) == 1  # asked again: kept
    g.qrels.add(Judgment("q1", "c.md", 1))  # a judgment added: made again, as a set made anew with it
    added = make_golden([("q1", "alpha paragraph", {"a.md": 1, "c.md": 1}), ("q2", "bravo", {"b.md": 1})])
    assert g.fingerprint() == added.fingerprint() != first and len(made) == 3
    g.questions[1] = replace(g.questions[1], question="bravo, reworded")  # a question replaced in place
    reworded = g.fingerprint()
    assert reworded not in (first, added.fingerprint()) and len(made) == 4
    g.questions.append(Question("q3", "charlie"))  # a question added
    charlie = g.fingerprint()
    assert charlie not in (first, reworded) and len(made) == 5
    assert g.fingerprint() and len(made) == 5
    g.qrels.add_grades("q3", {"c.md": 2})  # grades of a question that had none
    graded = g.fingerprint()
    assert graded != charlie and len(made) == 6
    g.qrels.add_grades("q2", {"d.md": 1, "e.md": 0})  # grades added to a question that had some
    assert g.fingerprint() not in (charlie, graded) and len(made) == 7
    assert g.qrels.grades("q2") == {"b.md": 1, "d.md": 1, "e.md": 0}
