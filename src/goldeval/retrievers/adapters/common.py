"""What every adapter shares: per-question calls through `FunctionRetriever` (its time limit and its
error isolation), the document id read from a metadata key, the retriever's list passed on as it came
(`AdapterRetriever.as_results`), and loading `module:object` from the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from goldeval.errors import InputError
from goldeval.ids import repeat_id
from goldeval.limits import NUMBERS
from goldeval.retrievers.function import FunctionRetriever, import_attribute
from goldeval.retrievers.options import Option
from goldeval.textsafe import warn

ID_KEYS = ("doc_id", "source", "id")
"""The metadata keys tried, in this order, when no `id_key` is given."""
DEFAULT_TIMEOUT = 60.0
"""Seconds one question may take, as for search functions."""

ID_KEY = Option("id_key", "str", "metadata key holding the document id (unset: doc_id, then source, then id, "
                "then the object's own id)")
TIMEOUT = Option("timeout", "float", "time limit per question in seconds; --timeout sets it", DEFAULT_TIMEOUT,
                 low=0.0, low_open=True, high=NUMBERS["timeout"].high)


class AdapterRetriever(FunctionRetriever):
    """A retriever object of another library, called once per question like a search function."""

    def __init__(self, fn: Callable[[str, int], Any], *, name: str, kind: str, details: Mapping[str, object],
                 timeout: float | None, spec: str | None) -> None:
        super().__init__(fn, name=name, timeout=timeout, spec=spec)
        self.kind = kind
        self.details = dict(details)

        self._own_id_said = False
        self._rising_said = False

    def result_id(self, metadata: Mapping[str, Any] | None, own_id: object, id_key: str | None, what: str) -> str:
        """`document_id`, saying once per retriever when a result's own id (`what`) was used: a store
        assigns UUIDs, which never match a golden set, and every question would score 0 in silence."""
        found = document_id(metadata, own_id, id_key)
        if not self._own_id_said and not id_key and not any((metadata or {}).get(k) not in (None, "") for k in ID_KEYS):
            self._own_id_said = True
            warn(f"{self.name}: its results have no {', '.join(ID_KEYS)} metadata, so each counts for its {what} "
                 f"(e.g. {found!r}); an id the store assigned never matches the golden set: give id_key=KEY, the "
                 "metadata key that holds your document ids")
        return found

    def as_results(self, pairs: Iterable[tuple[str, float | None]]) -> list[tuple[str, float]] | list[str]:
        """The retriever's list as it returned it (`passage_ids`), with its scores when every result has one
        and they never rise down the list; else ids alone, so the list's order is the ranking. Scores that
        rise (a distance, lower is nearer) would reverse the list if ranked by score: said once, and dropped."""
        pairs = list(pairs)
        ids = passage_ids(pid for pid, _ in pairs)
        if any(score is None for _, score in pairs):
            return ids
        scores = [float(score or 0.0) for _, score in pairs]
        if any(later > earlier for earlier, later in zip(scores, scores[1:], strict=False)):
            if not self._rising_said:
                self._rising_said = True
                warn(f"{self.name}: its scores rise down its list of results (a distance?), so the list's order "
                     "ranks them and the scores are not used")
            return ids
        return list(zip(ids, scores, strict=True))

    @property
    def config(self) -> dict[str, object]:
        """What was evaluated (the object's class, the id key, the URL...) and the time limit."""
        return {"spec": self.spec, "kind": self.kind, **self.details, "timeout": self.timeout,
                "options": {k: v for k, v in self.details.items() if k in ("id_key", "method", "ids", "scores", "concurrency")}
                | {"timeout": self.timeout}}


def document_id(metadata: Mapping[str, Any] | None, own_id: object, id_key: str | None) -> str:
    """The id a result counts for: `metadata[id_key]`; without a key, the first of `ID_KEYS` present,
    else the object's own id. A result without one is an error for its question, never a guess."""
    metadata = metadata or {}
    if id_key:
        if id_key not in metadata:
            raise ValueError(f"a result has no metadata key {id_key!r} (it has: {', '.join(map(str, metadata)) or 'none'})")
        return str(metadata[id_key])
    for key in ID_KEYS:
        if metadata.get(key) not in (None, ""):
            return str(metadata[key])
    if own_id not in (None, ""):
        return str(own_id)
    raise ValueError("a result has no document id: give id_key=KEY, the metadata key that holds it "
                     f"(its metadata has: {', '.join(map(str, metadata)) or 'nothing'})")


def passage_ids(ids: Iterable[str]) -> list[str]:
    """The ids of a retriever's list in its order, each made unique: a result whose document came earlier in
    the list (two chunks whose metadata names the same document) is `repeat_id(id, position)`, which belongs
    to the same document (`goldeval.ids` rule 4). Nothing is merged or reordered: at doc level the one rule
    of `goldeval.scorecard.scoring` counts the first chunk of a document and never a later one."""
    out: list[str] = []
    seen: set[str] = set()
    for position, pid in enumerate(ids, start=1):
        out.append(repeat_id(pid, position) if pid in seen else pid)
        seen.add(pid)
    return out


def from_package(obj: object, package: str) -> bool:
    """Whether `obj`'s class (or a base class) comes from `package`, without importing it."""
    return any(str(getattr(c, "__module__", "")).split(".")[0] == package for c in type(obj).__mro__)


def load_object(target: str, spec: str) -> tuple[str, Any]:
    """`package.module:name` imported from the current folder too: (name, the object)."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise InputError(f"cannot read {target!r} in {spec!r}", value=spec, hint="write it as package.module:name")
    return attr, import_attribute(module_name, attr, spec, what="retriever",
                                  hint="run from the folder that holds the module, or install it")


def load_adapted(kind: str, rest: str, options: Any, shared: Mapping[str, object],
                 accepts: Callable[[Any], bool], what: str, hint: str) -> tuple[str, Any, Any, str]:
    """The shared start of an adapter factory (`KIND:package.module:object?options`): (name, object,
    resolved option values, spec), refusing an object that is not `what` with `hint`."""
    from goldeval.retrievers.options import split_spec

    spec = f"{kind}:{rest}"
    target, own = split_spec(rest)
    values = options.resolve(own, shared, spec=spec)
    name, obj = load_object(target, spec)
    if not accepts(obj):
        raise InputError(f"{target} is a {type(obj).__name__}, not {what}", value=spec, hint=hint)
    return name, obj, values, spec
