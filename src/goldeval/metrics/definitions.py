"""What a metric is, apart from who computes it (the ir_measures split).

A metric is a small frozen value whose name round-trips: `parse_metric("ndcg@10")` gives
`Metric("ndcg", 10)` and `str(Metric("ndcg", 10)) == "ndcg@10"`. Results are keyed by it.

Definitions (binary relevance means a judgment >= 1; R is the number of relevant documents):
- hit@k (trec_eval success_k): 1 if any relevant document is in the top k, else 0.
- recall@k: relevant documents in the top k / R.
- precision@k (trec_eval P_k): relevant documents in the top k / k (k, not the number retrieved).
- mrr, mrr@k (trec_eval recip_rank): 1 / rank of the first relevant document (0 if none in the top k).
- ndcg@k (trec_eval ndcg_cut_k): sum of gain/log2(rank+1) over the top k divided by the same sum for
  the ideal ordering of the judged gains (Järvelin & Kekäläinen 2002; linear gains as trec_eval).
- map, map@k (trec_eval map, map_cut_k): mean of precision at each relevant document's rank, divided
  by R (relevant documents not retrieved contribute 0).
- rprec (trec_eval Rprec): precision at rank R.
- bpref (trec_eval bpref; Buckley & Voorhees, SIGIR 2004): (1/R) * sum over retrieved relevant r of
  1 - min(n_r, R) / min(N, R), n_r = judged non-relevant above r, N = judged non-relevant; unjudged
  documents are skipped, so it is robust to incomplete judgments (pooled golden sets).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from goldeval.errors import InputError
from goldeval.limits import check_int

METRIC_NAMES: dict[str, str] = {
    "hit": "hit@k: share of questions with a correct answer in the top k (success@k)",
    "recall": "recall@k: share of the expected answers found in the top k",
    "precision": "precision@k: correct answers in the top k, divided by k",
    "mrr": "MRR: 1 / rank of the first correct answer",
    "ndcg": "nDCG@k: graded gain discounted by log2(rank + 1), over the ideal",
    "map": "MAP: mean precision at the rank of each expected answer",
    "rprec": "R-precision: precision at rank R, R = number of expected answers",
    "bpref": "bpref: how often judged-relevant answers rank above judged-not-relevant ones (unjudged ignored)",
}
NEEDS_K = frozenset({"hit", "recall", "precision", "ndcg"})
OPTIONAL_K = frozenset({"mrr", "map"})
NO_K = frozenset({"rprec", "bpref"})
_ALIASES = {"success": "hit", "p": "precision", "r": "recall", "recip_rank": "mrr", "rprecision": "rprec"}
_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*(?:@\s*(\d+))?\s*$")


@dataclass(frozen=True, order=True)
class Metric:
    """A metric name and its cut-off, e.g. Metric("ndcg", 10) is nDCG@10."""

    name: str
    k: int | None = None

    def __post_init__(self) -> None:
        if self.name not in METRIC_NAMES:
            raise ValueError(f"unknown metric {self.name!r}; known: {', '.join(METRIC_NAMES)}")
        if self.name in NEEDS_K and self.k is None:
            raise ValueError(f"{self.name} needs a cut-off, e.g. {self.name}@10")
        if self.name in NO_K and self.k is not None:
            raise ValueError(f"{self.name} takes no cut-off")
        if self.k is not None and self.k < 1:
            raise ValueError(f"cut-off must be at least 1, got {self.k}")

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def description(self) -> str:
        return METRIC_NAMES[self.name]


def parse_metric(text: str) -> Metric:
    """Parse `ndcg@10`, `hit@5`, `mrr`, `P@5`, `success@1` into a Metric."""
    match = _PATTERN.match(text)
    if not match:
        raise InputError(f"cannot read metric {text!r}", value=text, hint="write it like ndcg@10, hit@5 or mrr")
    name = match.group(1).lower()
    name = _ALIASES.get(name, name)
    k = int(match.group(2)) if match.group(2) else None
    if k is not None:  # recall@1000000000 would retrieve a billion results per question (issue 20)
        check_int("k", k, what=f"the cut-off of {text!r}")
    try:
        return Metric(name, k)
    except ValueError as exc:
        raise InputError(str(exc), value=text, hint="known metrics: " + ", ".join(METRIC_NAMES)) from exc


def default_metrics(ks: tuple[int, ...] = (1, 5, 10)) -> list[Metric]:
    """The scorecard's metrics for cut-offs `ks`: hit, recall, precision and nDCG at each k, plus MRR and MAP."""
    out: list[Metric] = []
    for name in ("hit", "recall", "precision", "ndcg"):
        out.extend(Metric(name, k) for k in ks)
    out.extend([Metric("mrr"), Metric("map")])
    return out


DEFAULT_HEADLINE_K = 5
"""The cut-off verdicts lead with by default: about what a RAG pipeline hands its model. The largest k
of a small corpus saturates (every retriever "ties on hit@10")."""


def headline_metrics(metrics: Sequence[Metric], ks: Sequence[int], headline: Metric | None = None) -> list[Metric]:
    """The metrics every view leads with (terminal verdicts, Markdown, the page's first k), chosen here only.

    `headline` (from `--headline`) comes first; then hit@K, MRR and nDCG@K, where K is
    `headline.k`, else DEFAULT_HEADLINE_K when computed, else the largest computed k. Only metrics
    that were computed are returned.
    """
    k = headline.k if headline is not None and headline.k else (
        DEFAULT_HEADLINE_K if DEFAULT_HEADLINE_K in ks or not ks else max(ks))
    wanted = [headline] if headline is not None else []
    wanted += [Metric("hit", k), Metric("mrr"), Metric("ndcg", k)]
    chosen = [m for m in dict.fromkeys(wanted) if m in metrics]
    return chosen or list(metrics[:3])
