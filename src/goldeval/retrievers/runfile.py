"""A saved TREC run file as a retriever: `run:path/to/file.trec`.

The file answers each question with what it holds for the question's id, cut at top_k. It takes
no options; a path that itself contains `?` is read whole when that file exists.

A score that is NaN or infinite is refused, naming the line and the question (issue 9): the rank of
such a line would depend on the order of the file, not on its score. A document listed twice for a
topic is refused when the file is read (`metrics.trec.read_run`, as trec_eval does); a search
function's repeated id is refused the same way (`retrievers.function`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from operator import itemgetter
from pathlib import Path

import numpy as np

from goldeval.errors import InputError
from goldeval.fingerprint import file_fingerprint
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.options import OptionSet, split_spec
from goldeval.run import Run
from goldeval.textsafe import warn
from goldeval.types import QuestionId

OPTIONS = OptionSet("run", "run:FILE")


class RunFileRetriever:
    """A saved run: answers each question with what the file holds for its id."""

    def __init__(self, run: Run, *, path: str | Path | None = None) -> None:
        refuse_non_finite(run, path)
        self.run = run
        self.name = run.name
        self.path = Path(path) if path is not None else None
        self.config: dict[str, object] = {
            "spec": f"run:{path}" if path is not None else None, "kind": "run", "run_name": run.name,
            "path": str(path) if path is not None else None,
            "sha256": _sha256(run, self.path), "options": {},
        }

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        topics = self.run.columns.index if self.run.columns is not None else self.run.results
        missing = [q for q in queries if q not in topics]
        if missing and len(missing) == len(queries) and len(queries) > 1:
            raise InputError(
                f"run {self.name!r} has results for none of the {len(queries)} questions",
                value=", ".join(list(topics)[:3]),
                hint=f"its topic ids (e.g. {', '.join(list(topics)[:3])}) must be the golden set's "
                f"question ids (e.g. {', '.join(list(queries)[:3])})",
            )
        if missing:
            warn(f"run {self.name!r} has no results for {len(missing)} question(s), e.g. "
                 f"{', '.join(missing[:5])}; they count as misses")
        if self.run.columns is not None:  # the file's columns, selected: no tuple per result (issue 23)
            return Run(self.name, columns=self.run.columns.select(list(queries), top_k))
        out = Run(self.name)
        for qid in queries:
            out.results[qid] = self.run.results.get(qid, [])[:top_k]
        return out


def _sha256(run: Run, path: Path | None) -> str | None:
    """The file's SHA-256: the one its reader took as it read the run from `path`, else read again."""
    if path is None:
        return None
    table = run.columns.table if run.columns is not None else None
    if table is not None and table.sha256 is not None and table.path == path:
        return table.sha256
    return file_fingerprint(path)


def refuse_non_finite(run: Run, path: str | Path | None) -> None:
    """InputError naming the first (question, id) whose score is NaN or infinite, with its line."""
    if run.columns is not None:  # the file's scores in one pass; the tuples only to name a bad one
        if np.isfinite(run.columns.table.value).all():
            return
    else:
        try:  # a sum is finite only if every score is: one C-level pass per question (issue 23)
            if all(math.isfinite(math.fsum(map(itemgetter(1), hits))) for hits in run.results.values()):
                return
        except OverflowError:
            pass  # finite scores whose sum overflows: look one by one
    for qid, hits in run.results.items():
        for pid, score in hits:
            if not math.isfinite(score):
                line = _line_of(Path(path), qid, pid) if path is not None else None
                raise InputError(f"question {qid!r}: the score of {pid!r} is {score}, not a finite number",
                                 path=path, line=line, value=score,
                                 hint="every score must be a number; NaN and infinity would rank by line order")


def _line_of(path: Path, qid: str, pid: str) -> int | None:
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            parts = line.split()
            if len(parts) >= 6 and parts[0] == qid and parts[2] == pid:
                return lineno
    return None


def split(rest: str) -> tuple[dict[str, str], list[str]]:
    """The spec's options (none are declared, so any is an error naming that), unless the whole
    text is an existing file's path."""
    return ({}, []) if "?" not in rest or Path(rest).exists() else (split_spec(rest)[1], [])


def build(rest: str, ctx: BuildContext) -> RunFileRetriever:
    """Factory for `run:path/to/file.trec`."""
    own, _ = split(rest)
    OPTIONS.resolve(own, ctx.options, spec=f"run:{rest}")
    path = rest.partition("?")[0] if own else rest
    return RunFileRetriever(Run.read_trec(path, sha256=True), path=path)
