"""Models from the Hugging Face hub by name: `hf:ORG/NAME[@REVISION]` (issue 19).

The name is resolved by `huggingface_hub` itself, with the user's own cache (`HF_HUB_CACHE`, `HF_HOME`) and
token (`HF_TOKEN`, `hf auth login`), to a commit: the snapshot folder of the cache the model loads from,
recorded in the run identity and in the embedding cache's key, so a model pushed again is another model.
goldeval never sets `HF_HUB_OFFLINE`; when the user sets it, only the cache is read, and a model that is not
there is one clear error naming the command that fetches it.

Query and passage prefixes of the common families (e5, bge, gte, nomic, arctic, mxbai) come from
`goldeval/data/hub_families.toml`; a model of no known family gets none, and a warning says so.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldeval.errors import InputError, require

HUB_PREFIX = "hf:"
"""`dense:hf:ORG/NAME`, `rerank:BASE>hf:ORG/NAME`: a model named as the hub names it."""

_FAMILIES_FILE = Path(__file__).resolve().parents[2] / "data" / "hub_families.toml"
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
_PROBE_FILES = ("config.json", "modules.json")
"""A file every sentence-transformers or CrossEncoder repo has at its root (old-style ones: modules.json);
downloading it resolves the revision to a commit the way every later file download will."""


@dataclass(frozen=True)
class Family:
    """A model family's prefixes, from hub_families.toml."""

    name: str
    query_prefix: str
    passage_prefix: str


@dataclass(frozen=True)
class HubModel:
    """A hub name resolved to one commit in the user's cache."""

    repo: str
    revision: str | None
    """The revision asked for (`@REVISION`), None for the default branch."""
    commit: str
    """The snapshot's commit hash, read from the cache: what the weights are."""
    folder: Path
    """The snapshot folder in the cache."""
    cache_dir: str | None
    offline: bool
    trust_remote_code: bool = False
    """Run the repository's own Python code (`?trust_remote_code=true`; nomic-embed-text needs it)."""

    @property
    def name(self) -> str:
        return HUB_PREFIX + self.repo + (f"@{self.revision}" if self.revision else "")

    def identity(self) -> dict[str, object]:
        """What the run identity and the cache key record: the repo, the revision asked for, the commit."""
        return {"hub": self.repo, "revision": self.revision or "main", "commit": self.commit,
                **({"trust_remote_code": True} if self.trust_remote_code else {})}

    def load_options(self) -> dict[str, object]:
        """Keyword arguments for SentenceTransformer / CrossEncoder: that commit, the same cache and mode."""
        return {"revision": self.commit, "cache_folder": self.cache_dir, "local_files_only": self.offline,
                **({"trust_remote_code": True} if self.trust_remote_code else {})}


def is_hub_name(name: str) -> bool:
    return name.startswith(HUB_PREFIX)


def parse_hub_name(name: str) -> tuple[str, str | None]:
    """`hf:ORG/NAME@REV` -> (`ORG/NAME`, `REV`); a malformed name is an InputError."""
    repo, at, revision = name.removeprefix(HUB_PREFIX).partition("@")
    if not _REPO.fullmatch(repo) or (at and not revision.strip()):
        raise InputError(f"{name!r} is not a hub model name", value=name,
                         hint="write it as hf:ORG/NAME or hf:ORG/NAME@REVISION, e.g. hf:BAAI/bge-small-en-v1.5")
    return repo, revision.strip() or None


def hub_offline() -> bool:
    """Whether the user set HF_HUB_OFFLINE: read now (huggingface_hub reads it once, at its import)."""
    from_env = os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")
    require("huggingface_hub", extra="st", purpose="Hugging Face hub models")
    # a submodule the package loads lazily: `huggingface_hub.constants` as an attribute is there only once
    # something imported it (a fresh `goldeval eval --retriever dense:hf:...` was an internal error)
    import huggingface_hub.constants as constants

    return from_env or bool(constants.HF_HUB_OFFLINE)


