"""Did a change make retrieval better? One comparison, one gate, for every path (issue 18, item 6).

`compare_results(baseline, candidate, gate="hit@5")` is what `goldeval compare --fail-if-worse` and
`goldeval.testing.assert_no_regression` both call, so the same files get the same verdict on both.
The rules it holds, once:

- **Which questions.** Runs are compared on the questions they share *unchanged* (same id, text,
  intent and relevant answers; `history.changes.shared_questions`), whatever their golden-set
  fingerprints say. A question only in the baseline, only in the candidate, or relabelled between them
  is left out and named (`ChangeReport.shared`); a question judged further stays and leaves bpref out.
  No answerable question in common is bad input.
- **Which pairs.** Each retriever of the candidate against its namesake in the baseline
  (`stats.compare.gate_pairs`); one file: every retriever against the first.
- **When the gate fails.** Only when a candidate is worse on the gated metric beyond noise: a negative
  difference whose paired-test p (Holm over the gated pairs; `stats.compare.gate`) is below
  1 - confidence. A gated retriever that errored on questions makes the gate *untrusted*: its numbers
  cannot gate either way.
- **What cannot be compared.** A metric past the list a retriever cut short (hit@10 of a retriever that
  returned 4; `goldeval.scorecard.depth`) is left out of every verdict on that retriever, with a note,
  and a gate on it refuses (InputError: the metric, the retriever, how many came back, the fix).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from goldeval.errors import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_OK, InputError
from goldeval.history.changes import (
    Flips,
    Shared,
    config_changes,
    flipped,
    restrict,
    same_golden,
    shared_questions,
)
from goldeval.metrics.definitions import Metric, headline_metrics, parse_metric
from goldeval.scorecard.depth import gate_refusal
from goldeval.scorecard.model import Scorecard
from goldeval.scorecard.statistics import Comparison
from goldeval.stats.compare import (
    GateCheck,
    compare_scorecards,
    format_p,
    gate_pairs,
    pair_systems,
    short_lists,
    system_names,
)
from goldeval.stats.compare import gate as gate_checks

GateStatus = Literal["passed", "failed", "untrusted"]
"""passed: nothing worse beyond noise; failed: a candidate is; untrusted: a gated retriever errored."""


@dataclass(frozen=True)
class GateVerdict:
    """The verdict of a `--fail-if-worse` gate on one metric."""

    metric: Metric
    status: GateStatus
    reason: str
    """One line per failing pair (or the one line of a pass / an untrusted gate), as both paths say it."""
    checks: list[GateCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Retrievers that could not be gated (no namesake in the baseline)."""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def exit_code(self) -> int:
        """0 passed, 1 the gate failed, 2 it cannot be trusted (the errors are the input's)."""
        return {"passed": EXIT_OK, "failed": EXIT_GATE_FAILED, "untrusted": EXIT_BAD_INPUT}[self.status]

    def to_dict(self) -> dict[str, Any]:
        return {"metric": str(self.metric), "status": self.status, "reason": self.reason, "notes": self.notes,
                "checks": [{"candidate": c.result.a, "baseline": c.result.b, "diff": c.result.diff,
                            "p": c.result.p, "p_adjusted": c.p_adjusted, "worse": c.worse} for c in self.checks]}


