"""Pooled judging: the unjudged passages of several retrievers, verdicts and label fixes written back with provenance."""
