"""Golden set: questions (with intent and provenance) apart from their judgments (qrels); load,
validate, import and export."""

from goldeval._lazy import exports
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

# Public too, imported on first use (their modules are heavier or optional).
_LAZY = {
    "load_cranfield_golden": "goldeval.golden.cranfield",
    "load_beir_golden": "goldeval.golden.beir",
    "freeze": "goldeval.golden.versions",
    "demo_golden_path": "goldeval.golden.demo",
    "drop_unavailable": "goldeval.golden.demo",
}
__all__ += list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
