"""What changed between two runs: the golden set (shared questions), the configuration, the questions that flipped.

Runs on different golden-set versions are compared on the questions they share *unchanged* (same id,
text, intent and relevant answers): a relabelled question scores under different labels in each run, so
its difference says nothing about retrieval. A question judged further (more judged-not-relevant
passages) stays shared: that changes no metric but bpref, which is then left out of the comparison. `shared_questions` names what was added, removed and
relabelled; `restrict` cuts scorecards to the shared questions, recomputing each mean from the
per-question values (never a second formula), so the usual paired comparison applies.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from goldeval.fingerprint import fingerprint
from goldeval.golden.versions import Changes, changes_between, label_digest, labels_of
from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import QuestionResult, Scorecard


@dataclass(frozen=True)
class Shared:
    """The questions two or more runs share unchanged, and what differs."""

    qids: list[str]
    totals: list[int]
    """Number of questions of each run."""
    versions: list[int | None]
    changes: Changes
    """From the first run to the last."""

    @property
    def partial(self) -> bool:
        return any(n != len(self.qids) for n in self.totals)

    def describe(self) -> str:
        """E.g. `compared on the 10 questions both runs share (of 11 and 12; golden set version 3 -> 4: ...)`."""
        versions = " -> ".join("unfrozen" if v is None else str(v) for v in self.versions)
        of = " and ".join(str(n) for n in self.totals)
        bpref = "; bpref left out: it counts judged-not-relevant passages" if self.changes.judged else ""
        return (f"compared on the {len(self.qids)} questions the runs share unchanged (of {of}; golden set "
                f"version {versions}: {self.changes.describe()}{bpref})")


def question_digests(card: Scorecard) -> dict[str, str]:
    """Question id -> `label_digest` of what the run scored it against: its labels (text, intent,
    relevant ids and grades) and its judged-not-relevant ids."""
    return {q.id: label_digest([q.question, "off_topic" if q.off_topic else "answerable", sorted(q.expected.items())],
                               sorted(q.nonrelevant))
            for q in (card.retrievers[0].questions if card.retrievers else [])}


def same_golden(cards: Sequence[Scorecard]) -> bool:
    prints = {c.golden.get("fingerprint") or c.identity.golden_fingerprint for c in cards}
    return len(prints) <= 1


def shared_questions(cards: Sequence[Scorecard]) -> Shared:
    """The questions every run scored with the same labels (judged-not-relevant documents may differ:
    they change no metric but bpref, which `restrict` then leaves out)."""
    digests = [question_digests(c) for c in cards]
    common = set(digests[0])
    for d in digests[1:]:
        common &= {q for q in d if q in digests[0] and labels_of(digests[0][q]) == labels_of(d[q])}
    order = [q for q in digests[0] if q in common]
    return Shared(order, [len(d) for d in digests], [c.identity.golden_version for c in cards],
                  changes_between(digests[0], digests[-1]))


def restrict(card: Scorecard, qids: Sequence[str], *, drop: Sequence[Metric] = ()) -> Scorecard:
    """A copy of `card` with only these questions and without the `drop` metrics; means recomputed from
    the questions' values, statistics dropped.

    Its golden fingerprint becomes one of the shared questions, so restricted cards of different
    versions compare (and restricted cards of different question sets still refuse to)."""
    from goldeval.scorecard.curves import flips, summarise

    keep = set(qids)
    out = copy.deepcopy(card)
    out.metrics = [m for m in out.metrics if m not in drop]
    out.headline = [m for m in out.headline if m not in drop] or out.metrics[:3]
    for r in out.retrievers:
        r.questions = [q for q in r.questions if q.id in keep]
        for q in r.questions:
            q.metrics = {m: v for m, v in q.metrics.items() if m not in drop}
        r.intervals, r.ranges, r.judged = {}, {}, []  # of the whole set: not of these questions
        summarise(r, out.metrics, out.depth)
    out.flips = flips(out.retrievers, out.depth)
    out.statistics = None
    digest = fingerprint(sorted((q, labels_of(d)) for q, d in question_digests(out).items()))
    out.golden = {**out.golden, "fingerprint": f"shared-{digest}", "shared_of": card.golden.get("fingerprint"),
                  "n_questions": len(out.retrievers[0].questions) if out.retrievers else 0}
    return out


@dataclass(frozen=True)
class Flips:
    """Questions one system finds in its top k and the other does not, on one hit metric."""

    candidate: str
    baseline: str
    metric: Metric
    found: list[QuestionResult]
    """Missed by the baseline, found by the candidate."""
    lost: list[QuestionResult]
    """Found by the baseline, missed by the candidate."""


def flipped(cards: Sequence[Scorecard], names: Sequence[Sequence[str]], pairs: Sequence[tuple[str, str]],
            metric: Metric) -> list[Flips]:
    """For each (candidate, baseline) pair, the headline questions that flipped on `metric` (a 0/1 metric):
    the questions its verdict counts (synthetic ones are beside, `goldeval.golden.model.headline_split`)."""
    by_system = {s: r for card, systems in zip(cards, names, strict=True) for r, s in zip(card.retrievers, systems, strict=True)}
    out = []
    for a, b in pairs:
        cand = {q.id: q for q in by_system[a].headline_questions}
        base = {q.id: q for q in by_system[b].headline_questions}
        shared = [qid for qid in base if qid in cand]
        found = [cand[q] for q in shared if cand[q].metrics.get(metric, 0.0) > base[q].metrics.get(metric, 0.0)]
        lost = [cand[q] for q in shared if cand[q].metrics.get(metric, 0.0) < base[q].metrics.get(metric, 0.0)]
        out.append(Flips(a, b, metric, found, lost))
    return out


def config_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """`options.k1: 1.2 -> 1.5` for every configuration value that differs (nested keys dotted)."""
    old, new = _flatten(before), _flatten(after)
    lines = []
    for key in sorted(set(old) | set(new)):
        if old.get(key, _NONE) != new.get(key, _NONE):
            lines.append(f"{key}: {_show(old.get(key, _NONE))} -> {_show(new.get(key, _NONE))}")
    return lines


_NONE = object()


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested keys dotted; a list of objects (a hybrid's `parts`) by position: `parts.0.options.k1`."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{prefix}{key}."))
        elif isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
            out.update(_flatten({str(i): v for i, v in enumerate(value)}, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _show(value: Any) -> str:
    return "(none)" if value is _NONE else json.dumps(value, default=str)