@dataclass
class ChangeReport:
    """A candidate compared with its baseline: what changed, on which questions, and the gate's verdict.

    `comparison` holds, per metric and pair, wins/losses/ties in questions, the difference with its
    paired-bootstrap interval and the paired test; `flips` the questions that moved on the lead metric.
    """

    comparison: Comparison
    baseline: str
    candidate: str
    metric: Metric
    """The lead metric: the gated one, else the first hit@k shown, else the first shown."""
    flips: list[Flips] = field(default_factory=list)
    shared: Shared | None = None
    """Across files: the questions compared (shared unchanged) and those left out; None inside one file."""
    config: Mapping[str, list[str]] = field(default_factory=dict)
    """Candidate system -> its configuration changes against the baseline."""
    others: list[Metric] = field(default_factory=list)
    """The metrics shown (the headline ones unless asked otherwise)."""
    gate: GateVerdict | None = None
    scorecards: list[Scorecard] = field(default_factory=list)
    """The scorecards as compared (cut to the shared questions)."""

    # goldeval 0.2's `testing.assert_no_regression` returned the list of GateChecks: until the next release
    # the report still reads as that list (iterate, index, len), with a warning naming the new spelling.
    def _old_checks(self) -> list[GateCheck]:
        warnings.warn("assert_no_regression now returns a ChangeReport; its checks are report.gate.checks",
                      FutureWarning, stacklevel=3)
        return list(self.gate.checks) if self.gate is not None else []

    def __iter__(self) -> Iterator[GateCheck]:
        return iter(self._old_checks())

    def __len__(self) -> int:
        return len(self._old_checks())

    def __getitem__(self, index: int) -> GateCheck:
        return self._old_checks()[index]

    def __bool__(self) -> bool:
        return True  # a report is a report, whatever __len__ says (and `if report:` never warns)

    @property
    def questions_changed(self) -> bool:
        """Some question of one run was left out (only in one run, or relabelled) or judged further (bpref
        left out): what every path says (`Shared.describe`)."""
        return self.shared is not None and (self.shared.partial or not self.shared.changes.empty)

    def to_dict(self) -> dict[str, Any]:
        data = self.comparison.to_dict()
        if self.shared is not None:
            s = self.shared
            data["shared"] = {"questions": s.qids, "of": s.totals, "versions": s.versions,
                              "only_in_baseline": s.changes.removed, "only_in_candidate": s.changes.added,
                              "added": s.changes.added, "removed": s.changes.removed, "relabelled": s.changes.changed}
        data["flips"] = [{"candidate": f.candidate, "baseline": f.baseline, "metric": str(f.metric),
                          "better": [q.id for q in f.found], "worse": [q.id for q in f.lost]} for f in self.flips]
        if self.gate is not None:
            data["gate"] = self.gate.to_dict()
        return data


def compare_results(baseline: Scorecard | str | Path, candidate: Scorecard | str | Path, *,
                    gate: str | Metric | None = None, metrics: Sequence[str | Metric] | None = None,
                    labels: Sequence[str] = ("baseline", "candidate"), seed: int = 0, resamples: int = 10_000,
                    confidence: float = 0.95) -> ChangeReport:
    """Compare a candidate evaluation with its baseline (scorecards or saved results files) and, with
    `gate="hit@5"`, say whether the candidate is worse beyond noise (`report.gate`).

    Raises InputError on bad input: an unknown metric, no retriever to pair, no question in common.
    """
    cards = [c if isinstance(c, Scorecard) else Scorecard.load(c) for c in (baseline, candidate)]
    return compare_cards(cards, list(labels), gate=gate, metrics=metrics, seed=seed, resamples=resamples,
                         confidence=confidence)


def compare_cards(cards: Sequence[Scorecard], labels: Sequence[str], *, gate: str | Metric | None = None,
                  metrics: Sequence[str | Metric] | None = None, seed: int = 0, resamples: int = 10_000,
                  confidence: float = 0.95) -> ChangeReport:
    """`compare_results` for one scorecard (its retrievers) or several (each against the first)."""
    from goldeval.stats.annotate import check_settings

    check_settings(resamples=resamples, confidence=confidence, power=0.8)
    if sum(len(c.retrievers) for c in cards) < 2:
        raise InputError("this results file holds only one retriever: nothing to compare it with",
                         value=labels[0], hint="pass a second results file, or evaluate several --retriever")
    cut, shared = on_shared_questions(cards)
    wanted = [m if isinstance(m, Metric) else parse_metric(m) for m in metrics] if metrics else None
    gated = None if gate is None else gate if isinstance(gate, Metric) else parse_metric(gate)
    if gated is not None and wanted is not None and gated not in wanted:
        wanted.append(gated)
    pairs, notes = _plan_gate(gated, cut, labels) if gated is not None else ([], [])
    comparison = compare_scorecards(cut, labels=labels, metrics=wanted, seed=seed, resamples=resamples,
                                    confidence=confidence)
    shown = [m for m in (wanted or cut[0].headline or headline_metrics(comparison.metrics, cut[0].k))
             if m in comparison.metrics]
    verdict = _verdict(comparison, pairs, notes, gated) if gated is not None else None
    compared = [m for m in [*shown, *comparison.metrics] if comparison.for_metric(m)]  # not the unmeasurable
    report = ChangeReport(comparison, labels[0], ", ".join(labels[1:]) or labels[0],
                          gated or _lead(compared or [*shown, *comparison.metrics]),
                          shared=shared, others=shown, gate=verdict, scorecards=cut)
    if len(cut) > 1:
        _what_changed(report, cut, labels)
    return report


