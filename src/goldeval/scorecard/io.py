"""The results JSON (docs/results-json.md): schema 3 written, schemas 1 (goldset 0.1), 2 and 3 read (2 is 3 with
every kept result's `doc` and `grade` written, its id and null included).

Reading validates every field it uses and names the first bad one by its JSON path, so a truncated
or edited file is one clear error, never a traceback. Aggregates are recomputed from the per-question
values (over the headline questions, `goldeval.scorecard.curves.summarise`; a file written before the
headline left synthetic questions out, without `n_headline`, is checked against its pooled mean and then
summarised by the one rule) and a file whose stored aggregate disagrees (an edited `mrr: 7.5`) is
refused; so is one whose hit marks the level rule denies (`goldeval.scorecard.scoring.hit_marks`, which
fills them in an older file), and one whose
values contradict each other (`scorecard.checks`: values outside [0, 1], a hit@k its rank denies,
retrievers of one file on different questions). Curves and flips are recomputed from the stored
ranks, so a 0.1 file gets them too. Only a regular file is read (a FIFO would block), and JSON nested
too deeply is refused like any other bad file. Writing is strict JSON (no NaN or Infinity) through
the one atomic writer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from goldeval.errors import InputError
from goldeval.metrics.definitions import Metric, headline_metrics, parse_metric
from goldeval.metrics.judged import has_range
from goldeval.scorecard.checks import BadField, check_scorecard
from goldeval.scorecard.curves import flips, mean_values, summarise
from goldeval.scorecard.depth import returned_from_dict
from goldeval.scorecard.model import COUNTED, Hit, QuestionResult, RetrieverResult, RunIdentity, Scorecard
from goldeval.scorecard.scoring import question_marks
from goldeval.scorecard.statistics import Statistics
from goldeval.scorecard.writer import SCHEMA_VERSION, TOOL, dumps_strict, scorecard_chunks, scorecard_to_dict
from goldeval.store.atomic import write_atomic

__all__ = ["SCHEMA_VERSION", "TOOL", "dumps_strict", "load_scorecard", "save_scorecard", "scorecard_from_dict",
           "scorecard_to_dict"]
STATS_KEYS_V1 = ("comparison", "breakdown", "off_topic", "diagnosis_counts")
AGGREGATE_TOLERANCE = 1e-6
T = TypeVar("T")


class _Bad(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")


# --- writing (`goldeval.scorecard.writer`) -----------------------------------------------------


def save_scorecard(card: Scorecard, path: Path) -> None:
    """Write the results JSON atomically, as a stream (`writer.scorecard_chunks`: never the whole dict tree)."""
    write_atomic(path, scorecard_chunks(card))


# --- reading -----------------------------------------------------------------------------------


def load_scorecard(path: Path) -> Scorecard:
    if not path.exists():
        raise InputError("results file not found", path=path, hint="check the path")
    if not path.is_file():  # a folder, a FIFO or a device: never opened
        raise InputError("results path is not a file", path=path, hint="pass a results .json file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read results file: {exc}", path=path) from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        hint = "the file looks cut short; re-run the evaluation" if exc.pos >= len(text.rstrip()) - 1 else None
        raise InputError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno, hint=hint) from None
    except ValueError as exc:
        raise InputError(str(exc), path=path, hint="results JSON must be strict JSON") from None
    except RecursionError:
        raise InputError("not a goldeval results file: JSON nested too deeply to read", path=path,
                         hint="write one with `goldeval eval ... --json results.json`") from None
    return scorecard_from_dict(data, source=str(path))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} in results JSON")


READ_SCHEMAS = (1, 2, SCHEMA_VERSION)
"""The results schemas read: goldset 0.1's, 2 (each kept result with its `doc` and `grade`, null or the id
included) and the one written."""


def scorecard_from_dict(data: Any, *, source: str = "<dict>") -> Scorecard:
    if not isinstance(data, dict) or "retrievers" not in data:
        raise InputError("not a goldeval results file (no 'retrievers' list)", path=source,
                         hint="write one with `goldeval eval ... --json results.json`")
    schema = data.get("schema", 1)
    if schema not in READ_SCHEMAS:
        newer = isinstance(schema, int) and schema > SCHEMA_VERSION
        raise InputError(f"results schema {schema!r} is not one this goldeval reads "
                         f"({', '.join(map(str, READ_SCHEMAS))})",
                         path=source, value=schema, hint="upgrade goldeval" if newer else "re-run the evaluation")
    hint = "the file was edited or cut short; re-run the evaluation"
    try:
        card = _read(data, schema)
        check_scorecard(card)
    except (_Bad, BadField) as exc:
        raise InputError(f"bad results file: {exc}", path=source, hint=hint) from None
    except InputError as exc:
        raise InputError(f"bad results file: {exc.reason}", path=source, hint=hint) from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:  # a shape no check foresaw
        raise InputError(f"bad results file: {type(exc).__name__}: {exc}", path=source, hint=hint) from None
    return card


def _read(data: dict[str, Any], schema: int) -> Scorecard:
    metrics = [_metric(m, f"metric_names[{i}]") for i, m in enumerate(_get(data, "metric_names", list, []))]
    k = [_int(x, f"k[{i}]") for i, x in enumerate(_get(data, "k", list, []))]
    depth = _int(data.get("depth", 0), "depth")
    retrievers = [_retriever(r, f"retrievers[{i}]", depth) for i, r in enumerate(_get(data, "retrievers", list))]
    level = str(data.get("level", "doc"))
    for i, r in enumerate(retrievers):
        _check_marks(r, level, f"retrievers[{i}]")
    headline = [_metric(m, "headline") for m in _get(data, "headline", list, [])]
    notes = [str(n) for n in _get(data, "notes", list, [])]
    if schema == 1:
        version = str(data.get("goldset_version", data.get("goldeval_version", "")))
        notes.append(f"read from a goldset {version or '0.1'} results file (schema 1)")
        stats = _v1_statistics(data)
        info: dict[str, Any] = data["stats"] if isinstance(data.get("stats"), dict) else {}
        # 0.1 led with the largest k and diagnosed misses there: keep its headline so the two agree
        headline = headline or [_metric(m, "stats.headline_metrics") for m in info.get("headline_metrics") or []]
        identity = RunIdentity(golden_fingerprint=str(_get(data, "golden", dict, {}).get("fingerprint", "")),
                               goldeval_version=version, created=str(data.get("created", "")))
    else:
        stats_data = _get(data, "statistics", dict, None)
        stats = Statistics.from_dict(stats_data) if stats_data else None
        identity = _identity(_get(data, "identity", dict, {}))
    card = Scorecard(
        retrievers=retrievers, metrics=metrics, k=k, depth=depth,
        headline=headline or headline_metrics(metrics, k),
        level=level, identity=identity,
        golden=dict(_get(data, "golden", dict, {})), corpus=dict(_get(data, "corpus", dict, {})),
        snippets=dict(_get(data, "snippets", dict, {})), statistics=stats, notes=notes,
    )
    for r in card.retrievers:
        summarise(r, list(r.metrics), depth)  # the stored means were checked: made again by the one rule
    pooled = [r for r, d in zip(card.retrievers, data["retrievers"], strict=True) if r.synthetic.n and "n_headline" not in d]
    if pooled:
        r = pooled[0]
        card.notes.append(f"written before synthetic questions were kept out of the headline: the means are made "
                          f"again over the {len(r.headline_questions)} non-synthetic questions, with the "
                          f"{r.synthetic.n} synthetic ones beside; the file's intervals and verdicts still pool "
                          "all of them (re-run the evaluation for new ones)")
    card.flips = flips(card.retrievers, depth)
    return card


def _v1_statistics(data: dict[str, Any]) -> Statistics | None:
    info = data.get("stats")
    if not isinstance(info, dict):
        return None
    merged = {**info, **{key: data.get(key) for key in STATS_KEYS_V1}}
    return Statistics.from_dict(merged)


def _identity(data: Mapping[str, Any]) -> RunIdentity:
    version = data.get("golden_version")
    return RunIdentity(
        corpus_fingerprint=str(data.get("corpus_fingerprint", "")),
        golden_fingerprint=str(data.get("golden_fingerprint", "")),
        golden_version=version if isinstance(version, int) else None,
        chunking=data.get("chunking") if isinstance(data.get("chunking"), str) else None,
        goldeval_version=str(data.get("goldeval_version", "")), created=str(data.get("created", "")),
        machine=dict(data.get("machine") or {}),
    )


def _retriever(data: Any, where: str, depth: int) -> RetrieverResult:
    if not isinstance(data, dict):
        raise _Bad(where, "must be an object")
    name = _get(data, "name", str, where=where)
    questions = [_question(q, f"{where}.questions[{i}]") for i, q in enumerate(_get(data, "questions", list, where=where))]
    metrics = _metric_values(_get(data, "metrics", dict, {}, where=where), f"{where}.metrics")
    intervals: dict[Metric, tuple[float, float]] = {}
    for key, value in _get(data, "intervals", dict, {}, where=where).items():
        if not (isinstance(value, list) and len(value) == 2):
            raise _Bad(f"{where}.intervals.{key}", "must be [low, high]")
        intervals[_metric(key, f"{where}.intervals")] = (_float(value[0], key), _float(value[1], key))
    result = RetrieverResult(name=name, questions=questions, metrics=metrics, intervals=intervals,
                             config=dict(_get(data, "config", dict, {}, where=where)),
                             seconds=_float(data.get("seconds", 0.0), f"{where}.seconds"),
                             judged=[_float(v, f"{where}.judged[{i}]")
                                     for i, v in enumerate(_get(data, "judged", list, [], where=where))],
                             ranges=_ranges(_get(data, "ranges", dict, {}, where=where), f"{where}.ranges"))
    try:
        result.returned = returned_from_dict(data.get("returned"), f"{where}.returned")
    except ValueError as exc:
        path, _, message = str(exc).partition(": ")
        raise _Bad(path, message) from None
    # a file written before the headline left synthetic questions out (no `n_headline`) pooled them
    _check_aggregates(result, where, result.headline_questions if "n_headline" in data else result.answerable)
    return result


def _ranges(data: Mapping[str, Any], where: str) -> dict[Metric, tuple[float, float]]:
    """`ranges`: metric -> [low, high] with low <= high (goldeval.metrics.judged). A range an older
    goldeval wrote for a metric that has none (bpref) is dropped: it did not bracket the value."""
    out: dict[Metric, tuple[float, float]] = {}
    for key, value in data.items():
        if not (isinstance(value, list) and len(value) == 2):
            raise _Bad(f"{where}.{key}", "must be [low, high]")
        low, high = _float(value[0], f"{where}.{key}"), _float(value[1], f"{where}.{key}")
        if low > high:
            raise _Bad(f"{where}.{key}", f"low {low:g} is above high {high:g}")
        metric = _metric(key, where)
        if has_range(metric):
            out[metric] = (low, high)
    return out


def _check_aggregates(r: RetrieverResult, where: str, questions: list[QuestionResult]) -> None:
    """Each stored mean must equal the mean of the per-question values it summarises."""
    for metric, stored in r.metrics.items():
        if not questions:
            raise _Bad(f"{where}.metrics.{metric}", "a mean without any answerable question")
        if any(metric not in q.metrics for q in questions):
            raise _Bad(f"{where}.metrics.{metric}", "some questions have no value for it")
        mean = mean_values(questions, [metric])[metric]
        if abs(mean - stored) > AGGREGATE_TOLERANCE:
            raise _Bad(f"{where}.metrics.{metric}",
                       f"is {stored:g} but the mean of its {len(questions)} questions is {mean:.6g}")


def _check_marks(r: RetrieverResult, level: str, where: str) -> None:
    """Each kept result's mark (`counted`, `grade`) by the one level rule: filled where an older file has
    none, refused where a stored one disagrees (an edited file)."""
    for i, q in enumerate(r.questions):
        marks = question_marks(q, level)
        for j, (h, (counted, grade)) in enumerate(zip(q.top, marks, strict=True)):
            if h.counted and (h.counted, h.grade) != (counted, grade):
                raise _Bad(f"{where}.questions[{i}].top[{j}].counted",
                           f"is {h.counted!r} (grade {h.grade}) but the {level}-level rule gives {counted!r} (grade {grade})")
            h.counted, h.grade = counted, grade


def _question(data: Any, where: str) -> QuestionResult:
    if not isinstance(data, dict):
        raise _Bad(where, "must be an object")
    ranks = _get(data, "ranks", dict, {}, where=where)
    for key, rank in ranks.items():
        if rank is not None and not (isinstance(rank, int) and not isinstance(rank, bool) and rank >= 1):
            raise _Bad(f"{where}.ranks.{key}", f"must be a rank >= 1 or null, not {rank!r}")
    expected = _get(data, "expected", dict, {}, where=where)
    for key, grade in expected.items():
        _int(grade, f"{where}.expected.{key}")
    rank = data.get("rank")
    if rank is not None:
        _int(rank, f"{where}.rank")
    top = []
    for i, h in enumerate(_get(data, "top", list, [], where=where)):
        if not isinstance(h, dict) or not isinstance(h.get("id"), str):
            raise _Bad(f"{where}.top[{i}]", "must be an object with an `id`")
        counted, grade = h.get("counted") or "", h.get("grade")
        if counted and counted not in COUNTED:
            raise _Bad(f"{where}.top[{i}].counted", f"must be one of {', '.join(COUNTED)}, not {counted!r}")
        top.append(Hit(h["id"], _float(h.get("score", 0.0), f"{where}.top[{i}].score"), str(h.get("doc", h["id"])),
                       str(counted), None if grade is None else _int(grade, f"{where}.top[{i}].grade")))
    error = data.get("error")
    returned = data.get("returned")
    if returned is not None and (isinstance(returned, bool) or not isinstance(returned, int) or returned < 0):
        raise _Bad(f"{where}.returned", f"must be a count or null, not {returned!r}")
    return QuestionResult(
        id=str(_get(data, "id", (str, int), where=where)),
        question=str(data.get("question", "")),
        expected=dict(expected), off_topic=bool(_get(data, "off_topic", bool, where=where)),
        rank=rank, ranks=dict(ranks), top=top,
        metrics=_metric_values(_get(data, "metrics", dict, {}, where=where), f"{where}.metrics"),
        tags=[str(t) for t in _get(data, "tags", list, [], where=where)],
        source=str(data.get("source", "hand")),
        nonrelevant=[str(x) for x in _get(data, "nonrelevant", list, [], where=where)],
        error=str(error) if error is not None else None,
        diagnosis=_get(data, "diagnosis", dict, None, where=where),
        returned=returned,
    )


def _metric_values(data: Mapping[str, Any], where: str) -> dict[Metric, float]:
    return {_metric(key, where): _float(value, f"{where}.{key}") for key, value in data.items()}


def _metric(text: Any, where: str) -> Metric:
    if not isinstance(text, str):
        raise _Bad(where, f"metric name must be a string, not {text!r}")
    try:
        return parse_metric(text)
    except InputError:
        raise _Bad(where, f"unknown metric {text!r}") from None


_MISSING = object()


def _get(data: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], default: Any = _MISSING,
         *, where: str = "") -> Any:
    path = f"{where}.{key}" if where else key
    if key not in data or data[key] is None:
        if default is _MISSING:
            raise _Bad(path, "is missing")
        return default
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Bad(path, f"must be {_kind_name(kind)}, not {type(value).__name__}")
    return value


def _kind_name(kind: Any) -> str:
    names: dict[Any, str] = {list: "a list", dict: "an object", str: "a string", bool: "true or false"}
    return names.get(kind, "a string or an integer" if isinstance(kind, tuple) else str(kind))


def _float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Bad(where, f"must be a finite number, not {value!r}")
    return float(value)


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(where, f"must be an integer, not {value!r}")
    return value

