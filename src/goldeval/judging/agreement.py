"""How far a machine judge agrees with people, on the (question, passage) pairs both graded 0-3.

Every statistic is a function of the 4 x 4 confusion matrix C (rows: the people's grade, columns: the
machine's), so one bootstrap serves them all: resampling questions with replacement (a cluster bootstrap:
a question's passages stay together, since they are not independent) gives each resample's matrix as
`counts @ per-question matrices` (`goldeval.stats.bootstrap.resample_counts`), and percentile intervals
(`goldeval.stats.bootstrap.percentile_interval`).

- Cohen's kappa (Cohen 1960): (p_o - p_e) / (1 - p_e), p_e from the two raters' own marginals.
- Linear-weighted kappa (Cohen 1968): 1 - sum(w * P) / sum(w * E), w_ij = |i - j| / 3, E = outer(marginals).
- Krippendorff's alpha, **interval** metric (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"):
  1 - (n - 1) * sum(o_ck d_ck) / sum(n_c n_k d_ck), o = C + C^T the coincidence matrix, d_ck = (c - k)^2.
  Interval, because the metrics use the grades as gains (nDCG), so a 0 read as 3 costs nine times a 2 read as 3.
- Agreement on relevant vs not: the share of pairs where both say > 0 or both say 0 (the golden set's rule).
- Bias: mean(machine - people); above 0 the judge is lenient, below harsh.
- Pairs needed to pin kappa within +/-0.1 (at the intervals' confidence, 95% by default):
  n = z^2 p_o (1 - p_o) / ((1 - p_e)^2 0.1^2), from Cohen's (1960) large-sample standard error of kappa,
  with this sample's p_o and p_e (a planning estimate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from goldeval.stats.bootstrap import MIN_INTERVAL_QUESTIONS, percentile_interval, resample_counts, rng_for

GRADES = 4
"""Grades 0, 1, 2, 3."""
STATISTICS = ("kappa", "weighted_kappa", "alpha", "relevant_agreement", "bias")
PIN = 0.1
BOOTSTRAP_STREAM = 21
"""The random stream of `goldeval.stats.bootstrap.rng_for` this module draws from (issue 21)."""


def statistics(confusion: np.ndarray) -> dict[str, np.ndarray]:
    """Every statistic of one matrix (4, 4) or a stack of them (..., 4, 4); NaN where undefined."""
    c = np.asarray(confusion, dtype=np.float64)
    n = c.sum(axis=(-2, -1))
    grades = np.arange(GRADES, dtype=np.float64)
    distance = np.abs(grades[:, None] - grades[None, :])
    with np.errstate(invalid="ignore", divide="ignore"):
        p = c / n[..., None, None]
        expected = p.sum(axis=-1)[..., :, None] * p.sum(axis=-2)[..., None, :]
        nominal = (distance > 0).astype(np.float64)
        kappa = 1 - (nominal * p).sum(axis=(-2, -1)) / (nominal * expected).sum(axis=(-2, -1))
        linear = distance / (GRADES - 1)
        weighted = 1 - (linear * p).sum(axis=(-2, -1)) / (linear * expected).sum(axis=(-2, -1))
        coincidence = c + np.swapaxes(c, -1, -2)
        values = coincidence.sum(axis=-1)
        total = values.sum(axis=-1)
        squared = distance ** 2
        observed = (coincidence * squared).sum(axis=(-2, -1))
        chance = (values[..., :, None] * values[..., None, :] * squared).sum(axis=(-2, -1))
        alpha = 1 - (total - 1) * observed / chance
        relevant = (p[..., 0, 0] + p[..., 1:, 1:].sum(axis=(-2, -1)))
        bias = (p * (grades[None, :] - grades[:, None])).sum(axis=(-2, -1))
    return {"kappa": kappa, "weighted_kappa": weighted, "alpha": alpha, "relevant_agreement": relevant, "bias": bias}


def confusion_of(pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """The 4 x 4 matrix of (people, machine) grade pairs."""
    c = np.zeros((GRADES, GRADES), dtype=np.int64)
    for people, machine in pairs:
        c[people, machine] += 1
    return c


def pairs_needed(confusion: np.ndarray, half_width: float = PIN, confidence: float = 0.95) -> int | None:
    """Pairs that pin kappa within +/- `half_width` at `confidence`, by Cohen's (1960) standard error; None
    when kappa is undefined (every grade the same)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    c = np.asarray(confusion, dtype=np.float64)
    n = c.sum()
    if n == 0:
        return None
    p = c / n
    p_o = float(np.trace(p))
    p_e = float(p.sum(axis=1) @ p.sum(axis=0))
    if p_e >= 1:
        return None
    return max(1, math.ceil(z ** 2 * p_o * (1 - p_o) / ((1 - p_e) ** 2 * half_width ** 2)))