def on_shared_questions(cards: Sequence[Scorecard]) -> tuple[list[Scorecard], Shared | None]:
    """Cards cut to the questions they all share unchanged, and what was left out (None for one card)."""
    if len(cards) < 2:
        return list(cards), None
    shared = shared_questions(cards)
    complete = not shared.partial and not (shared.changes.added or shared.changes.removed or shared.changes.changed)
    if same_golden(cards) and complete and not shared.changes.judged:
        return list(cards), shared
    answerable = {q.id for q in cards[0].retrievers[0].answerable} if cards[0].retrievers else set()
    if not answerable & set(shared.qids):
        raise InputError("these runs share no answerable question unchanged: nothing to compare",
                         value=shared.changes.describe(), hint="compare runs on the same golden set or close versions")
    drop = [Metric("bpref")] if shared.changes.judged else []  # other judged-not-relevant passages: bpref moves
    return [restrict(card, shared.qids, drop=drop) for card in cards], shared


def _lead(metrics: Sequence[Metric]) -> Metric:
    """The first hit@k (shown ones first), else the first metric shown."""
    hits = [m for m in metrics if m.name == "hit"]
    return hits[0] if hits else metrics[0]


def _what_changed(report: ChangeReport, cards: Sequence[Scorecard], labels: Sequence[str]) -> None:
    """The questions that moved on the lead metric and the configuration changes of each pair."""
    comparison = report.comparison
    pairs = [(a, b) for a, b in pair_systems(cards, labels)[0] if a in comparison.systems]
    names = system_names(cards, labels)
    configs = {s: r.config for card, systems in zip(cards, names, strict=True)
               for r, s in zip(card.retrievers, systems, strict=True)}
    if report.metric in comparison.metrics:
        report.flips = flipped(cards, names, pairs, report.metric)
    report.config = {a: config_changes(configs[b], configs[a]) for a, b in pairs}


def _plan_gate(metric: Metric, cards: Sequence[Scorecard], labels: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The gated pairs, checked before the resampling: the metric exists and something is gated."""
    available = [m for m in cards[0].metrics if all(m in card.metrics for card in cards)]
    if metric not in available:
        raise InputError(f"--fail-if-worse {metric}: not a metric of "
                         + ("these results" if len(cards) > 1 else "this results file"),
                         value=str(metric), hint="available: " + ", ".join(str(m) for m in available))
    pairs, notes = gate_pairs(cards, labels)
    if not pairs:
        raise InputError(f"--fail-if-worse {metric}: no retriever of the later files has a baseline of the same "
                         "name in the first file, so nothing can be gated", value=str(metric),
                         hint="evaluate the candidate with the baseline's retriever names; " + "; ".join(notes))
    short = short_lists(cards, labels)  # a metric past a list cut short is compared in no pair: never gated either
    for system in dict.fromkeys(s for pair in pairs for s in pair):
        if system in short and metric in short[system].unmeasurable and (got := short[system].returned) is not None:
            raise InputError(gate_refusal(metric, system, got), value=str(metric))
    return pairs, notes


def _verdict(comparison: Comparison, pairs: Sequence[tuple[str, str]], notes: list[str], metric: Metric) -> GateVerdict:
    """The gate's verdict on the comparison: untrusted, failed (one line per worse pair) or passed."""

    errored = [s for s in dict.fromkeys(s for pair in pairs for s in pair) if comparison.n_errors.get(s)]
    if errored:
        return GateVerdict(metric, "untrusted", "gate cannot be trusted: the retriever errored on some questions of "
                           + ", ".join(f"{s} ({comparison.n_errors[s]})" for s in errored)
                           + "; fix the errors and evaluate again", notes=notes)
    checks = gate_checks(comparison, pairs, metric)
    holm_note = f" after Holm over {len(checks)} gated pairs" if len(checks) > 1 else ""
    worse = [f"gate failed: {c.result.a} is worse than {c.result.b} on {metric} beyond noise "
             f"({c.result.diff * 100:+.1f} points, {format_p(c.p_adjusted)}{holm_note})" for c in checks if c.worse]
    if worse:
        return GateVerdict(metric, "failed", "\n".join(worse), checks, notes)
    gated = ", ".join(f"{a} vs {b}" for a, b in pairs)
    return GateVerdict(metric, "passed", f"gate passed: nothing is worse than its baseline on {metric} beyond noise "
                       f"({gated})", checks, notes)
