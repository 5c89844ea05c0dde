"""trec_eval, in goldeval: TREC qrels and runs, trec_eval's measure names and syntax, and its output.

`goldeval trec QRELS RUN [-q] [-c] [-l N] [-m MEASURE]...` reproduces `trec_eval` 10.0 (NIST,
usnistgov/trec_eval) for the measures in `MEASURES`, to its 4 printed decimals, on its own test
vectors. Behaviour matched, with the trec_eval source it comes from:
- ranking: score descending, ties by document id descending (`form_res_rels.c`), via the engine.
- topics: only topics present in both the qrels and the run are evaluated (`trec_eval.c`); with
  `complete` (-c) every qrels topic is, a topic with no results scoring 0. Topics print in qrels
  id order (trec_eval sorts them with strcmp, which Python's str order equals).
- judgments: relevant means >= level (-l, default 1); a negative judgment is "in the pool but
  unjudged" (`RELVALUE_UNJUDGED`): never relevant, never counted as judged non-relevant.
- output: `%-22s\\t%s\\t%6.4f`, measures in trec_eval's order (`measures.c`), cut-offs sorted.
Files are read by `goldeval.trecio` (trec_eval's file rules); `evaluate_trec_files` judges their
columns directly (`trec_judge`), `evaluate_trec` judges dicts (`compute.judge_scores`): same values.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from goldeval import jit
from goldeval.errors import InputError
from goldeval.metrics import compute as engine
from goldeval.metrics.trec_judge import judge_tables
from goldeval.metrics.trec_measures import MEASURES, Params, TrecMeasure
from goldeval.trecio import read_qrels, read_qrels_table, read_run, read_run_table

__all__ = ["MeasureRequest", "TrecReport", "evaluate_trec", "evaluate_trec_files", "parse_measures", "read_qrels",
           "read_run"]  # fmt: skip

SUMMARY_ONLY = ("runid", "num_q")
"""Printed in the summary only: the run's tag and the number of topics averaged."""
TREC_ORDER = ["runid", "num_q", *MEASURES]
NOT_COMPUTED = frozenset({"dcg", "ideal_dcg"})
"""trec_eval measures goldeval does not compute: older versions' `all_trec` had them, 10.0's does not."""
NICKNAMES: dict[str, list[str]] = {
    "official": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"],
    "all_trec": TREC_ORDER,
    "set": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"],
}  # fmt: skip
"""trec_eval's measure families (`measures.c`), restricted to the measures goldeval computes."""


# --- -m parsing -----------------------------------------------------------------------------------


@dataclass
class MeasureRequest:
    """Measures to print, each with its parameters (None: the measure's defaults)."""

    params: dict[str, Params | None] = field(default_factory=dict)
    explicit: set[str] = field(default_factory=set)

    def ordered(self) -> list[str]:
        return [name for name in TREC_ORDER if name in self.params]


def parse_measures(specs: Sequence[str]) -> MeasureRequest:
    """Read trec_eval's `-m` syntax: `map`, `P.5,10`, `ndcg_cut.10`, `iprec_at_recall.0.5`, or a family
    (`official`, `all_trec`, `set`). No spec means `official`, as in trec_eval."""
    request = MeasureRequest()
    for spec in specs or ["official"]:
        name, dot, raw = spec.partition(".")
        if name in NICKNAMES and not dot:
            for member in NICKNAMES[name]:
                request.params.setdefault(member, None)
            continue
        if name in SUMMARY_ONLY and not dot:
            request.params.setdefault(name, None)
            continue
        if name in NOT_COMPUTED:
            raise InputError(
                f"trec_eval measure {name!r} is not computed by goldeval",
                value=spec,
                hint="computed: " + ", ".join(TREC_ORDER),
            )
        if name not in MEASURES:
            close = difflib.get_close_matches(name, [*TREC_ORDER, *NICKNAMES], n=1)
            raise InputError(
                f"unknown trec_eval measure {name!r}",
                value=spec,
                hint=(f"did you mean {close[0]!r}? " if close else "") + "write it like map, P.5,10 or ndcg_cut.10",
            )
        measure = MEASURES[name]
        params = _parse_params(measure, raw, spec) if dot else None
        if name not in request.params or request.params[name] is None:
            request.params[name] = params  # trec_eval keeps the first parameters given for a measure
        if dot:
            request.explicit.add(name)
    return request


def _parse_params(measure: TrecMeasure, raw: str, spec: str) -> Params:
    if measure.params is None:
        raise InputError(f"measure {measure.name!r} takes no parameters", value=spec, hint=f"write -m {measure.name}")
    try:
        values = [float(part) for part in raw.split(",")]
    except ValueError:
        raise InputError(
            f"cannot read the parameters of {spec!r}", value=spec, hint="comma-separated numbers, like P.5,10"
        ) from None
    if measure.single_value:
        return tuple(values)
    if measure.integer_params and any(v <= 0 or not v.is_integer() for v in values):
        raise InputError(f"cut-offs of {spec!r} must be positive integers", value=spec, hint="like P.5,10")
    if len(set(values)) != len(values):
        raise InputError(f"duplicate cut-offs in {spec!r}", value=spec, hint="give each cut-off once")
    return tuple(sorted(values))  # trec_eval sorts cut-offs (meas_init.c)


