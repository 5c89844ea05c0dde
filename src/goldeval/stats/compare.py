"""Comparisons between retrievers on the same questions, counted in questions and in points.

For each metric and each pair of systems (candidate vs reference; with several systems every later
one against every earlier one): wins, losses and ties counted in questions, the mean difference with a
paired-bootstrap percentile interval, a paired test (exact McNemar for 0/1 metrics such as hit@k and
precision@1, the paired randomization test otherwise), Holm's correction across the pairs of a metric
when more than two systems are compared, the minimum detectable difference for the set size, the
number of questions needed to detect the observed difference, and a verdict in plain words.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from goldeval.errors import InputError
from goldeval.metrics.compute import question_mean
from goldeval.metrics.definitions import Metric
from goldeval.scorecard.depth import not_compared_note
from goldeval.scorecard.model import RetrieverResult, Scorecard
from goldeval.scorecard.statistics import Comparison, MetricComparison
from goldeval.stats.bootstrap import bootstrap_means, percentile_interval, rng_for
from goldeval.stats.paired import (
    holm,
    mcnemar_exact,
    minimum_detectable_difference,
    questions_needed,
    randomization_pvalues,
)
from goldeval.stats.sameset import check_same_questions

TIE_TOLERANCE = 1e-12
MCNEMAR = "exact McNemar"
RANDOMIZATION = "paired randomization"


def compare_values(
    values: Mapping[str, Mapping[Metric, Sequence[float] | np.ndarray]],
    *,
    metrics: Sequence[Metric] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    seed: int = 0,
    resamples: int = 10_000,
    confidence: float = 0.95,
    power: float = 0.8,
    excluded: Mapping[str, Collection[Metric]] | None = None,
) -> Comparison:
    """Compare systems from per-question values: `values[system][metric]`, aligned on the same questions.

    `pairs` lists the (candidate, reference) systems to compare; by default every system against every
    earlier one. Holm's correction runs over the pairs of each metric when there is more than one pair.
    `excluded[system]`: metrics not compared for any pair holding that system (unmeasurable for it).
    """
    systems = list(values)
    if len(systems) < 2:
        raise InputError("a comparison needs at least two systems", value=systems,
                         hint="evaluate two or more retrievers, or pass two results files")
    metric_names = list(metrics) if metrics is not None else list(values[systems[0]])
    n = len(next(iter(values[systems[0]].values()))) if metric_names else 0
    alpha = 1 - confidence
    if pairs is None:
        index = [(j, i) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    else:
        index = [(systems.index(a), systems.index(b)) for a, b in pairs]
    several = len(index) > 1
    out = excluded or {}
    columns = [(m, a, b) for m in metric_names for a, b in index
               if m not in out.get(systems[a], ()) and m not in out.get(systems[b], ())]
    comparison = Comparison(systems, n, metric_names, [], confidence, alpha, power, seed, resamples,
                            "holm" if several else "none")
    if not columns or n == 0:
        return comparison
    stacked = {(s, m): np.asarray(values[s][m], dtype=np.float64) for s in systems for m in metric_names}
    a_vals = np.column_stack([stacked[(systems[a], m)] for m, a, _ in columns])
    b_vals = np.column_stack([stacked[(systems[b], m)] for m, _, b in columns])
    diffs = a_vals - b_vals
    intervals = percentile_interval(bootstrap_means(diffs, resamples=resamples, rng=rng_for(seed, 2)), confidence)
    pvalues, tests = _pvalues(diffs, a_vals, b_vals, [m for m, _, _ in columns], resamples, seed)
    adjusted = _adjust(pvalues, [m for m, _, _ in columns], several)
    sd = _sd_of_differences(diffs, a_vals, b_vals)
    for j, (m, a, b) in enumerate(columns):
        comparison.results.append(_one(
            m, systems[a], systems[b], n, a_vals[:, j], b_vals[:, j], diffs[:, j], intervals[:, j],
            tests[j], pvalues[j], adjusted[j], sd[j], alpha, power, confidence,
        ))
    return comparison


def _one(
    metric: Metric, a: str, b: str, n: int, av: np.ndarray, bv: np.ndarray, d: np.ndarray, ci: np.ndarray,
    test: str, p: float, p_adj: float, sd: float, alpha: float, power: float, confidence: float,
) -> MetricComparison:
    wins = int(np.sum(d > TIE_TOLERANCE))
    losses = int(np.sum(d < -TIE_TOLERANCE))
    diff = question_mean(d)
    # The same non-zero difference on every question: there is no spread to size a test by, and a
    # detectable difference estimated from the systems' own spread would only mislead.
    same_everywhere = n > 1 and float(np.ptp(d)) <= TIE_TOLERANCE and abs(diff) > TIE_TOLERANCE
    mdd = None if same_everywhere else minimum_detectable_difference(sd, n, alpha=alpha, power=power)
    needed = None if same_everywhere else questions_needed(diff, sd, alpha=alpha, power=power)
    result = MetricComparison(
        metric=metric, a=a, b=b, n=n, mean_a=question_mean(av), mean_b=question_mean(bv), diff=diff,
        ci=[float(ci[0]), float(ci[1])], wins=wins, losses=losses, ties=n - wins - losses, test=test,
        p=float(p), p_adjusted=float(p_adj), significant=bool(p_adj < alpha), mdd=mdd,
        questions_needed=needed, verdict="", detectable="",
    )
    result.verdict = verdict_text(result, confidence)
    result.detectable = detectable_text(result, power)
    return result


def is_binary_metric(metric: Metric, values: np.ndarray) -> bool:
    """hit@k and precision@1 take only 0 and 1 per question: the exact McNemar test applies."""
    named = metric.name == "hit" or metric == Metric("precision", 1)
    return named and bool(np.all((values == 0) | (values == 1)))


def _pvalues(
    diffs: np.ndarray, a_vals: np.ndarray, b_vals: np.ndarray, metrics: list[Metric], rounds: int, seed: int
) -> tuple[np.ndarray, list[str]]:
    binary = [is_binary_metric(m, a_vals[:, j]) and is_binary_metric(m, b_vals[:, j]) for j, m in enumerate(metrics)]
    p = np.ones(diffs.shape[1])
    for j in (j for j, is_bin in enumerate(binary) if is_bin):
        p[j] = mcnemar_exact(a_vals[:, j], b_vals[:, j])
    rest = [j for j, is_bin in enumerate(binary) if not is_bin]
    if rest:
        p[rest] = randomization_pvalues(diffs[:, rest], rounds=rounds, rng=rng_for(seed, 3))
    return p, [MCNEMAR if is_bin else RANDOMIZATION for is_bin in binary]


def _adjust(pvalues: np.ndarray, metrics: list[Metric], several: bool) -> list[float]:
    if not several:
        return pvalues.tolist()
    out = pvalues.tolist()
    for metric in dict.fromkeys(metrics):
        idx = [j for j, m in enumerate(metrics) if m == metric]
        for j, adjusted in zip(idx, holm([pvalues[j] for j in idx]), strict=True):
            out[j] = adjusted
    return out


def _sd_of_differences(diffs: np.ndarray, a_vals: np.ndarray, b_vals: np.ndarray) -> np.ndarray:
    """Per-question sd of the differences; when the two systems never differ, the sd two unrelated
    systems would have (sqrt(var a + var b)), so the detectable difference is still stated."""
    n = diffs.shape[0]
    if n < 2:
        return np.zeros(diffs.shape[1])
    sd = diffs.std(axis=0, ddof=1)
    fallback = np.sqrt(a_vals.var(axis=0, ddof=1) + b_vals.var(axis=0, ddof=1))
    return np.asarray(np.where(sd > 0, sd, fallback))


def _points(x: float) -> str:
    return f"{abs(x) * 100:.1f}"


def format_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def verdict_text(r: MetricComparison, confidence: float = 0.95) -> str:
    """E.g. "base leads small on hit@5: finds 5 that small misses and misses 3 that it finds, of 33 questions
    (6.1 points, 95% CI -4 to +16, p = 0.5): within noise"."""
    if r.n == 1:
        return (f"{r.a} vs {r.b} on {r.metric}: one question: nothing can be tested "
                f"({r.a} {r.mean_a:.3g}, {r.b} {r.mean_b:.3g})")
    if r.wins == 0 and r.losses == 0:
        return f"{r.a} and {r.b} tie on {r.metric}: the same value on all {r.n} questions"
    leader, other, sign = (r.a, r.b, 1.0) if r.diff > 0 or (r.diff == 0 and r.wins >= r.losses) else (r.b, r.a, -1.0)
    low, high = sorted((sign * r.ci[0] * 100, sign * r.ci[1] * 100))
    p_text = format_p(r.p_adjusted) + (" after Holm" if r.p_adjusted != r.p else "")
    stats = f"{round(confidence * 100)}% CI {low:+.1f} to {high:+.1f}, {p_text}"
    if abs(r.diff) <= TIE_TOLERANCE:
        return (f"{r.a} and {r.b} are level on {r.metric}: {r.a} better on {r.wins}, worse on {r.losses} "
                f"of {r.n} questions, same mean ({stats}): within noise")
    better, worse = (r.wins, r.losses) if sign > 0 else (r.losses, r.wins)
    if r.test == MCNEMAR:
        head = (f"{leader} leads {other} on {r.metric}: finds {better} that {other} misses and misses "
                f"{worse} that it finds, of {r.n} questions ({_points(r.diff)} points")
    else:
        head = (f"{leader} leads {other} on {r.metric} by {_points(r.diff)} points (better on {better}, "
                f"worse on {worse} of {r.n} questions")
    outcome = "a real difference" if r.significant else "within noise"
    return f"{head}, {stats}): {outcome}"


