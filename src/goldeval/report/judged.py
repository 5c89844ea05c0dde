"""Lines saying how far the scorecard rests on judged passages: judged@k, metric ranges, label fixes.

Computes nothing: it formats `RetrieverResult.judged` and `.ranges` (`goldeval.metrics.judged`) and the
golden set's changelog summary (`golden.changes`), for the terminal and the Markdown scorecard.
"""

from __future__ import annotations

from goldeval.scorecard.model import Scorecard
from goldeval.textsafe import md_code, md_text


def _pool_k(card: Scorecard) -> int:
    return max(card.k) if card.k else 0


def judged_lines(card: Scorecard, *, markdown: bool = False) -> list[str]:
    """E.g. `judged@10: bm25 0.42, dense 0.38: ...` and `if the unjudged were relevant: hit@5 bm25 0.80 to 1.00`.

    Nothing when every retriever's top k is fully judged (or the scorecard predates judged@k)."""
    k = _pool_k(card)
    shares = {r.name: r.judged[k - 1] for r in card.retrievers if len(r.judged) >= k > 0}
    lines: list[str] = []
    changes = card.golden.get("changes") or {}
    if changes.get("text"):
        lines.append(f"Golden set: {md_text(changes['text']) if markdown else changes['text']}.")
    if not shares or min(shares.values()) >= 1.0:
        return lines
    name = md_code if markdown else (lambda n: n)
    lines.append(f"judged@{k}: " + ", ".join(f"{name(n)} {v:.2f}" for n, v in shares.items())
                 + f" of each top {k} carries a judgment; the rest nobody has looked at (`goldeval pool` judges them).")
    parts = []
    for metric in card.headline:
        wide = [(r.name, r.ranges[metric]) for r in card.retrievers
                if metric in r.ranges and r.ranges[metric][1] - r.ranges[metric][0] > 1e-9
                and metric not in r.unmeasurable]  # past what it returned: n/a, so no range either
        if wide:
            parts.append(f"{metric}: " + ", ".join(f"{name(n)} {lo:.3f} to {hi:.3f}" for n, (lo, hi) in wide))
    if parts:
        lines.append("Ranges if the unjudged were all not relevant / all relevant: " + "; ".join(parts))
    if any(m.name == "bpref" for m in card.metrics):
        lines.append("bpref counts only judged passages (unjudged ones are skipped, not read as misses).")
    return lines

