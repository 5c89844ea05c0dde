"""A Run: what a retriever returned for each question, in rank order."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from goldeval.errors import InputError
from goldeval.ids import CHUNK_SEP
from goldeval.memory import gc_paused
from goldeval.ranking import ranked
from goldeval.types import PassageId, QuestionId

if TYPE_CHECKING:
    from goldeval.trecio.ranked import RankedTable

Hits = list[tuple[PassageId, float]]
"""One question's results as (passage id, score) pairs in rank order."""


class Run:
    """Ranked results per question, plus the questions whose retrieval failed and why.

    `results[qid]` is always in rank order (score descending, ties by id descending); build a Run
    through `Run.from_scores` or `Run.add` so that rule is applied once, here, or through
    `Run.add_ranked` for a producer that already ranks by the same rule (see there).

    A run read from a TREC file keeps the file's columns (`columns`, a `goldeval.trecio.RankedTable`) and
    makes `results`, a (id, score) tuple per result, only when something asks for it: scoring reads the
    columns (issue 23: ten million tuples for 100k questions cost more than scoring them). Once made,
    `results` is the run (the columns are let go), so a change to it counts.
    """

    def __init__(self, name: str, results: dict[QuestionId, Hits] | None = None,
                 errors: dict[QuestionId, str] | None = None, *, columns: RankedTable | None = None) -> None:  # fmt: skip
        self.name = name
        self._results: dict[QuestionId, Hits] | None = {} if results is None and columns is None else results
        self._columns = columns if results is None else None
        self._more: list[RankedTable] = []  # selections of the same table gathered by `update`, joined when read
        self._topics: set[QuestionId] | None = None
        self.errors: dict[QuestionId, str] = {} if errors is None else errors

    @property
    def results(self) -> dict[QuestionId, Hits]:
        """Question id -> (passage id, score) pairs in rank order (made from the columns on first use)."""
        if self._results is None:
            columns = self.columns
            self._results = _results_of(columns) if columns is not None else {}
            self._columns, self._more, self._topics = None, [], None
        return self._results

    @results.setter
    def results(self, value: dict[QuestionId, Hits]) -> None:
        self._results, self._columns, self._more, self._topics = value, None, [], None

    @property
    def columns(self) -> RankedTable | None:
        """The run as a ranked TREC table (a run file read by `read_trec`), until `results` is made; else None."""
        if self._more and self._columns is not None:
            self._columns, self._more = self._columns.joined(*self._more), []
        return self._columns

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Run)
        return (self.name, self.results, self.errors) == (other.name, other.results, other.errors)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def __repr__(self) -> str:
        columns = self.columns
        held = f"columns={len(columns)} questions" if columns is not None else f"results={self.results!r}"
        return f"Run(name={self.name!r}, {held}, errors={self.errors!r})"

    def add(self, qid: QuestionId, scores: Mapping[PassageId, float] | Iterable[tuple[PassageId, float]]) -> None:
        self.results[qid] = ranked(scores)

    def add_ranked(self, qid: QuestionId, hits: Hits) -> None:
        """Keep `hits` as given, already in rank order: `add` without its sort, for a retriever that
        ranks by the one rule itself. Re-sorting a BM25 top 100 for every question cost more than the
        numba search of it (issue 12). Safe for `goldeval.retrievers.bm25_kernel`: it orders by float32
        score, whose Python float is the same number (so the same comparisons), then by the passage's
        position in Python's sorted order of the ids (`Postings.id_rank`, `sorted` on `str`, the
        comparison `ranked` makes), both descending; its output through `add_ranked`
        equals it through `add`, ties included (tests/test_bm25_search.py). Anything else: use `add`."""
        self.results[qid] = hits

    def update(self, other: Run) -> None:
        """Add `other`'s results and errors (a question in both: `other`'s). Two selections of one run file
        stay columns (`goldeval.evaluation.searching` gathers a file's answers batch by batch)."""
        mine, theirs = self._columns, other.columns
        if mine is not None and theirs is not None and mine.joins(theirs):
            seen = self._topics if self._topics is not None else set(mine.topics)
            if seen.isdisjoint(theirs.topics):  # joined once, when read (a batch at a time would be quadratic)
                seen.update(theirs.topics)
                self._more.append(theirs)
                self._topics = seen
                self.errors.update(other.errors)
                return
        if mine is None and theirs is not None and not self._results:
            self._results, self._columns, self._more, self._topics = None, theirs, [], None
        else:
            self.results.update(other.results)
        self.errors.update(other.errors)

    def cut(self, depth: int) -> None:
        """Keep each question's first `depth` results."""
        columns = self.columns
        if columns is not None:
            self._columns = columns.cut(depth)
            return
        for qid, hits in self.results.items():
            if len(hits) > depth:
                self.results[qid] = hits[:depth]

    @classmethod
    def from_scores(cls, name: str, scores: Mapping[QuestionId, Mapping[PassageId, float]]) -> Run:
        run = cls(name)
        for qid, docs in scores.items():
            run.add(qid, docs)
        return run

    def to_dict(self) -> dict[QuestionId, dict[PassageId, float]]:
        """Plain dicts, as pytrec_eval and ranx take them."""
        return {qid: dict(hits) for qid, hits in self.results.items()}

    def top(self, k: int) -> Run:
        """A copy cut to the top k results per question."""
        columns = self.columns
        if columns is not None:
            return Run(self.name, errors=dict(self.errors), columns=columns.cut(k))
        return Run(self.name, {q: h[:k] for q, h in self.results.items()}, dict(self.errors))

    def __iter__(self) -> Iterator[QuestionId]:
        columns = self.columns
        return iter(columns.topics if columns is not None else self.results)

    def __len__(self) -> int:
        columns = self.columns
        return len(columns.topics) if columns is not None else len(self.results)

    # --- files: TREC ("qid Q0 docno rank score tag") and JSON ------------------------------------

    @classmethod
    def load(cls, path: str | Path, *, name: str | None = None, fmt: str = "auto") -> Run:
        """Read a run file: JSON when `fmt="json"` or the name ends in `.json`, else TREC (`read_trec`).

        JSON is the file `save` writes (`{"format": "goldeval-run", "name", "results": {qid: [[id,
        score], ...]}, "errors": {qid: why}}`) or plain `{qid: {id: score}}` as ranx and pytrec_eval
        keep runs. Either way the ranking comes from the scores by the one rule (`goldeval.ranking`)."""
        if _format(path, fmt) == "trec":
            return cls.read_trec(path, name)
        return _run_from_json(path, name)

    def save(self, path: str | Path, *, fmt: str = "auto") -> None:
        """Write the run atomically: JSON when `fmt="json"` or the name ends in `.json` (results, name and
        errors), else TREC (`qid Q0 docno rank score tag`; a question that failed or returned nothing
        has no line, as TREC cannot say why)."""
        from goldeval.store.atomic import write_atomic

        if _format(path, fmt) == "trec":
            text, _ = run_text(self.results, self.name, path)  # a Run is in rank order: no score is rewritten
        else:
            text = _run_json(self, path)
        write_atomic(path, text)

    @classmethod
    def read_trec(cls, path: str | Path, name: str | None = None, *, sha256: bool = False) -> Run:
        """Read a TREC run file (`qid Q0 docno rank score tag`), as trec_eval reads it: the rank
        column is ignored, and a bad line is an InputError naming the file and the line. The run keeps
        the file's columns in rank order (`columns`); `results` is made from them when asked for. With
        `sha256`, the columns' table carries the file's SHA-256, taken as it was read."""
        from goldeval.trecio import read_run_table
        from goldeval.trecio.ranked import RankedTable

        with gc_paused():  # a golden set of 100k questions alive: the GC's passes over it cost the reader 0.3 s
            table = read_run_table(path, sha256=sha256, marks=CHUNK_SEP)  # the bytes looked at as they are read
        table.check_text(remember=CHUNK_SEP)  # ids decoded only when needed: one that is not UTF-8 is refused now
        table.forget_lines()  # 8 bytes a result, kept through scoring for nothing
        return cls(name or table.tag or Path(path).stem, columns=RankedTable.of(table))

    @classmethod
    def ranked_from(cls, name: str, topics: list[QuestionId], bounds: list[int], ids: list[PassageId],
                    scores: list[float]) -> Run:  # fmt: skip
        """A Run of hits already in rank order, topic `topics[i]` holding `ids`/`scores[bounds[i]:bounds[i + 1]]`."""
        return cls(name, _hits_of(topics, bounds, ids, scores))


