"""Fusion of several runs into one: pure functions chosen by name (`FUSIONS`).

- `rrf`: reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009):
  score(d) = sum_i w_i / (k + rank_i(d)), rank 1-based, k = 60 by default; a run that did not
  return d contributes nothing.
- `norm`: normalised score fusion (Fox & Shaw's CombSUM over normalised scores, 1994):
  score(d) = sum_i w_i * norm_i(d), where norm is min-max over the question's results
  (`norm=minmax`, default) or a z-score (`norm=zscore`); a run that did not return d contributes 0
  (min-max) or its minimum z-score.

Ranks come from each Run's order, which is the one ranking rule of `goldeval.ranking`; the fused
Run is ranked by the same rule. Nothing here mutates its inputs. `sweep_fusion` re-fuses two
cached runs at many weights without querying any retriever again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from goldeval.errors import InputError
from goldeval.run import Hits, Run
from goldeval.types import PassageId, QuestionId

Fusion = Callable[..., Run]

RANK_FUSIONS = frozenset({"rrf"})
"""Fusion methods whose score is made of the parts' ranks only (RRF: sum of w / (k + rank)), never of their
scores: such a top-1 score is the same for every question ranked alike, so it is no confidence."""


def score_scale(method: str) -> str:
    """What a fused run's scores measure: `rank` for a rank-based fusion (`RANK_FUSIONS`), else `score`.
    Recorded as `score` in a hybrid retriever's config; the off-topic analysis reads it."""
    return "rank" if method in RANK_FUSIONS else "score"


def rrf(runs: Sequence[Run], *, k: float = 60.0, weights: Sequence[float] | None = None, name: str = "rrf") -> Run:
    """Reciprocal rank fusion: sum of w_i / (k + rank) over the runs that returned a passage."""
    weights = _weights(runs, weights)
    if k < 0:
        raise InputError(f"rrf k must be >= 0, got {k}", value=k)
    fused = Run(name)
    for qid in _questions(runs):
        scores: dict[PassageId, float] = {}
        for run, weight in zip(runs, weights, strict=True):
            for rank, (pid, _) in enumerate(run.results.get(qid, []), start=1):
                scores[pid] = scores.get(pid, 0.0) + weight / (k + rank)
        fused.add(qid, scores)
    _merge_errors(fused, runs)
    return fused


def norm_fusion(
    runs: Sequence[Run], *, weights: Sequence[float] | None = None, norm: str = "minmax", name: str = "norm"
) -> Run:
    """Weighted sum of per-question normalised scores (min-max or z-score)."""
    weights = _weights(runs, weights)
    if norm not in NORMALISERS:
        raise InputError(f"unknown score normalisation {norm!r}", value=norm, hint=f"use {' or '.join(NORMALISERS)}")
    normalise = NORMALISERS[norm]
    fused = Run(name)
    for qid in _questions(runs):
        per_run = [normalise(run.results.get(qid, [])) for run in runs]
        floors = [min(s.values(), default=0.0) if norm == "zscore" else 0.0 for s in per_run]
        pids = list(dict.fromkeys(pid for scores in per_run for pid in scores))
        # each run's weighted column, then sum() of each passage's terms in run order: the same sum as one
        # generator per passage, without its cost (issue 23: a cached sweep re-run was mostly this loop)
        columns = [[w * s.get(pid, floor) for pid in pids] for w, s, floor in zip(weights, per_run, floors, strict=True)]
        fused.add(qid, dict(zip(pids, map(sum, zip(*columns, strict=True)), strict=True)))
    _merge_errors(fused, runs)
    return fused


def minmax(hits: Hits) -> dict[PassageId, float]:
    """(s - min) / (max - min); all scores equal -> 1.0 each (every hit is the run's best)."""
    if not hits:
        return {}
    values = [s for _, s in hits]
    low, high = min(values), max(values)
    if high == low:
        return {pid: 1.0 for pid, _ in hits}
    return {pid: (s - low) / (high - low) for pid, s in hits}


def zscore(hits: Hits) -> dict[PassageId, float]:
    """(s - mean) / standard deviation over the question's results; constant scores -> 0."""
    if not hits:
        return {}
    values = [s for _, s in hits]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return {pid: (s - mean) / sd if sd > 0 else 0.0 for pid, s in hits}


NORMALISERS = {"minmax": minmax, "zscore": zscore}
FUSIONS: dict[str, Fusion] = {"rrf": rrf, "norm": norm_fusion}


def fuse(runs: Sequence[Run], method: str = "rrf", **params: object) -> Run:
    """Fuse runs with the method named (`rrf` or `norm`) and its parameters."""
    if method not in FUSIONS:
        raise InputError(f"unknown fusion method {method!r}", value=method, hint=f"use one of {', '.join(FUSIONS)}")
    return FUSIONS[method](runs, **params)


def sweep_fusion(
    run_a: Run, run_b: Run, weights: Iterable[float], method: str = "norm", **params: object
) -> dict[float, Run]:
    """Fuse two cached runs at each weight w (A gets w, B gets 1 - w), without re-querying."""
    out: dict[float, Run] = {}
    for w in weights:
        if not 0.0 <= w <= 1.0:
            raise InputError(f"sweep weight {w} is outside [0, 1]", value=w, hint="A gets w, B gets 1 - w")
        name = f"{method}[{run_a.name}={w:g},{run_b.name}={1 - w:g}]"
        out[w] = fuse([run_a, run_b], method, weights=(w, 1.0 - w), name=name, **params)
    return out


def _weights(runs: Sequence[Run], weights: Sequence[float] | None) -> list[float]:
    if not runs:
        raise InputError("fusion needs at least one run")
    if weights is None:
        return [1.0] * len(runs)
    weights = [float(w) for w in weights]
    if len(weights) != len(runs):
        raise InputError(f"{len(weights)} weights for {len(runs)} runs", value=list(weights),
                         hint="give one weight per fused retriever")
    if any(w < 0 or math.isnan(w) for w in weights):
        raise InputError(f"fusion weights must be >= 0, got {weights}", value=weights)
    return weights


def _questions(runs: Sequence[Run]) -> list[QuestionId]:
    seen: dict[QuestionId, None] = {}
    for run in runs:
        seen.update(dict.fromkeys(run.results))
    return list(seen)


def _merge_errors(fused: Run, runs: Sequence[Run]) -> None:
    for run in runs:
        for qid, message in run.errors.items():
            fused.errors.setdefault(qid, f"{run.name}: {message}")
