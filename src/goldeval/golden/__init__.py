"""Golden set: questions (with intent and provenance) apart from their judgments (qrels); load,
validate, import and export."""

from goldeval.golden.io import load_golden, question_record, write_golden_jsonl
from goldeval.golden.model import GoldenSet, Intent, Judgment, Provenance, Qrels, Question
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
    "Intent",
    "Judgment",
    "Provenance",
    "Qrels",
    "Question",
    "load_golden",
    "load_trec_golden",
    "load_trec_qrels",
    "load_trec_topics",
    "question_record",
    "validate_golden",
    "write_golden_jsonl",
    "write_trec_qrels",
    "write_trec_topics",
]