def run_text(ranking: Mapping[str, Sequence[tuple[str, float]]], tag: str, path: str | Path = "the run") -> tuple[str, list[str]]:
    """`qid Q0 docno rank score tag` lines of rankings already in rank order, and the questions whose
    scores had to become reverse ranks so that trec_eval's sort gives back the order."""
    from goldeval.golden.trec import check_trec_ids

    check_trec_ids([(qid, [doc for doc, _ in hits], None) for qid, hits in ranking.items()], path)
    tag = "_".join(tag.split()) or "goldeval"
    lines, rescored = [], []
    for qid, hits in ranking.items():
        pairs = [(doc, float(score)) for doc, score in hits]
        if ranked(pairs) != pairs:
            rescored.append(qid)
            pairs = [(doc, float(len(pairs) - i)) for i, (doc, _) in enumerate(pairs)]
        lines += [f"{qid} Q0 {doc} {rank} {score!r} {tag}\n" for rank, (doc, score) in enumerate(pairs, start=1)]
    return "".join(lines), rescored


_FORMATS = ("auto", "trec", "json")
JSON_FORMAT = "goldeval-run"


def _format(path: str | Path, fmt: str) -> str:
    if fmt not in _FORMATS:
        raise InputError(f"unknown run format {fmt!r}", value=fmt, hint=f"use one of {', '.join(_FORMATS)}")
    if fmt == "auto":
        return "json" if Path(path).suffix.lower() == ".json" else "trec"
    return fmt