# --- evaluation and output ------------------------------------------------------------------------


@dataclass
class TrecReport:
    """Per-topic values and the summary, as trec_eval computes and prints them."""

    runid: str
    topics: list[str]
    rows: list[tuple[str, str, np.ndarray]]
    """(printed name, value kind, one value per topic) in print order."""

    def summary(self) -> list[tuple[str, str]]:
        """(name, formatted value) of each summary line, `runid` and `num_q` included."""
        out: list[tuple[str, str]] = []
        for name, kind, values in self.rows:
            if kind == "runid":
                out.append((name, self.runid))
            elif kind == "num_q":
                out.append((name, str(len(self.topics))))
            elif kind == "long":
                out.append((name, str(int(values.sum()))))
            elif kind == "string":
                continue
            elif kind == "gm":
                out.append((name, _f4(math.exp(values.mean()) if len(values) else 0.0)))
            else:
                out.append((name, _f4(values.mean() if len(values) else 0.0)))
        return out

    def per_topic(self) -> list[tuple[str, str, str]]:
        """(name, topic, formatted value) for -q: topic by topic, measures in print order."""
        out: list[tuple[str, str, str]] = []
        shown = [(n, k, v) for n, k, v in self.rows if k in ("float", "long", "string")]
        for t, topic in enumerate(self.topics):
            for name, kind, values in shown:
                out.append((name, topic, _format(kind, values[t])))
        return out

    def lines(self, per_query: bool = False, summary: bool = True) -> list[str]:
        head = [f"{n:<22s}\t{t}\t{v}" for n, t, v in self.per_topic()] if per_query else []
        return head + ([f"{n:<22s}\tall\t{v}" for n, v in self.summary()] if summary else [])


def _format(kind: str, value: object) -> str:
    if kind == "long":
        return str(int(value))  # type: ignore[call-overload]
    if kind == "string":
        return f"'{value}'"
    return _f4(value)  # type: ignore[arg-type]


def _f4(value: float) -> str:
    return f"{value:6.4f}"


def evaluate_trec(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    request: MeasureRequest,
    *,
    runid: str = "",
    complete: bool = False,
    level: int = engine.RELEVANCE_LEVEL,
    max_docs: int | None = None,
) -> TrecReport:
    """Evaluate `run` against `qrels` (dicts) as trec_eval does (see the module docstring).

    `max_docs` (-M) keeps only each topic's first `max_docs` results, after ranking."""
    topics = _topics(list(qrels), set(run), complete)
    judged = engine.judge_scores(qrels, run, topics, level=level, all_judged=True)
    return _report(judged, topics, request, runid, max_docs)


def evaluate_trec_files(
    qrels_path: str | Path,
    run_path: str | Path,
    request: MeasureRequest,
    *,
    complete: bool = False,
    level: int = engine.RELEVANCE_LEVEL,
    max_docs: int | None = None,
) -> TrecReport:
    """Evaluate a TREC run file against a TREC qrels file as trec_eval does, straight from the files'
    columns (`goldeval.trecio`, `goldeval.metrics.trec_judge`): the same values as `evaluate_trec` on
    the files' dicts, without building them."""
    jit.prepare(_size(qrels_path) + _size(run_path))  # a large run: the qrels are read by numba too
    qrels = read_qrels_table(qrels_path)
    run = read_run_table(run_path)
    topics = _topics(qrels.topics, set(run.topics), complete)
    judged = judge_tables(qrels, run, topics, level=level)
    return _report(judged, topics, request, run.tag, max_docs)


def _size(path: str | Path) -> int:
    """The file's size, 0 if it cannot be read (the reader then says why)."""
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def _topics(qrels_topics: Sequence[str], run_topics: set[str], complete: bool) -> list[str]:
    """Topics in both files (every qrels topic with -c), in trec_eval's print order (strcmp)."""
    topics = sorted(q for q in qrels_topics if complete or q in run_topics)
    if not topics:
        raise InputError(
            "no topic has both judgments and results",
            hint="check that the qrels and the run use the same topic ids (trec_eval exits 7 here)",
        )
    return topics


def _report(judged: engine.Judged, topics: list[str], request: MeasureRequest, runid: str,
            max_docs: int | None) -> TrecReport:  # fmt: skip
    if max_docs is not None:
        keep = judged.rank <= max_docs
        judged = replace(judged, num_ret=np.minimum(judged.num_ret, max_docs), q=judged.q[keep],
                         rank=judged.rank[keep], rel=judged.rel[keep])  # fmt: skip
    rows: list[tuple[str, str, np.ndarray]] = []
    for name in request.ordered():
        if name in SUMMARY_ONLY:
            rows.append((name, name, np.zeros(0)))
            continue
        measure = MEASURES[name]
        params = request.params[name] or measure.params or ()
        values = measure.calc(judged, params)
        names = measure.names(request.params[name] or measure.params, name in request.explicit)
        rows.extend((n, measure.value, v) for n, v in zip(names, values, strict=True))
    return TrecReport(runid=runid, topics=topics, rows=rows)