def hub_cache() -> str | None:
    """HF_HUB_CACHE when the user set it (read now), else None: huggingface_hub's own default."""
    return os.environ.get("HF_HUB_CACHE") or None


def fetch_command(repo: str, revision: str | None) -> str:
    """The command that puts a model in the cache, on a machine with the network."""
    return f"hf download {repo}" + (f" --revision {revision}" if revision else "")


def resolve(name: str) -> HubModel:
    """Resolve `hf:ORG/NAME[@REV]` to a commit in the cache (downloading the probe file when online)."""
    hub = require("huggingface_hub", extra="st", purpose=f"the hub model {name!r}", package="huggingface_hub")
    repo, revision = parse_hub_name(name)
    offline, cache = hub_offline(), hub_cache()
    errors = hub.errors
    path: str | None = None
    for filename in _PROBE_FILES:
        try:
            path = str(hub.hf_hub_download(repo, filename, revision=revision, cache_dir=cache,
                                           local_files_only=offline))
            break
        except errors.GatedRepoError:
            raise InputError(f"hub model {repo} is gated: accept its terms on https://huggingface.co/{repo}",
                             value=name, hint="then log in: `hf auth login`, or set HF_TOKEN") from None
        except errors.RepositoryNotFoundError:
            raise InputError(f"hub model {repo} is not on the Hugging Face hub (or it is private)", value=name,
                             hint="check the name; for a private model log in (`hf auth login`) or set HF_TOKEN") from None
        except errors.RevisionNotFoundError:
            raise InputError(f"revision {revision!r} of hub model {repo} is not on the Hugging Face hub",
                             value=name, hint="use a branch, tag or commit hash the model has") from None
        except errors.LocalEntryNotFoundError:
            if not offline:  # online, yet neither downloaded nor cached: the hub could not be reached
                raise InputError(f"hub model {repo} could not be fetched (no connection?) and is not in the "
                                 "Hugging Face cache", value=name,
                                 hint=f"check the connection, or fetch it where there is one: {fetch_command(repo, revision)}") from None
        except errors.RemoteEntryNotFoundError:
            pass
    if path is None:
        raise _not_cached(name, repo, revision, cache) if offline else InputError(
            f"hub model {repo} has no config.json or modules.json: not a sentence-transformers model", value=name,
            hint="dense:hf: takes sentence-transformers models; rerank's hf: takes CrossEncoder models")
    folder = Path(path).parent
    return HubModel(repo, revision, folder.name, folder, cache, offline)


def _not_cached(name: str, repo: str, revision: str | None, cache: str | None) -> InputError:
    """HF_HUB_OFFLINE is set and the model (or that revision) is not in the cache: say which, and the fix."""
    hub = require("huggingface_hub", extra="st", purpose=f"the hub model {name!r}")
    where = cache or str(hub.constants.HF_HUB_CACHE)
    cached: list[str] = []
    try:
        for info in hub.scan_cache_dir(where).repos:
            if info.repo_id == repo and info.repo_type == "model":
                cached = sorted(r.commit_hash + (f" ({', '.join(sorted(r.refs))})" if r.refs else "")
                                for r in info.revisions)
    except hub.errors.CacheNotFound:
        pass
    fix = f"fetch it once with the network: {fetch_command(repo, revision)} (or unset HF_HUB_OFFLINE)"
    if cached and revision:
        return InputError(f"revision {revision!r} of hub model {repo} is not in the Hugging Face cache {where} "
                          f"(HF_HUB_OFFLINE is set); cached: {'; '.join(cached)}", value=name, hint=fix)
    return InputError(f"hub model {repo} is not in the Hugging Face cache {where} (HF_HUB_OFFLINE is set)",
                      value=name, hint=fix)


def family(repo: str) -> Family | None:
    """The first family of hub_families.toml whose patterns match `repo`, or None."""
    with _FAMILIES_FILE.open("rb") as handle:
        entries: list[dict[str, Any]] = tomllib.load(handle)["family"]
    lowered = repo.lower()
    for entry in entries:
        if any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in entry["match"]):
            return Family(entry["name"], entry["query_prefix"], entry["passage_prefix"])
    return None