def detectable_text(r: MetricComparison, power: float = 0.8) -> str:
    """E.g. "with 33 questions, only differences of about 24 points are detectable at 80% power; ..."."""
    if r.n == 1:
        return f"with one question, nothing on {r.metric} can be tested"
    if r.mdd is None and abs(r.diff) > TIE_TOLERANCE:
        text = (f"with {r.n} questions, the difference on {r.metric} is the same on every question "
                f"({r.diff * 100:+.1f} points)")
        return text + ("" if r.significant else "; too few questions for a test to call it real")
    if r.mdd is None:
        return f"with {r.n} questions, both systems score the same on every question on {r.metric}"
    text = (f"with {r.n} questions, only differences of about {r.mdd * 100:.0f} points on {r.metric} "
            f"are detectable at {power:.0%} power")
    if r.questions_needed is not None and not r.significant:
        text += f"; detecting the observed {_points(r.diff)} points would take about {r.questions_needed} questions"
    return text


# --- building comparisons from scorecards -------------------------------------------------------


def compare_scorecard(
    scorecard: Scorecard, *, metrics: Sequence[Metric] | None = None, seed: int = 0,
    resamples: int = 10_000, confidence: float = 0.95, power: float = 0.8,
) -> Comparison:
    """Compare the retrievers inside one scorecard (the first one is the reference of the others)."""
    return compare_scorecards([scorecard], metrics=metrics, seed=seed, resamples=resamples,
                              confidence=confidence, power=power)


