"""Does the ranking of systems survive when machine labels replace a person's?

Every retriever of the results files is scored three times from its kept top list, by the one scorer
(`goldeval.scorecard.scoring.score_run`, `goldeval.scorecard.curves.summarise`): with the people's
labels, with machine labels filling what no person judged, and with machine labels only
(`goldeval.judging.labels`). The systems are then compared by the one comparison
(`goldeval.stats.change.compare_cards`, the rule behind `goldeval.compare_results`), and the orderings
set side by side:

- Kendall's tau (tau-b: ties in either ordering counted as neither concordant nor discordant; Kendall
  1945), over the systems' means of the lead metric;
- tau_AP (Yilmaz, Aslam & Robertson 2008, "A new rank correlation coefficient for information
  retrieval"): 2/(N-1) * sum over i = 2..N of C(i)/(i-1) - 1, walking the other ordering from the top,
  C(i) the systems above i that the people's ordering also puts above it: a swap at the top costs more;
- every paired verdict (better / worse / no difference beyond noise) that is not the people's;
- judged@k at the headline k: how much of each top k carries a label under each.

Only metrics whose cut-off is within the kept top list are rescored: the rest cannot be computed from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from goldeval.golden.model import GoldenSet
from goldeval.ids import DocumentOf
from goldeval.judging.labels import Key, filled, machine_only
from goldeval.judging.pool import system_labels
from goldeval.metrics.definitions import Metric, headline_metrics
from goldeval.run import Run
from goldeval.scorecard.curves import summarise
from goldeval.scorecard.model import Scorecard
from goldeval.scorecard.scoring import score_run
from goldeval.stats.change import compare_cards

SCHEMES = ("people", "filled", "machine")
"""people's labels only; people + machine filling the unjudged; machine labels only."""