def _run_json(run: Run, path: str | Path) -> str:
    bad = [(qid, doc) for qid, hits in run.results.items() for doc, score in hits if not math.isfinite(score)]
    if bad:
        raise InputError(f"cannot write {path}: question `{bad[0][0]}` has a score that is not a finite number "
                         f"for {bad[0][1]!r} ({len(bad)} such result(s))", value=bad[0][1],
                         hint="JSON has no NaN or infinity; fix the retriever's scores")
    data = {"format": JSON_FORMAT, "version": 1, "name": run.name,
            "results": {qid: [[doc, float(score)] for doc, score in hits] for qid, hits in run.results.items()},
            "errors": dict(run.errors)}
    return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _run_from_json(path: str | Path, name: str | None) -> Run:
    from goldeval.corpus.files import read_input_text

    text = read_input_text(Path(path), "run file")
    try:
        data = json.loads(text, parse_constant=lambda c: math.nan)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno,
                         hint="a run is {qid: {doc: score}} or the file Run.save writes") from None
    goldeval_form = isinstance(data, dict) and data.get("format") == JSON_FORMAT
    results = data.get("results") if goldeval_form else data
    if not isinstance(results, dict):
        raise InputError("a JSON run must map question ids to results", path=path, value=type(results).__name__,
                         hint='write {"q1": {"doc-a": 1.5, "doc-b": 0.3}}, or the file Run.save writes')
    stored_name = str(data.get("name") or "") if goldeval_form else ""
    run = Run(name or stored_name or Path(path).stem)
    for qid, hits in results.items():
        run.add(qid, _json_hits(hits, qid, path))
    errors = data.get("errors", {}) if goldeval_form else {}
    if not isinstance(errors, dict) or not all(isinstance(v, str) for v in errors.values()):
        raise InputError("`errors` must map question ids to messages", path=path, value=errors)
    run.errors.update(errors)
    return run


def _json_hits(hits: Any, qid: str, path: str | Path) -> list[tuple[str, float]]:
    """One question's results of a JSON run, checked: ids are strings, each once; scores finite numbers."""
    pairs = list(hits.items()) if isinstance(hits, dict) else hits
    if not isinstance(pairs, list) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
        raise InputError(f"results of question `{qid}` are neither {{id: score}} nor [[id, score], ...]",
                         path=path, value=hits, hint='write {"doc-a": 1.5} or [["doc-a", 1.5]]')
    seen: set[str] = set()
    for doc, score in pairs:
        if not isinstance(doc, str) or not doc:
            raise InputError(f"question `{qid}` has a result id that is not a non-empty string", path=path,
                             value=doc, hint="ids are the corpus's passage ids, as strings")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise InputError(f"question `{qid}` has a score for {doc!r} that is not a finite number", path=path,
                             value=score, hint="scores are numbers, higher is better")
        if doc in seen:
            raise InputError(f"question `{qid}` lists {doc!r} twice", path=path, value=doc,
                             hint="keep each id once per question, as trec_eval requires")
        seen.add(doc)
    return [(doc, float(score)) for doc, score in pairs]


def _hits_of(topics: list[QuestionId], bounds: list[int], ids: list[PassageId], scores: list[float]) -> dict[QuestionId, Hits]:
    """Topic `topics[i]` -> its (id, score) pairs `bounds[i]:bounds[i + 1]`."""
    out: dict[QuestionId, Hits] = {}
    with gc_paused():  # millions of tuples: the cyclic GC's passes over them would cost more than making them
        for qid, a, b in zip(topics, bounds[:-1], bounds[1:], strict=True):
            out[qid] = list(zip(ids[a:b], scores[a:b], strict=True))
    return out


def _results_of(columns: RankedTable) -> dict[QuestionId, Hits]:
    """`Run.results` of a ranked table: one str per distinct id (a run holds each document about once per
    topic that retrieved it, so 100k topics x 100 results keep about a tenth of the strings)."""
    positions = columns.positions()
    ids = columns.table.doc_id_objects()[columns.rows(positions)].tolist()
    columns.table.drop_pages()
    lengths = columns.lengths
    bounds = [0, *np.cumsum(lengths).tolist()]
    return _hits_of(list(columns.topics), bounds, ids, columns.scores(positions).tolist())
