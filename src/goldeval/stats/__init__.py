"""Statistics: bootstrap intervals, paired tests, comparisons, off-topic separability, miss diagnosis."""