def compare_scorecards(
    scorecards: Sequence[Scorecard], *, labels: Sequence[str] | None = None, metrics: Sequence[Metric] | None = None,
    seed: int = 0, resamples: int = 10_000, confidence: float = 0.95, power: float = 0.8,
) -> Comparison:
    """Compare the retrievers of scorecards that hold the same questions and golden set.

    One scorecard: every retriever against every earlier one. Several: each retriever of a later scorecard
    against the retriever of the same name in the first (the baseline), never two retrievers of one file
    (`pair_systems`); those left unpaired are named in `notes`. Systems are named by retriever, or
    `label/retriever` when names collide; `labels` default to `#1`, `#2`, ...
    A metric unmeasurable for a retriever (past the list it cut short, `goldeval.scorecard.depth`) is
    compared in no pair holding it, and `notes` say so.
    """
    labels = list(labels) if labels is not None else [f"#{i + 1}" for i in range(len(scorecards))]
    check_same_questions(scorecards, labels)
    # the headline questions (goldeval.golden.model.headline_split): synthetic ones never make a verdict
    qids = [q.id for q in scorecards[0].retrievers[0].headline_questions] if scorecards[0].retrievers else []
    values: dict[str, dict[Metric, np.ndarray]] = {}
    n_errors: dict[str, int] = {}
    common = _common_metrics(scorecards, metrics)
    pairs, notes = pair_systems(scorecards, labels)
    wanted = {s for pair in pairs for s in pair} if len(scorecards) > 1 else None
    if wanted is not None and not pairs:
        raise InputError("no retriever of the later files has a namesake in the first file: nothing to compare",
                         value=labels, hint="evaluate the candidate with the baseline's retriever names; " + "; ".join(notes))
    for sc, systems in zip(scorecards, system_names(scorecards, labels), strict=True):
        for r, system in zip(sc.retrievers, systems, strict=True):
            if wanted is not None and system not in wanted:
                continue
            by_id = {q.id: q for q in r.headline_questions}
            values[system] = {m: np.array([by_id[q].metrics.get(m, 0.0) for q in qids]) for m in common}
            n_errors[system] = sum(1 for q in r.headline_questions if q.error)
    short = {s: r for s, r in short_lists(scorecards, labels).items() if s in values}
    comparison = compare_values(values, metrics=common, pairs=pairs if len(scorecards) > 1 else None, seed=seed,
                                resamples=resamples, confidence=confidence, power=power,
                                excluded={s: r.unmeasurable for s, r in short.items()})
    comparison.n_errors = n_errors
    comparison.n_beside = len(scorecards[0].retrievers[0].synthetic_questions) if scorecards[0].retrievers else 0
    comparison.notes.extend(notes)
    comparison.notes.extend(not_compared_note(gone, s, r.returned) for s, r in short.items()
                            if (gone := [m for m in common if m in r.unmeasurable]) and r.returned is not None)
    return comparison


