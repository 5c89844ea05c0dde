"""Golden set: questions with every expected answer; load, validate, import and export."""

from goldset.golden.model import GoldenSet, Question

__all__ = ["GoldenSet", "Question"]
