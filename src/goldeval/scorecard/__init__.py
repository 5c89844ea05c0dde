"""The Scorecard: typed results of an evaluation, its run identity, statistics, and the results JSON."""

from goldeval.scorecard.model import Hit, QuestionResult, RetrieverResult, RunIdentity, Scorecard
from goldeval.scorecard.statistics import Comparison, MetricComparison, Statistics

__all__ = ["Comparison", "Hit", "MetricComparison", "QuestionResult", "RetrieverResult", "RunIdentity",
           "Scorecard", "Statistics"]
