"""The statistics of a scorecard, as data: comparisons, intervals' settings, breakdowns, off-topic
separability and miss causes. `goldeval.stats` computes them; renderers only read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from goldeval.metrics.definitions import Metric, parse_metric


@dataclass
class MetricComparison:
    """One metric, one pair: `a` (candidate) against `b` (reference); diff = mean(a) - mean(b)."""

    metric: Metric
    a: str
    b: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci: list[float]
    wins: int
    """Questions where a scores higher than b."""
    losses: int
    ties: int
    test: str
    p: float
    p_adjusted: float
    """Holm-adjusted across the pairs of this metric when more than two systems; else equal to p."""
    significant: bool
    mdd: float | None
    """Minimum detectable difference (as a fraction, 0.1 = 10 points) at the comparison's power."""
    questions_needed: int | None
    verdict: str
    detectable: str

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "metric": str(self.metric)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricComparison:
        values = {k: data[k] for k in cls.__dataclass_fields__}
        values["metric"] = parse_metric(str(values["metric"]))
        return cls(**values)


@dataclass
class Comparison:
    """Every metric comparison between a set of systems evaluated on the same questions."""

    systems: list[str]
    n_questions: int
    metrics: list[Metric]
    results: list[MetricComparison] = field(default_factory=list)
    confidence: float = 0.95
    alpha: float = 0.05
    power: float = 0.8
    seed: int = 0
    resamples: int = 10_000
    correction: str = "none"
    n_errors: dict[str, int] = field(default_factory=dict)
    """System -> compared questions on which its retriever errored (they score 0: the numbers are off)."""
    notes: list[str] = field(default_factory=list)
    """What the reader must know about how systems were paired (e.g. questions left out)."""
    n_beside: int = 0
    """Synthetic questions reported beside the headline and left out of every verdict
    (`goldeval.golden.model.headline_split`)."""

    def questions_text(self) -> str:
        """`33 answerable questions`, or `25 headline questions (8 synthetic beside, in no verdict)`."""
        if not self.n_beside:
            return f"{self.n_questions} answerable questions"
        return f"{self.n_questions} headline questions ({self.n_beside} synthetic beside, in no verdict)"

    def for_metric(self, metric: Metric) -> list[MetricComparison]:
        return [r for r in self.results if r.metric == metric]

    def get(self, metric: Metric, a: str, b: str) -> MetricComparison:
        for r in self.results:
            if r.metric == metric and r.a == a and r.b == b:
                return r
        raise KeyError((str(metric), a, b))

    def to_dict(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        data["metrics"] = [str(m) for m in self.metrics]
        data["results"] = [r.to_dict() for r in self.results]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data and k not in ("results", "metrics")}
        return cls(**fields, metrics=[parse_metric(str(m)) for m in data.get("metrics", [])],
                   results=[MetricComparison.from_dict(r) for r in data.get("results", [])])


@dataclass
class Statistics:
    """How the numbers were made and what they say; `None` on a scorecard until `goldeval.compare` ran.

    `breakdown`, `off_topic` and `diagnosis_counts` keep the JSON shapes documented in docs/stats.md.
    """

    method: str
    confidence: float
    resamples: int
    seed: int
    power: float
    comparison: Comparison | None = None
    breakdown: dict[str, Any] = field(default_factory=dict)
    off_topic: dict[str, Any] = field(default_factory=dict)
    """Retriever -> separability (ranges, AUC, ROC points, the chosen threshold, a verdict)."""
    diagnosis_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Retriever -> miss cause -> misses among the headline questions."""
    diagnosis_beside: dict[str, dict[str, int]] = field(default_factory=dict)
    """Retriever -> miss cause -> misses among the synthetic questions beside the headline (never pooled)."""
    hubs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Retriever -> documents it ranks first for many unrelated questions: `doc`, `first_for`, `wrong`,
    `searched`, `questions` (goldeval.stats.diagnosis.find_hubs)."""
    missed_by_all: list[str] = field(default_factory=list)
    """Answerable questions no retriever finds in its top k (headline k); empty with one retriever."""
    min_questions: int = 0
    """Below this many answerable questions no interval is given: the set is too small for one."""
    leakage: dict[str, Any] = field(default_factory=dict)
    """When the golden set holds synthetic questions: how much of each question comes from its source
    passage, per provenance kind, and the synthetic-minus-hand gap (`goldeval.synth.LeakageReport`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method, "confidence": self.confidence, "resamples": self.resamples,
            "seed": self.seed, "power": self.power,
            "comparison": self.comparison.to_dict() if self.comparison else None,
            "breakdown": self.breakdown, "off_topic": self.off_topic,
            "diagnosis_counts": self.diagnosis_counts, "diagnosis_beside": self.diagnosis_beside, "hubs": self.hubs, "missed_by_all": self.missed_by_all,
            "min_questions": self.min_questions, "leakage": self.leakage,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Statistics:
        comparison = data.get("comparison")
        return cls(
            method=str(data.get("method", "")), confidence=float(data.get("confidence", 0.95)),
            resamples=int(data.get("resamples", 0)), seed=int(data.get("seed", 0)),
            power=float(data.get("power", 0.8)),
            comparison=Comparison.from_dict(comparison) if comparison else None,
            breakdown=dict(data.get("breakdown") or {}), off_topic=dict(data.get("off_topic") or {}),
            diagnosis_counts={k: dict(v) for k, v in (data.get("diagnosis_counts") or {}).items()},
            diagnosis_beside={k: dict(v) for k, v in (data.get("diagnosis_beside") or {}).items()},
            hubs={k: [dict(h) for h in v] for k, v in (data.get("hubs") or {}).items()},
            missed_by_all=[str(q) for q in data.get("missed_by_all") or []],
            min_questions=int(data.get("min_questions") or 0),
            leakage=dict(data.get("leakage") or {}),
        )
