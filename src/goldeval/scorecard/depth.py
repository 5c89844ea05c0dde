"""How many results came back, and which metrics that leaves unmeasured: one rule for every path.

goldeval asks each retriever for `depth` results per question (100 by default). A retriever of goldeval's
own returns every passage that scores, up to that depth: a shorter list is the end of what it found (BM25
skips passages without a query word; a corpus of seven documents has seven). A retriever from outside (a
search function, a LangChain or LlamaIndex retriever, a search service, a run file) may stop short by its
own setting, whatever goldeval asks: LangChain's `BM25Retriever` returns its `k` (4 by default). Then hit@10
is hit@4 under another name, and "rank >100" is not what happened. So:

- every question records how many results came back (`QuestionResult.returned`);
- a retriever's list is *cut short* when it is not one of goldeval's own, returned fewer than asked (but
  something) on every question, and fewer than the corpus holds (when the corpus is known);
- a metric whose cut-off k is past the most any question got back is then *unmeasurable*: its value is
  kept (it is what trec_eval computes on the list returned) but marked in the results file
  (`retrievers[i].returned.unmeasurable`), shown as `n/a` in the tables, and the misses it hides read
  "not in the N returned" with the advice to raise the retriever's k;
- a paired comparison leaves such a metric out for every pair that holds that retriever, with a note
  (`not_compared_note`), and a gate on it refuses (`gate_refusal`): a verdict on hit@10 of a list of 4
  would be a verdict on hit@4 under another name.

Every path reaches this through `goldeval.evaluate` (`returned_of` is called once per retriever there).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from goldeval.metrics.definitions import Metric

COMPLETE_KINDS = frozenset({"bm25", "dense", "hybrid", "rerank"})
"""goldeval's own retrievers (`RetrieverResult.config["kind"]`): they return everything that scores, up to
the depth, so a shorter list of theirs is complete, never cut short."""


@dataclass(frozen=True)
class Returned:
    """How many results one retriever returned per question (questions that failed left out)."""

    asked: int
    """The depth goldeval asked for."""
    min: int
    median: float
    max: int
    cut_short: bool
    """The retriever stopped short of `asked` by itself on every question (see the module docstring)."""

    @property
    def measurable_k(self) -> int | None:
        """The deepest cut-off k that still measures something (`max` of a list cut short), None when every
        k up to the depth does: the page reads it for its curves at every k."""
        return self.max if self.cut_short else None

    def to_dict(self, metrics: Iterable[Metric]) -> dict[str, Any]:
        """The results file's `returned` object, with the metrics it leaves unmeasured."""
        return {"asked": self.asked, "min": self.min, "median": self.median, "max": self.max,
                "cut_short": self.cut_short, "unmeasurable": [str(m) for m in unmeasurable(metrics, self)]}


def returned_of(counts: Sequence[int], *, asked: int, kind: object, n_passages: int) -> Returned | None:
    """The `Returned` of one retriever from its per-question counts (None when every question failed);
    `n_passages` 0 when no corpus was given."""
    if not counts:
        return None
    most = max(counts)  # nothing at all on every question is a broken retriever (0 everywhere), not a short list
    short = 0 < most < asked and kind not in COMPLETE_KINDS and (n_passages == 0 or most < n_passages)
    return Returned(asked=asked, min=min(counts), median=float(statistics.median(counts)), max=most, cut_short=short)


def unmeasurable(metrics: Iterable[Metric], returned: Returned | None) -> list[Metric]:
    """The metrics whose cut-off k is past what a cut-short retriever returned: hit@10 of a list of 4."""
    deepest = returned.measurable_k if returned is not None else None
    if deepest is None:
        return []
    return [m for m in metrics if m.k is not None and m.k > deepest]


def _past_a_short_list(returned: int | None, cut_short: bool) -> bool:
    return cut_short and returned is not None


def miss_rank(returned: int | None, depth: int, cut_short: bool) -> str:
    """A miss's rank as a table cell shows it: `not in the 4 returned` past a list cut short, else `>100`."""
    return f"not in the {returned} returned" if _past_a_short_list(returned, cut_short) else f">{depth}"


def not_compared_note(metrics: Sequence[Metric], name: str, returned: Returned) -> str:
    """`hit@10, ndcg@10: not compared: retriever lc returned at most 4 results; raise its k` (the verdicts' note)."""
    return (f"{', '.join(str(m) for m in metrics)}: not compared: retriever {name} returned at most "
            f"{returned.max} results; raise its k")


def gate_refusal(metric: Metric, name: str, returned: Returned) -> str:
    """The one line a gate on an unmeasurable metric refuses with: the metric, the retriever, how many
    came back, the fix."""
    return (f"--fail-if-worse {metric}: cannot gate: retriever {name} returned at most {returned.max} results "
            f"(of {returned.asked} asked), so {metric} is unmeasurable; raise the retriever's own k to at least "
            f"{metric.k} and evaluate again, or gate a metric at k <= {returned.max}")


def miss_place(returned: int | None, depth: int, cut_short: bool) -> str:
    """Where a miss's answer is: `not in the 4 returned` past a list cut short, else `rank >100`."""
    place = miss_rank(returned, depth, cut_short)
    return place if _past_a_short_list(returned, cut_short) else f"rank {place}"


def returned_from_dict(data: Any, where: str) -> Returned | None:
    """A results file's `returned` object (None when absent: a file written before it was recorded)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: must be an object")
    numbers = {}
    for key in ("asked", "min", "max"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{where}.{key}: must be a count, not {value!r}")
        numbers[key] = value
    median = data.get("median")
    if isinstance(median, bool) or not isinstance(median, (int, float)) or not numbers["min"] <= median <= numbers["max"]:
        raise ValueError(f"{where}.median: must be a number from min to max, not {median!r}")
    if not isinstance(data.get("cut_short"), bool):
        raise ValueError(f"{where}.cut_short: must be true or false")
    return Returned(asked=numbers["asked"], min=numbers["min"], median=float(median), max=numbers["max"],
                    cut_short=data["cut_short"])
