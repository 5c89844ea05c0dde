"""Statistics: bootstrap intervals, paired tests, comparisons, off-topic separability, miss diagnosis.

The public entry points are `goldeval.compare(scorecard)` (defined in `stats.annotate`: runs them all and
returns an annotated copy) and `goldeval.compare_results(baseline, candidate)` (`stats.change`). This
package re-exports nothing, so `goldeval.stats.compare` is always the module of that name.
"""
