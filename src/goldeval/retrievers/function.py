"""Your own retriever: a Python function, `module:function` on the CLI, or a saved TREC run file.

A search function is called once per question as `search_fn(question, k)` and returns ids, or
(id, score) pairs, best first. Ids without scores get descending pseudo-scores (k, k-1, ...) so the
order they came in is the order they are ranked in. A function that raises, exceeds its time limit
or returns something unreadable for one question records an error for that question alone; the
other questions keep their results. Spec: `package.module:function[?timeout=SECONDS]`; the CLI's
`--timeout` sets the same option for every function of the run. Saved TREC runs: `retrievers.runfile`.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.options import Option, OptionSet, split_spec
from goldeval.run import Run
from goldeval.types import QuestionId

SearchFn = Callable[[str, int], Iterable[Any]]
"""`search_fn(question, k)` -> ids, or (id, score) pairs, best first."""

OPTIONS = OptionSet("module:function", "package.module:function[?timeout=SECONDS]", (
    Option("timeout", "float", "time limit per question in seconds (unset: none); --timeout sets it", low=0.0,
           low_open=True),
))


class FunctionRetriever:
    """Adapts a per-question search function to the Retriever protocol."""

    def __init__(self, fn: SearchFn, *, name: str | None = None, timeout: float | None = None,
                 spec: str | None = None) -> None:
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", "search_fn"))
        self.timeout = timeout
        self.spec = spec

    @property
    def config(self) -> dict[str, object]:
        """Which function (`module:qualified name`) and its time limit."""
        module, qualname = getattr(self.fn, "__module__", None), getattr(self.fn, "__qualname__", None)
        target = f"{module}:{qualname}" if module and qualname else repr(self.fn)
        return {"spec": self.spec, "kind": "function", "target": target, "timeout": self.timeout,
                "options": {"timeout": self.timeout}}

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        run = Run(self.name)
        for qid, text in queries.items():
            try:
                run.add(qid, normalise_results(self._call(text, top_k), top_k))
            except TimeoutError:
                run.errors[qid] = f"timed out after {self.timeout:g} s"
            except Exception as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
                run.errors[qid] = f"{type(exc).__name__}: {exc}"
        return run

    def _call(self, text: str, top_k: int) -> Any:
        if not self.timeout:
            return self.fn(text, top_k)
        # A daemon thread, not an executor worker: Python joins executor threads at exit, so one
        # call stuck forever would hold the whole command; a daemon thread is abandoned instead.
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["value"] = self.fn(text, top_k)
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
                outcome["error"] = exc

        worker = threading.Thread(target=call, name=f"goldeval-{self.name}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            raise TimeoutError
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")


def normalise_results(raw: Any, top_k: int) -> list[tuple[str, float]]:
    """Turn a search function's answer into (id, score) pairs; raise ValueError on garbage."""
    if isinstance(raw, Mapping):
        return [(str(k), _score(v)) for k, v in raw.items()]
    if raw is None or isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        raise ValueError(f"expected a list of ids or (id, score) pairs, got {type(raw).__name__}: {raw!r:.80}")
    items = list(raw)
    out: list[tuple[str, float]] = []
    for position, item in enumerate(items):
        if isinstance(item, str):
            out.append((item, float(len(items) - position)))
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            out.append((item[0], _score(item[1])))
        else:
            raise ValueError(f"result {position + 1} is {item!r:.80}; expected an id or an (id, score) pair")
    return out


def _score(value: Any) -> float:
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"score {value!r:.40} is not a number") from None
    if score != score:  # NaN would break the ranking rule
        raise ValueError("score is NaN")
    return score


def build(spec: str, ctx: BuildContext) -> FunctionRetriever:
    """Factory for `package.module:function[?timeout=S]` (the module is imported from the current
    directory too)."""
    target, own = split_spec(spec)
    values = OPTIONS.resolve(own, ctx.options, spec=spec)
    module_name, _, attr = target.partition(":")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(
            f"cannot import module {module_name!r} for retriever {spec!r}: {exc}",
            value=spec,
            hint="run from the folder that holds the module, or install it; built-in names: bm25, dense:MODEL",
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(
            f"{module_name} has no function {attr!r}", value=spec, hint="expected module:function with search(question, k)"
        )
    return FunctionRetriever(fn, name=attr, timeout=values.number("timeout"), spec=spec)
