"""A saved TREC run file as a retriever: `run:path/to/file.trec`.

The file answers each question with what it holds for the question's id, cut at top_k. It takes
no options; a path that itself contains `?` is read whole when that file exists.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path

from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.options import OptionSet, split_spec
from goldeval.run import Run
from goldeval.types import QuestionId

OPTIONS = OptionSet("run", "run:FILE")


class RunFileRetriever:
    """A saved run: answers each question with what the file holds for its id."""

    def __init__(self, run: Run, *, path: str | Path | None = None) -> None:
        self.run = run
        self.name = run.name
        self.path = Path(path) if path is not None else None
        self.config: dict[str, object] = {
            "spec": f"run:{path}" if path is not None else None, "kind": "run", "run_name": run.name,
            "path": str(path) if path is not None else None,
            "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest() if self.path else None, "options": {},
        }

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        missing = [q for q in queries if q not in self.run.results]
        if missing and len(missing) == len(queries) and len(queries) > 1:
            raise InputError(
                f"run {self.name!r} has results for none of the {len(queries)} questions",
                value=", ".join(list(self.run.results)[:3]),
                hint=f"its topic ids (e.g. {', '.join(list(self.run.results)[:3])}) must be the golden set's "
                f"question ids (e.g. {', '.join(list(queries)[:3])})",
            )
        if missing:
            print(f"goldeval: warning: run {self.name!r} has no results for {len(missing)} question(s), e.g. "
                  f"{', '.join(missing[:5])}; they count as misses", file=sys.stderr)
        out = Run(self.name)
        for qid in queries:
            out.results[qid] = self.run.results.get(qid, [])[:top_k]
        return out


def split(rest: str) -> tuple[dict[str, str], list[str]]:
    """The spec's options (none are declared, so any is an error naming that), unless the whole
    text is an existing file's path."""
    return ({}, []) if "?" not in rest or Path(rest).exists() else (split_spec(rest)[1], [])


def build(rest: str, ctx: BuildContext) -> RunFileRetriever:
    """Factory for `run:path/to/file.trec`."""
    own, _ = split(rest)
    OPTIONS.resolve(own, ctx.options, spec=f"run:{rest}")
    path = rest.partition("?")[0] if own else rest
    return RunFileRetriever(Run.read_trec(path), path=path)