def short_lists(scorecards: Sequence[Scorecard], labels: Sequence[str]) -> dict[str, RetrieverResult]:
    """System -> its retriever, for those with metrics past the list they cut short (`RetrieverResult.unmeasurable`)."""
    return {s: r for sc, systems in zip(scorecards, system_names(scorecards, labels), strict=True)
            for r, s in zip(sc.retrievers, systems, strict=True) if r.unmeasurable}


def system_names(scorecards: Sequence[Scorecard], labels: Sequence[str]) -> list[list[str]]:
    """The system name of each retriever of each scorecard: its name, or `label/name` when names collide."""
    names = [r.name for sc in scorecards for r in sc.retrievers]
    clash = len(set(names)) < len(names)
    return [[f"{label}/{r.name}" if clash else r.name for r in sc.retrievers]
            for label, sc in zip(labels, scorecards, strict=True)]


def pair_systems(scorecards: Sequence[Scorecard], labels: Sequence[str], *,
                 verb: str = "compared") -> tuple[list[tuple[str, str]], list[str]]:
    """The (candidate, baseline) systems compared across files, and notes on the retrievers left out.

    Each retriever of a later scorecard is paired with the retriever of the same name in the first; else
    with the one retriever of the same spec without options (`bm25?k1=1.5` with `bm25`: the change
    under test); else, when the first and a later file hold one retriever each, with it whatever its name
    (noted). Never two retrievers of one file: `new/dense` vs `new/bm25` is not what changed.
    One scorecard: every retriever against every earlier one, no notes.
    """
    names = system_names(scorecards, labels)
    if len(scorecards) == 1:
        systems = names[0]
        return [(systems[j], systems[i]) for i in range(len(systems)) for j in range(i + 1, len(systems))], []
    baseline = {r.name: s for r, s in zip(scorecards[0].retrievers, names[0], strict=True)}
    configs = {s: r.config for sc, systems in zip(scorecards, names, strict=True)
               for r, s in zip(sc.retrievers, systems, strict=True)}
    pairs: list[tuple[str, str]] = []
    notes: list[str] = []
    for sc, systems in zip(scorecards[1:], names[1:], strict=True):
        later = [r.name for r in sc.retrievers]
        for r, system in zip(sc.retrievers, systems, strict=True):
            same_spec = [b for b in baseline if _spec(b) == _spec(r.name)]
            if r.name in baseline:
                pairs.append((system, baseline[r.name]))
                notes.extend(_variant_note(system, configs[system], baseline[r.name], configs[baseline[r.name]]))
            elif len(same_spec) == 1 and same_spec[0] not in later and [_spec(n) for n in later].count(_spec(r.name)) == 1:
                pairs.append((system, baseline[same_spec[0]]))
                notes.append(f"{system} is {verb} against {baseline[same_spec[0]]}: the same retriever with other options")
            elif len(sc.retrievers) == 1 and len(names[0]) == 1:
                pairs.append((system, names[0][0]))
                notes.append(f"{system} is {verb} against {names[0][0]}, the only retriever of the baseline")
            else:
                notes.append(f"{system} is not {verb}: no retriever named {r.name} in the baseline "
                             f"{labels[0]} ({', '.join(baseline)})")
    left = [s for s in names[0] if s not in {b for _, b in pairs}]
    if left and pairs:
        notes.append(f"{', '.join(left)} of the baseline {labels[0]} has no namesake in the later file(s)")
    return pairs, notes


