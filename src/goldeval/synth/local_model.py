"""`transformers:FOLDER`: a causal language model the user brings, run locally on the CPU.

The folder is what `save_pretrained` writes (config.json, the weights, the tokenizer files); nothing is
downloaded (`local_files_only`). A tokenizer with a chat template gets the prompt as one user message;
one without gets the bare prompt. Sampling is seeded per prompt (`Settings.seed` plus a hash of the
prompt), so the same passage gives the same question on every run; temperature 0 decodes greedily.
Generation runs one prompt at a time (`max_concurrency = 1`): one model, one set of CPU threads.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from goldeval.errors import InputError, require
from goldeval.fingerprint import text_fingerprint
from goldeval.remote.retry import Verdict
from goldeval.synth.backends import Settings


class TransformersBackend:
    """Local generation with `AutoModelForCausalLM.generate`."""

    kind = "transformers"
    max_concurrency: int | None = 1

    def __init__(self, folder: Path, settings: Settings) -> None:
        transformers = require("transformers", extra="llm", purpose="the transformers backend")
        self._torch = require("torch", extra="st", purpose="the transformers backend", package="torch==2.13.0")
        if not (folder / "config.json").is_file():
            raise InputError("transformers backend: no config.json in the model folder", path=folder,
                             hint="give the folder that save_pretrained wrote (config.json, weights, tokenizer)")
        self.model = folder.name
        self._settings = settings
        self._lock = threading.Lock()
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            self._model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise InputError(f"transformers backend: cannot load the model: {exc}", path=folder,
                             hint="the folder needs a causal LM and its tokenizer, as save_pretrained writes them") from None
        self._model.eval()
        self._warned = False

    def generate(self, prompt: str) -> str:
        ids = self._encode(prompt)
        torch = self._torch
        seed = self._settings.seed + int(text_fingerprint(prompt, length=8), 16)
        sampling: dict[str, Any] = {"do_sample": False}
        if self._settings.temperature > 0:
            sampling = {"do_sample": True, "temperature": self._settings.temperature}
        pad = self._tokenizer.pad_token_id
        if pad is None:
            pad = self._tokenizer.eos_token_id
        with self._lock, torch.no_grad():
            torch.manual_seed(seed)
            out = self._model.generate(ids, attention_mask=torch.ones_like(ids),
                                       max_new_tokens=self._settings.max_tokens, pad_token_id=pad, **sampling)
        return str(self._tokenizer.decode(out[0][ids.shape[1]:], skip_special_tokens=True))

    def _encode(self, prompt: str) -> Any:
        tok = self._tokenizer
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                           add_generation_prompt=True)
        else:
            text = prompt.rstrip() + "\n"
        ids = tok(text, return_tensors="pt", add_special_tokens=not getattr(tok, "chat_template", None))["input_ids"]
        limit = getattr(self._model.config, "max_position_embeddings", None) or getattr(
            self._model.config, "n_positions", None)
        if limit and ids.shape[1] + self._settings.max_tokens > limit:
            keep = max(1, limit - self._settings.max_tokens)
            if not self._warned:
                print(f"goldeval: warning: prompts longer than the model's {limit} positions are cut to their "
                      f"last {keep} tokens", file=sys.stderr)
                self._warned = True
            ids = ids[:, -keep:]
        return ids

    def classify(self, exc: BaseException) -> Verdict:
        return Verdict("fatal", f"the local model failed: {type(exc).__name__}: {exc}")