@dataclass(frozen=True)
class Pair:
    """One passage both graded."""

    question_id: str
    passage: str
    people: int
    machine: int
    reply: str = ""


@dataclass
class Calibration:
    """The agreement of a machine judge with people, with intervals and the disagreements to read."""

    pairs: list[Pair]
    confusion: np.ndarray
    values: dict[str, float | None]
    intervals: dict[str, list[float] | None]
    questions: int
    needed: int | None
    confidence: float
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        worst = sorted((p for p in self.pairs if p.people != p.machine),
                       key=lambda p: (-abs(p.machine - p.people), p.question_id, p.passage))
        return {
            "pairs": len(self.pairs), "questions": self.questions, "confidence": self.confidence,
            "confusion": {"rows": "people grade 0-3", "columns": "machine grade 0-3",
                          "matrix": self.confusion.astype(int).tolist()},
            "alpha_metric": "interval",
            "values": self.values, "intervals": self.intervals,
            "pairs_needed_for_kappa_within_0.1": self.needed, "notes": self.notes,
            "disagreements": [{"question": p.question_id, "passage": p.passage, "people": p.people,
                               "machine": p.machine, "difference": p.machine - p.people, "reply": p.reply[:200]}
                              for p in worst],
        }


def calibrate(people: Mapping[tuple[str, str], int], machine: Mapping[tuple[str, str], int], *,
              replies: Mapping[tuple[str, str], str] | None = None, resamples: int = 10_000, seed: int = 0,
              confidence: float = 0.95) -> Calibration:
    """Agreement on the pairs in both `people` and `machine` ((question, passage) -> grade; a people's
    grade above 3 counts as 3, below 0 as 0). Intervals need `MIN_INTERVAL_QUESTIONS` questions."""
    both = sorted(set(people) & set(machine))
    pairs = [Pair(q, d, min(max(int(people[(q, d)]), 0), GRADES - 1), int(machine[(q, d)]), (replies or {}).get((q, d), ""))
             for q, d in both]
    matrix = confusion_of([(p.people, p.machine) for p in pairs])
    point = statistics(matrix)
    values = {name: _finite(float(point[name])) for name in STATISTICS}
    qids = sorted({p.question_id for p in pairs})
    intervals: dict[str, list[float] | None] = {name: None for name in STATISTICS}
    if len(qids) >= MIN_INTERVAL_QUESTIONS:
        per_question = np.zeros((len(qids), GRADES * GRADES))
        row = {q: i for i, q in enumerate(qids)}
        for p in pairs:
            per_question[row[p.question_id], p.people * GRADES + p.machine] += 1
        blocks = [counts @ per_question for counts in resample_counts(len(qids), resamples, rng_for(seed, BOOTSTRAP_STREAM))]
        stacked = statistics(np.vstack(blocks).reshape(-1, GRADES, GRADES))
        for name in STATISTICS:
            samples = stacked[name][np.isfinite(stacked[name])]
            if samples.size:
                low, high = percentile_interval(samples[:, None], confidence)[:, 0]
                intervals[name] = [float(low), float(high)]
    return Calibration(pairs, matrix, values, intervals, len(qids), pairs_needed(matrix, confidence=confidence), confidence,
                       _notes(matrix))


def _notes(matrix: np.ndarray) -> list[str]:
    """What the reader must know before reading the numbers."""
    people = {g for g in range(GRADES) if matrix[g].sum()}
    notes = []
    if len(people) == 1:
        notes.append(f"the people gave one grade only ({people.pop()}) to the passages both graded: kappa and alpha "
                     "cannot show agreement; judge some passages not relevant too (`goldeval pool`), then measure again")
    elif not matrix[0].sum() or not matrix[1:].sum():
        notes.append("the people judged only relevant or only not-relevant passages here: agreement on relevant vs "
                     "not measures one side")
    return notes


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
