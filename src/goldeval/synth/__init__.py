"""Synthetic questions: generated from the corpus, measured for leakage, reviewed before use.

`goldeval synth` samples passages, asks a model (Anthropic, any OpenAI-compatible server, a local
transformers folder or your own function) for one question each, and writes unreviewed candidates with
provenance, leakage figures and possible other answers; `goldeval review` accepts, edits or rejects them in
the browser and writes only accepted ones into a golden set. docs/synthetic.md explains the workflow.

The scorecard's hook: `leakage_for_golden(golden, passages)` returns a `LeakageReport` (JSON-able with
`to_dict()`) of every answerable question by provenance kind, and `report.gap()` the synthetic-minus-hand
difference of each figure.
"""

from goldeval._lazy import exports
from goldeval.synth.leakage import (
    LeakageReport,
    QuestionLeakage,
    SetLeakage,
    leakage_for_golden,
    leakage_report,
)

__all__ = ["LeakageReport", "QuestionLeakage", "SetLeakage", "leakage_for_golden", "leakage_report"]

# Public too, imported on first use (their modules are heavier or optional).
_LAZY = {
    "SynthConfig": "goldeval.synth.pipeline",
    "plan": "goldeval.synth.pipeline",
    "synthesize": "goldeval.synth.pipeline",
    "parse_backend": "goldeval.synth.backends",
    "ReplyCache": "goldeval.synth.replies",
    "ReviewSession": "goldeval.synth.review",
    "leakage_lines": "goldeval.synth.summary",
}
__all__ += list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
