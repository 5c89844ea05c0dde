"""The Scorecard: everything one evaluation produced, as typed data.

Metrics are `Metric` objects in memory and strings only in JSON (`goldeval.scorecard.io`). Renderers
(terminal, Markdown, HTML, the page) read a Scorecard and compute nothing: the per-k curves, the
off-topic ROC points and the flips between retrievers are computed here in Python, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldeval.golden.model import headline_split
from goldeval.metrics.definitions import Metric
from goldeval.scorecard.depth import Returned, unmeasurable
from goldeval.scorecard.statistics import Statistics

if TYPE_CHECKING:
    from goldeval.scorecard.columns import QuestionColumns

CURVE_METRICS = ("hit", "recall", "precision", "ndcg")
"""The metrics written for every k from 1 to the depth (the page's k slider looks them up)."""


COUNTED = ("relevant", "repeat", "nonrelevant", "unjudged")
"""What a retrieved result counted for (`Hit.counted`), by the level rule of `goldeval.scorecard.scoring`:
an expected answer (with its grade), a repeat of an id already counted (a later chunk of a document at
doc level: not relevant, never counted twice), judged not relevant, or nobody judged it."""


@dataclass
class Hit:
    """One retrieved result: the passage id, its document, its score, and what it counted for."""

    id: str
    score: float
    doc: str
    counted: str = ""
    """One of `COUNTED`; empty on a hit made by hand, until the results JSON's writer or reader marks it
    (`goldeval.scorecard.scoring.mark_hits`)."""
    grade: int | None = None
    """The grade it counted with when `counted` is `relevant`; else None."""


@dataclass
class Beside:
    """The synthetic questions' numbers, reported beside the headline and never pooled into it."""

    n: int = 0
    metrics: dict[Metric, float] = field(default_factory=dict)
    """Mean over the synthetic answerable questions; empty when there are none beside the headline."""
    curves: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class QuestionResult:
    """One retriever's outcome on one golden question."""

    id: str
    question: str
    expected: dict[str, int]
    """Relevant ids (documents at doc level, chunks at chunk level) -> graded relevance (>= 1)."""
    off_topic: bool
    rank: int | None
    """1-based rank of the first correct result within the retrieved depth; None if absent or off-topic."""
    ranks: dict[str, int | None]
    """Each expected id -> its 1-based rank within the depth, or None: metrics at any k follow from it."""
    top: list[Hit]
    metrics: dict[Metric, float]
    """Metric -> value; empty for off-topic questions, which are never averaged in."""
    tags: list[str] = field(default_factory=list)
    source: str = "hand"
    """The question's provenance kind: hand, synthetic, log or incident (reported apart, never pooled)."""
    nonrelevant: list[str] = field(default_factory=list)
    """Ids judged not relevant (grade <= 0) at this level: judged, unlike the ids nobody judged."""
    error: str | None = None
    diagnosis: dict[str, Any] | None = None
    """Filled by goldeval.stats.diagnosis: {"cause", "evidence", "suggestion"}."""
    returned: int | None = None
    """How many results came back for the question (None: it failed, or a file from before this was kept)."""

    @property
    def top1_score(self) -> float | None:
        return self.top[0].score if self.top else None

    def hit_at(self, k: int) -> bool:
        return self.rank is not None and self.rank <= k


@dataclass
class RetrieverResult:
    """One retriever's scorecard: aggregates over answerable questions, and every question."""

    name: str
    _questions: list[QuestionResult] | None = field(default=None, init=False, repr=False, compare=False)
    """`questions` once made (it is a property: see `columns`)."""
    questions: list[QuestionResult]  # a property over `_questions` and `columns`, set after the class
    metrics: dict[Metric, float]
    """Mean over the headline questions (`headline_questions`: answerable, hand-written, log and incident;
    synthetic ones are `synthetic`, beside; off-topic ones are counted apart, never averaged in as zeros)."""
    intervals: dict[Metric, tuple[float, float]] = field(default_factory=dict)
    """Metric -> (low, high) confidence interval; filled by `goldeval.compare`."""
    curves: dict[str, list[float]] = field(default_factory=dict)
    """`hit`, `recall`, `precision`, `ndcg` -> mean over the headline questions at k = 1..depth."""
    config: dict[str, Any] = field(default_factory=dict)
    """The retriever's resolved configuration (spec, kind, model, options, backend, depth)."""
    seconds: float = 0.0
    judged: list[float] = field(default_factory=list)
    """judged@k for k = 1..max(k): mean share of the top k that carries a judgment (relevant or not),
    over answerable questions (`goldeval.metrics.judged`); below 1, some results nobody looked at."""
    ranges: dict[Metric, tuple[float, float]] = field(default_factory=dict)
    """Metric -> (low, high): its mean if every unjudged passage in the top k were not relevant, and
    if every one were relevant. A wide range: the conclusion depends on what nobody judged."""
    scored: Mapping[str, tuple[dict[str, int], list[tuple[str, float]]]] = field(
        default_factory=dict, repr=False, compare=False)
    """In memory only, never in the results JSON: per answerable question, the judged ids at the
    evaluation's level and the whole ranking (to the retrieved depth) as the metric engine scored it,
    with TREC-writable ids (`scorecard.export`: `goldeval eval --run/--qrels`); made when looked up
    (`scorecard.scoring.Scored`), since only the TREC export reads it."""
    returned: Returned | None = None
    """How many results came back per question against the depth asked (`goldeval.scorecard.depth`)."""
    synthetic: Beside = field(default_factory=Beside)
    """The synthetic questions' means and curves, beside the headline (`goldeval.golden.model.headline_split`)."""
    columns: QuestionColumns | None = field(default=None, repr=False, compare=False)
    """A new scorecard's questions as columns (`goldeval.scorecard.columns`), until `questions` is first read:
    means, curves, flips, the results file and the history read them without a `QuestionResult` each.
    Reading `questions` makes the list from them and lets them go, so a change to the list counts."""

    @classmethod
    def of_columns(cls, name: str, columns: QuestionColumns, **fields: Any) -> RetrieverResult:
        """A result whose questions are `columns` (`questions` is made from them when first read)."""
        result = cls(name, [], {}, scored=columns.scored, columns=columns, **fields)
        result._questions = None
        return result

    @property
    def n_answerable(self) -> int:
        return len(self.columns.answerable) if self.columns is not None else len(self.answerable)

    @property
    def n_headline(self) -> int:
        return len(self.columns.headline) if self.columns is not None else len(self.headline_questions)

    @property
    def n_off_topic(self) -> int:
        if self.columns is not None:
            return len(self.columns) - len(self.columns.answerable)
        return len(self.off_topic)

    def headline_sources(self) -> dict[str, int]:
        """Provenance kind -> how many headline questions have it, kinds sorted."""
        kinds = ([self.columns.questions[i].source for i in self.columns.headline.tolist()] if self.columns is not None
                 else [q.source for q in self.headline_questions])  # fmt: skip
        return {k: kinds.count(k) for k in sorted(set(kinds))}

    @property
    def error_ids(self) -> list[str]:
        """The questions the retriever failed on, in order."""
        if self.columns is not None:
            failed = self.columns.errors
            return [q.id for q in self.columns.questions if q.id in failed] if failed else []
        return [q.id for q in self.questions if q.error]

    @property
    def unmeasurable(self) -> list[Metric]:
        """Metrics whose cut-off is past what this retriever returned (`goldeval.scorecard.depth`)."""
        return unmeasurable(self.metrics, self.returned)

    @property
    def answerable(self) -> list[QuestionResult]:
        return [q for q in self.questions if not q.off_topic]

    @property
    def headline_questions(self) -> list[QuestionResult]:
        """The questions the headline, the intervals and every verdict are made of (`headline_split`)."""
        return headline_split(self.questions)[0]

    @property
    def synthetic_questions(self) -> list[QuestionResult]:
        """The synthetic answerable questions reported beside the headline (none in an all-synthetic set)."""
        return headline_split(self.questions)[1]

    @property
    def off_topic(self) -> list[QuestionResult]:
        return [q for q in self.questions if q.off_topic]

    @property
    def n_errors(self) -> int:
        return len(self.error_ids)


def _questions(self: RetrieverResult) -> list[QuestionResult]:
    if self._questions is None:
        assert self.columns is not None
        self._questions, self.columns = self.columns.results(), None
    return self._questions


def _set_questions(self: RetrieverResult, questions: list[QuestionResult]) -> None:
    self._questions, self.columns = questions, None


RetrieverResult.questions = property(_questions, _set_questions, doc="""Every question's outcome, in the golden
set's order; made from `columns` when first read.""")  # type: ignore[assignment,method-assign]


@dataclass(frozen=True)
class RunIdentity:
    """Exactly what was run: enough to tell whether two scorecards can be compared, and to re-run one."""

    corpus_fingerprint: str = ""
    """sha256 of the passages as indexed (ids and text, chunking included); empty without a corpus."""
    golden_fingerprint: str = ""
    golden_version: int | None = None
    chunking: str | None = None
    goldeval_version: str = ""
    created: str = ""
    machine: dict[str, Any] = field(default_factory=dict)
    """`cores`, `python`, `platform`."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus_fingerprint": self.corpus_fingerprint, "golden_fingerprint": self.golden_fingerprint,
            "golden_version": self.golden_version, "chunking": self.chunking,
            "goldeval_version": self.goldeval_version, "created": self.created, "machine": self.machine,
        }


@dataclass
class Scorecard:
    """The result of `goldeval.evaluate`: one RetrieverResult per retriever, plus what was run.

    `statistics` is None until `goldeval.compare(scorecard)` adds intervals, comparisons, breakdowns,
    off-topic separability and miss causes.
    """

    retrievers: list[RetrieverResult]
    metrics: list[Metric]
    k: list[int]
    depth: int
    headline: list[Metric]
    """The metrics verdicts lead with, chosen once (`goldeval.metrics.headline_metrics`) for every view."""
    level: str = "doc"
    identity: RunIdentity = field(default_factory=RunIdentity)
    golden: dict[str, Any] = field(default_factory=dict)
    """`path`, `n_questions`, `n_answerable`, `n_off_topic`, `fingerprint`, `version`."""
    corpus: dict[str, Any] = field(default_factory=dict)
    """`path`, `name`, `n_documents`, `n_passages`, `warnings`, `fingerprint`."""
    snippets: dict[str, dict[str, str]] = field(default_factory=dict)
    """Passage id -> {"doc", "title", "text"} (text cut short) for every id in any `top` list."""
    flips: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    """`"A|B"` -> {"a_only": [...], "b_only": [...]}: for k = 1..depth, how many answerable questions A
    finds in its top k and B does not, and the other way round (from `goldeval.scorecard.curves`)."""
    statistics: Statistics | None = None
    notes: list[str] = field(default_factory=list)
    """Things the reader must know about this run (e.g. read from a goldset 0.1 file)."""

    def retriever(self, name: str) -> RetrieverResult:
        for r in self.retrievers:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def headline_k(self) -> int:
        """The one cut-off misses, their causes and the terminal's miss lists use: the first headline
        metric's k (hit@5 by default), else the largest k (issue 13: one cut-off in every view)."""
        return next((m.k for m in self.headline if m.k is not None), max(self.k) if self.k else 10)

    @property
    def version(self) -> str:
        return self.identity.goldeval_version

    @property
    def created(self) -> str:
        return self.identity.created

    def to_dict(self) -> dict[str, Any]:
        from goldeval.scorecard.io import scorecard_to_dict

        return scorecard_to_dict(self)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> Scorecard:
        from goldeval.scorecard.io import scorecard_from_dict

        return scorecard_from_dict(data, source=source)

    def save(self, path: str | Path) -> None:
        """Write the JSON atomically: a crash never leaves a half-written results file."""
        from goldeval.scorecard.io import save_scorecard

        save_scorecard(self, Path(path))

    @classmethod
    def load(cls, path: str | Path) -> Scorecard:
        from goldeval.scorecard.io import load_scorecard

        return load_scorecard(Path(path))