def rescored(cards: Sequence[Scorecard], labels: Sequence[str], golden: GoldenSet) -> Scorecard:
    """One scorecard holding every retriever of `cards`, scored against `golden` from its kept top list."""
    keep = min(max(c.k) for c in cards)
    metrics = [m for m in cards[0].metrics if m.k is not None and m.k <= keep]
    names = system_labels(cards, labels)
    hits = [h for c in cards for r in c.retrievers for q in r.questions for h in q.top]
    document_of = DocumentOf({h.id: h.doc for h in hits}, {h.doc for h in hits})
    results = []
    for card, systems in zip(cards, names, strict=True):
        for r, system in zip(card.retrievers, systems, strict=True):
            run = Run(system)
            for q in r.questions:
                # the kept top list is in the one ranking order already (it is the run's first results)
                run.add_ranked(q.id, [(h.id, h.score) for h in q.top])
                if q.error:
                    run.errors[q.id] = q.error
            result = score_run(system, run, golden, metrics, cards[0].level, document_of, keep, r.seconds)
            result.config = dict(r.config)
            summarise(result, metrics, keep)
            results.append(result)
    ks = sorted({m.k for m in metrics if m.k is not None})
    first = cards[0]
    return replace(first, retrievers=results, metrics=metrics, k=ks, depth=keep,
                   headline=[m for m in first.headline if m in metrics] or headline_metrics(metrics, ks)[:1],
                   identity=replace(first.identity, golden_fingerprint=golden.fingerprint()),
                   golden={**first.golden, "fingerprint": golden.fingerprint()}, statistics=None)


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Kendall's tau-b between two score lists of the same systems; None when either is constant."""
    concordant = discordant = ties_a = ties_b = 0
    n = len(a)
    for i in range(n):
        for j in range(i + 1, n):
            da, db = a[i] - a[j], b[i] - b[j]
            if da == 0 and db == 0:
                continue
            if da == 0:
                ties_a += 1
            elif db == 0:
                ties_b += 1
            elif (da > 0) == (db > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = ((concordant + discordant + ties_a) * (concordant + discordant + ties_b)) ** 0.5
    return (concordant - discordant) / denominator if denominator else None


def tau_ap(truth: Sequence[float], other: Sequence[float]) -> float | None:
    """tau_AP of `other`'s ordering against `truth`'s (higher score first); None with fewer than two
    systems or a tie in either (the coefficient is defined on strict orderings)."""
    n = len(truth)
    if n < 2 or len(set(truth)) < n or len(set(other)) < n:
        return None
    order = sorted(range(n), key=lambda i: (-other[i], i))
    total = 0.0
    for position in range(1, n):
        system = order[position]
        above = order[:position]
        total += sum(truth[s] > truth[system] for s in above) / position
    return 2 * total / (n - 1) - 1


def ranking_check(cards: Sequence[Scorecard], labels: Sequence[str], golden: GoldenSet, machine: Mapping[Key, int],
                  people: Mapping[Key, int], model: str, *, seed: int = 0, resamples: int = 10_000) -> dict[str, Any]:
    """The three scorings of every headline metric the kept lists allow: orderings, tau and tau_AP against
    the people's, judged@k, and each paired verdict that is not the people's. Only the questions the
    results hold are scored (a question added to the golden set since has no ranking to score)."""
    held = {q.id for q in cards[0].retrievers[0].questions} if cards and cards[0].retrievers else set()
    questions = [q for q in golden.questions if q.id in held]
    golden = GoldenSet(questions, golden.qrels.subset(q.id for q in questions), path=golden.path, version=golden.version)
    sets = {"people": golden, "filled": filled(golden, machine, model, people),
            "machine": machine_only(golden, machine, model)}
    scored = {name: rescored(cards, labels, s) for name, s in sets.items()}
    card = scored["people"]
    shown = card.headline or card.metrics[:1]
    systems = [r.name for r in card.retrievers]
    reports = {}
    if len(systems) > 1:
        reports = {name: compare_cards([c], [name], metrics=list(shown), seed=seed, resamples=resamples)
                   for name, c in scored.items()}
    out: dict[str, Any] = {"metrics": [_one(metric, scored, reports, systems) for metric in shown],
                           "left_out": [str(m) for m in cards[0].headline if m not in shown]}
    out["conclusion_changes"] = any(m["conclusion_changes"] for m in out["metrics"])
    return out


def _one(metric: Metric, scored: Mapping[str, Scorecard], reports: Mapping[str, Any], systems: list[str]) -> dict[str, Any]:
    k = metric.k or scored["people"].depth
    means = {name: [r.metrics.get(metric, float("nan")) for r in c.retrievers] for name, c in scored.items()}
    out: dict[str, Any] = {"metric": str(metric), "k": k, "schemes": {}, "verdicts": [], "changes": []}
    for name, c in scored.items():
        order = sorted(systems, key=lambda s: (-means[name][systems.index(s)], s))
        out["schemes"][name] = {
            "means": dict(zip(systems, means[name], strict=True)), "order": order,
            "judged_at_k": {r.name: (r.judged[k - 1] if len(r.judged) >= k else None) for r in c.retrievers},
            "kendall_tau": kendall_tau(means["people"], means[name]),
            "tau_ap": tau_ap(means["people"], means[name]),
        }
    for name, report in reports.items():
        for result in report.comparison.for_metric(metric):
            out["verdicts"].append({"scheme": name, "a": result.a, "b": result.b, "diff": result.diff,
                                    "p": result.p_adjusted, "verdict": _direction(result.diff, result.significant),
                                    "text": result.verdict})
    people_verdicts = {(v["a"], v["b"]): v["verdict"] for v in out["verdicts"] if v["scheme"] == "people"}
    for v in out["verdicts"]:
        if v["scheme"] != "people" and people_verdicts.get((v["a"], v["b"])) != v["verdict"]:
            out["changes"].append({**v, "people": people_verdicts.get((v["a"], v["b"]))})
    out["orders_change"] = {name: s["order"] != out["schemes"]["people"]["order"] for name, s in out["schemes"].items()}
    out["conclusion_changes"] = bool(out["changes"]) or any(out["orders_change"].values())
    return out


def _direction(diff: float, significant: bool) -> str:
    """The paired verdict as a word: `better` / `worse` beyond noise (the comparison's own test), else `same`."""
    if not significant or diff == 0:
        return "same"
    return "better" if diff > 0 else "worse"
