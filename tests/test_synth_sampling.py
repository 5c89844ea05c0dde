"""Passage sampling, the prompt template and reply cleaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeval.corpus.model import Corpus, Document, Passage
from goldeval.errors import InputError
from goldeval.golden.model import GoldenSet, Judgment, Qrels, Question
from goldeval.synth.backends import Settings, parse_backend
from goldeval.synth.pipeline import covered_docs
from goldeval.synth.prompt import PromptTemplate, clean_reply, default_prompt, load_prompt
from goldeval.synth.sampling import sample_passages

LONG = "x " * 150


def corpus(sizes: dict[str, int]) -> Corpus:
    docs = {f"{folder}/d{i}.md": Document(f"{folder}/d{i}.md", LONG) for folder, n in sizes.items() for i in range(n)}
    return Corpus(docs)


def test_draws_are_balanced_across_folders_then_documents() -> None:
    c = corpus({"big": 20, "mid": 3, "small": 1})
    sample = sample_passages(c.passages(), 7, seed=1, corpus=c)
    assert len(sample.passages) == 7 and len({p.id for p in sample.passages}) == 7
    assert sample.groups == {"big": 3, "mid": 3, "small": 1}  # round the folders, not 7 from the largest


def test_the_same_seed_draws_the_same_passages_and_another_seed_others() -> None:
    c = corpus({"a": 30, "b": 30})
    ids = lambda seed: [p.id for p in sample_passages(c.passages(), 10, seed=seed, corpus=c).passages]  # noqa: E731
    assert ids(3) == ids(3)
    assert ids(3) != ids(4)


def test_short_and_excluded_passages_are_skipped_and_counted() -> None:
    passages = [Passage("a.md", "a.md", LONG), Passage("b.md", "b.md", "short"), Passage("c.md", "c.md", LONG)]
    sample = sample_passages(passages, 10, exclude_docs={"c.md"})
    assert [p.id for p in sample.passages] == ["a.md"]
    assert (sample.total, sample.too_short, sample.excluded) == (3, 1, 1)


def test_covered_documents_are_those_of_hand_written_questions() -> None:
    from goldeval.golden.model import Provenance

    golden = GoldenSet(
        [Question("h", "q one"), Question("s", "q two", provenance=Provenance("synthetic")), Question("o", "q", "off_topic")],
        Qrels([Judgment("h", "a.md#2", 1), Judgment("h", "b.md", 0), Judgment("s", "c.md", 1)]),
    )
    assert covered_docs(golden) == {"a.md#2", "a.md"}  # judged-not-relevant and synthetic ones do not cover


def test_the_default_prompt_asks_for_a_learners_question_in_their_own_words() -> None:
    template = default_prompt()
    text = template.render(Passage("git/stash.md#1", "git/stash.md", "Stash saves {braces} changes.", "Git > Stash"))
    assert "Title: Git > Stash" in text and "Stash saves {braces} changes." in text
    for idea in ("learner", "search box", "own words", "title", "heading", "problem", "task", "25 words",
                 "question only"):
        assert idea in text
    assert len(template.hash) == 16 and template.hash == default_prompt().hash


def test_a_prompt_file_must_hold_the_passage(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("Q for: {passage} ({title}) {\"json\": 1}")
    bad.write_text("no field here")
    assert load_prompt(good).render(Passage("a", "a", "TEXT", "T")) == 'Q for: TEXT (T) {"json": 1}'
    with pytest.raises(InputError, match=r"prompt template has no \{passage\} field"):
        load_prompt(bad)
    assert PromptTemplate("{passage}").hash != load_prompt(good).hash


@pytest.mark.parametrize(("reply", "question"), [
    ("How do I stash changes?", "How do I stash changes?"),
    ('  "How do I stash changes?"  \n', "How do I stash changes?"),
    ("Question: how do I stash?\nThis passage explains...", "how do I stash?"),
    ("1. how do I stash?", "how do I stash?"),
    ("2FA login fails after reset", "2FA login fails after reset"),
    ("\n\n   \n", ""),
])
def test_replies_are_cleaned_to_the_question(reply: str, question: str) -> None:
    assert clean_reply(reply) == question


@pytest.mark.parametrize(("spec", "message"), [
    ("anthropic:", "names no model|cannot read backend spec"),
    ("openai:m?colour=red", "unknown option"),
    ("openai:m?base_url", "cannot read option"),
    ("nonsense", "cannot read backend spec"),
    ("transformers:/no/such/folder", "model folder not found"),
])
def test_bad_backend_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_backend(spec)


def test_backend_specs_parse_without_importing_or_calling_anything() -> None:
    spec = parse_backend("openai:llama3.1:8b?base_url=http://localhost:11434/v1")
    assert (spec.kind, spec.target, spec.options["base_url"], spec.paid) == (
        "openai", "llama3.1:8b", "http://localhost:11434/v1", False)
    assert parse_backend("openai:gpt-x").paid and parse_backend("anthropic:m").paid
    fn = parse_backend("mypackage.gen:write")
    assert (fn.kind, fn.target) == ("function", "mypackage.gen:write")
    assert "KEY" not in parse_backend("openai:m?key_env=KEY").identity(Settings())
