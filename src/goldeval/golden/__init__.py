"""Golden set: questions with every expected answer; load, validate, import and export."""

from goldeval.golden.io import load_golden, write_golden_jsonl
from goldeval.golden.model import GoldenSet, Question
from goldeval.golden.trec import (
    load_trec_golden,
    load_trec_qrels,
    load_trec_topics,
    write_trec_qrels,
    write_trec_topics,
)
from goldeval.golden.validate import validate_golden

__all__ = [
    "GoldenSet",
    "Question",
    "load_golden",
    "load_trec_golden",
    "load_trec_qrels",
    "load_trec_topics",
    "validate_golden",
    "write_golden_jsonl",
    "write_trec_qrels",
    "write_trec_topics",
]