def _variant_note(system: str, config: Mapping[str, object], baseline: str,
                  base_config: Mapping[str, object]) -> list[str]:
    """A pair of one name whose embedding model ran in other precisions (`dense:MODEL?precision=auto` on two
    machines: int8 on one, fp32 on the other): not the same retriever, so the comparison says so (issue 19).
    Results made before the precision was recorded are not flagged: what they ran is unknown."""
    from goldeval.history.changes import config_changes

    changed = [line for line in config_changes(base_config, config)
               if line.split(": ", 1)[0].endswith("options.precision") and "(none)" not in line]
    if not changed:
        return []
    return [f"{system} embedded in another precision than in the baseline ({'; '.join(changed)}): its vectors "
            "differ slightly, so part of any difference is the precision's, not the change under test"]


def _spec(name: str) -> str:
    """A retriever spec without its options: `dense:minilm?batch_size=8` -> `dense:minilm`."""
    return name.split("?", 1)[0]


@dataclass
class GateCheck:
    """One gated pair: is `a` (candidate) worse than `b` (baseline) beyond noise?"""

    result: MetricComparison
    p_adjusted: float
    """Holm-adjusted over the gated pairs only (equal to the raw p when a single pair is gated)."""
    worse: bool


def gate_pairs(scorecards: Sequence[Scorecard], labels: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The (candidate, baseline) systems a `--fail-if-worse` gate checks, and notes on those it cannot.

    One scorecard: every retriever against the first. Several: the pairs of `pair_systems` (each
    retriever of a later scorecard against its namesake in the first). Measuring `new/dense` against
    `frozen/bm25` says nothing about a regression.
    """
    if len(scorecards) == 1:
        names = system_names(scorecards, labels)
        return [(s, names[0][0]) for s in names[0][1:]], []
    pairs, notes = pair_systems(scorecards, labels, verb="gated")
    return pairs, [n for n in notes if "has no namesake" not in n]


def gate(comparison: Comparison, pairs: Sequence[tuple[str, str]], metric: Metric) -> list[GateCheck]:
    """Each gated pair on `metric`, with Holm's correction over the gated pairs only (not every pair)."""
    results = [comparison.get(metric, a, b) for a, b in pairs]
    raw = [r.p for r in results]
    adjusted = holm(raw) if len(raw) > 1 else raw
    return [GateCheck(r, float(p), bool(r.diff < -TIE_TOLERANCE and p < comparison.alpha))
            for r, p in zip(results, adjusted, strict=True)]


def _common_metrics(scorecards: Sequence[Scorecard], metrics: Sequence[Metric] | None) -> list[Metric]:
    available = [m for m in scorecards[0].metrics if all(m in sc.metrics for sc in scorecards)]
    if metrics is None:
        return available
    missing = [str(m) for m in metrics if m not in available]
    if missing:
        raise InputError(f"metric(s) {', '.join(missing)} not in every results file", value=missing,
                         hint="available: " + ", ".join(str(m) for m in available))
    return list(metrics)
