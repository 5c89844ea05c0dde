"""The terminal view of `goldeval judge`: calibration, the ranking check, the covered judge.

It renders the command's JSON data (`goldeval.cli.judge_cmd`) and computes nothing: every number and
every verdict word is in the data already.
"""

from __future__ import annotations

from typing import Any

from goldeval.textsafe import clean

NAMES = {"kappa": "Cohen's kappa", "weighted_kappa": "linear-weighted kappa", "alpha": "Krippendorff's alpha (interval)",
         "relevant_agreement": "agreement, relevant vs not", "bias": "bias (machine - people, grade points)"}
SCHEMES = {"people": "people only", "filled": "people + machine filling the unjudged", "machine": "machine only"}
SHOWN_DISAGREEMENTS = 10


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def judges_text(data: dict[str, Any]) -> str:
    """Everything the command found, as lines for the terminal."""
    calls = data["calls"]
    lines = [f"judge {clean(data['model'])} (prompt {data['prompt_version']}): {len(data['labels'])} passage(s), "
             f"{data['failed']} failed; {calls['made']} model call(s) in all, {calls['cached']} cached reply(ies), "
             f"{calls['retries']} retry(ies)"]
    lines += _calibration(data["calibration"])
    if data.get("ranking"):
        lines += _ranking(data["ranking"])
    if data.get("covered"):
        lines += _covered(data["covered"])
    return "\n".join(lines)


def _calibration(c: dict[str, Any]) -> list[str]:
    lines = ["", f"calibration against people: {c['pairs']} passage(s) both graded, over {c['questions']} question(s)"]
    if not c["pairs"]:
        return [*lines, "  nothing both graded: judge some of the passages people judged (drop --unjudged-only)"]
    lines += [f"  note: {clean(n)}" for n in c["notes"]]
    lines.append("  confusion (rows: people 0-3, columns: machine 0-3)")
    lines += ["    " + str(g) + "  " + " ".join(f"{n:>5}" for n in row) for g, row in enumerate(c["confusion"]["matrix"])]
    for key, name in NAMES.items():
        ci = c["intervals"].get(key)
        interval = f"  [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "  (no interval: fewer than 10 questions)"
        lines.append(f"  {name:<40} {_num(c['values'].get(key)):>7}{interval}")
    needed = c["pairs_needed_for_kappa_within_0.1"]
    if needed is not None:
        lines.append(f"  to pin kappa within +/-0.1 (95%): about {needed} graded pair(s) ({c['pairs']} here)")
    worst = c["disagreements"][:SHOWN_DISAGREEMENTS]
    if worst:
        lines.append(f"  disagreements, worst first ({len(c['disagreements'])} in all):")
        lines += [f"    {clean(d['question'])}  {clean(d['passage'])}  people {d['people']}  machine {d['machine']}"
                  for d in worst]
    return lines


def _ranking(ranking: dict[str, Any]) -> list[str]:
    lines = ["", "does the ranking survive?"]
    for r in ranking["metrics"]:
        lines.append(f"  {r['metric']} (judged@{r['k']} beside)")
        for name, s in r["schemes"].items():
            order = " > ".join(f"{clean(x)} {s['means'][x]:.3f}" for x in s["order"])
            judged = ", ".join(f"{clean(x)} {_num(v, 2)}" for x, v in s["judged_at_k"].items())
            lines.append(f"    {SCHEMES[name]:<38} {order}")
            lines.append(f"    {'':<38} tau {_num(s['kendall_tau'])}  tau_AP {_num(s['tau_ap'])}  judged@{r['k']}: {judged}")
        for ch in r["changes"]:
            lines.append(f"    verdict changes with {SCHEMES[ch['scheme']]}: {clean(ch['a'])} vs {clean(ch['b'])} is "
                         f"`{ch['verdict']}`, people say `{ch['people']}`")
    if ranking["left_out"]:
        lines.append(f"  not rescored (no cut-off within the kept lists): {', '.join(ranking['left_out'])}")
    if ranking["conclusion_changes"]:
        lines.append("  => the machine labels CHANGE a conclusion: do not let them stand in for people's labels as they are")
    else:
        lines.append("  => the machine labels change no ordering and no paired verdict")
    return lines


def _covered(c: dict[str, Any]) -> list[str]:
    t = c["threshold"]
    roc = c["roc_point"]
    lines = ["", f"does the corpus answer it? covered / not covered on {clean(c['retriever'])}'s top {c['k']}: "
             f"{c['n_answerable']} answerable, {c['n_off_topic']} off-topic, {c['failed']} failed",
             f"  judge: accuracy {_num(c['accuracy'])}, off-topic caught {_num(roc['tpr'])}, answerable refused "
             f"{_num(roc['fpr'])}, Youden's J {_num(c['youden_j'])}",
             f"  score threshold: AUC {_num(t['auc'])}, best Youden's J {_num(t['youden_j'])}; {clean(t['verdict'] or '')}"]
    if c["beats_threshold"] is not None:
        lines.append("  => the judge " + ("beats" if c["beats_threshold"] else "does not beat") +
                     " the score threshold on this golden set")
    return lines
