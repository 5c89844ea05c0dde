"""Statistics: bootstrap intervals, paired tests, comparisons, off-topic separability, miss diagnosis.

`compare(scorecard)` runs them all and returns an annotated copy; the pieces are importable apart.
"""

from goldeval.stats.annotate import compare

__all__ = ["compare"]
