"""Quality against cost: the configurations no other one beats on both at once.

A configuration is on the front of a cost axis when no other configuration costs no more and scores
no less with at least one of the two strictly better (Pareto dominance). Configurations whose cost
was not measured on an axis are left off that axis's front (and said so by the missing value).
"""

from __future__ import annotations

from collections.abc import Sequence

Point = tuple[str, float | None, float | None]
"""(label, cost, quality): lower cost and higher quality are better."""


def pareto_front(points: Sequence[Point]) -> list[str]:
    """Labels of the non-dominated points, cheapest first (ties in cost: best quality first)."""
    known = [(label, cost, quality) for label, cost, quality in points if cost is not None and quality is not None]
    front = [
        (label, cost, quality) for label, cost, quality in known
        if not any(c <= cost and q >= quality and (c < cost or q > quality) for _, c, q in known)
    ]
    front.sort(key=lambda p: (p[1], -p[2]))
    return [label for label, _, _ in front]
