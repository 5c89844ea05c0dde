"""The `transformers:FOLDER` backend with a tiny randomly initialised GPT-2 built here (no download).

The model writes nonsense, but real nonsense: the folder is what `save_pretrained` writes, loaded by
`AutoModelForCausalLM`/`AutoTokenizer` from disk, run through `generate` on the CPU, and its replies go
through the same cache, cleaning and provenance as any backend's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from goldeval.cli import main
from synth_fixtures import PAGES, write_corpus, write_golden

WORDS = sorted({w.lower() for text in PAGES.values() for w in re.findall(r"[A-Za-z]+", text)})


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-gpt2")
    vocab = {"[UNK]": 0, "[EOS]": 1, **{w: i + 2 for i, w in enumerate(WORDS)}}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]")
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(vocab), n_positions=128, n_embd=32, n_layer=1, n_head=2,
                        bos_token_id=1, eos_token_id=1)
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder


def run_synth(tmp: Path, model: Path, *extra: str) -> int:
    return main(["synth", "--corpus", str(write_corpus(tmp)), "--golden", str(write_golden(tmp)),
                 "--llm", f"transformers:{model}", "--n", "3", "--min-chars", "100", "--max-tokens", "12",
                 "--out", str(tmp / "synth.jsonl"), "--workspace", str(tmp / "ws"), "--quiet", *extra])


@pytest.mark.llm
@pytest.mark.st
def test_a_local_causal_lm_folder_writes_questions(tiny_model: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert run_synth(tmp_path, tiny_model) == 0
    err = capsys.readouterr().err
    assert "3 call(s) made" in err
    assert "cut to their last" in err  # the prompt is longer than the model's 128 positions
    records = [json.loads(line) for line in (tmp_path / "synth.jsonl").read_text().splitlines()]
    assert len(records) == 3
    for r in records:
        assert r["question"] and set(r["question"].split()) <= set(WORDS)  # words of the model's vocabulary
        assert r["provenance"]["generator"] == "transformers" and r["provenance"]["model"] == tiny_model.name
        assert len(r["question"].split()) <= 12


@pytest.mark.llm
@pytest.mark.st
def test_local_generation_is_seeded_and_cached(tiny_model: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    assert run_synth(tmp_path / "a", tiny_model) == 0
    first = (tmp_path / "a" / "synth.jsonl").read_text()
    assert run_synth(tmp_path / "a", tiny_model) == 0
    assert "0 call(s) made" in capsys.readouterr().err  # a re-run is answered from the cache
    (tmp_path / "b").mkdir()
    assert run_synth(tmp_path / "b", tiny_model) == 0  # a new workspace: the same seed, the same questions
    second = (tmp_path / "b" / "synth.jsonl").read_text()
    assert [json.loads(x)["question"] for x in first.splitlines()] == \
        [json.loads(x)["question"] for x in second.splitlines()]


@pytest.mark.llm  # the folder is looked at by the transformers backend
def test_a_folder_without_a_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert run_synth(tmp_path, tmp_path / "empty") == 2
    assert "no config.json in the model folder" in capsys.readouterr().err
