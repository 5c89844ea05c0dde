"""The demo's generated set: with a backend configured, questions generated from the demo corpus beside
the shipped hand-written ones, and the leakage gap between them; without one, how to enable it.

goldeval ships no generated questions: a "synthetic" set that no model wrote would show nothing true.
The backend comes from `--llm` or the `GOLDEVAL_SYNTH_BACKEND` environment variable (its key, if it
needs one, from its own variable, as always).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from goldeval.corpus.chunking import ChunkSpec
from goldeval.corpus.model import Corpus
from goldeval.golden.model import GoldenSet
from goldeval.synth.backends import parse_backend
from goldeval.synth.candidates import as_golden
from goldeval.synth.leakage import LeakageReport
from goldeval.synth.pipeline import DEFAULT_CHUNK, SynthConfig, SynthResult, synthesize
from goldeval.synth.sampling import MIN_CHARS

ENV_BACKEND = "GOLDEVAL_SYNTH_BACKEND"
DEMO_N = 20

ENABLE_HINT = (
    "no question generator configured, so the demo has no generated set to compare. To add one, set "
    f"{ENV_BACKEND} to a backend, e.g.\n"
    f"    export {ENV_BACKEND}=anthropic:MODEL        (with ANTHROPIC_API_KEY)\n"
    f"    export {ENV_BACKEND}=openai:MODEL           (with OPENAI_API_KEY)\n"
    f"    export {ENV_BACKEND}='openai:llama3.1?base_url=http://localhost:11434/v1'   (Ollama, no key)\n"
    f"    export {ENV_BACKEND}=transformers:/path/to/model-folder\n"
    "and run the demo again (or `goldeval synth --demo --llm SPEC`); `goldeval docs synthetic` explains it."
)


def configured_backend(explicit: str | None = None) -> str | None:
    """The backend spec to use: `explicit`, else `$GOLDEVAL_SYNTH_BACKEND`, else None."""
    return explicit or os.environ.get(ENV_BACKEND, "").strip() or None


def demo_candidates_path(workspace: Path) -> Path:
    return workspace / "synth" / "demo-candidates.jsonl"


@dataclass(frozen=True)
class DemoSynthetic:
    """The demo's generated set (not yet reviewed), its leakage beside the hand-written set, the file."""

    golden: GoldenSet
    leakage: LeakageReport
    path: Path
    result: SynthResult


def demo_synthetic(corpus: Corpus, hand: GoldenSet, *, workspace: Path, backend: str | None = None,
                   n: int = DEMO_N, min_chars: int = MIN_CHARS, progress: Callable[[str], None] | None = None) -> DemoSynthetic | None:
    """Generate (or reuse, from the reply cache) `n` questions from the demo corpus; None when no backend
    is configured (show `ENABLE_HINT` then). The questions are unreviewed candidates, labelled synthetic:
    evaluate them apart from the hand-written set, never pooled."""
    spec = configured_backend(backend)
    if spec is None:
        return None
    config = SynthConfig(parse_backend(spec), n=n, min_chars=min_chars)
    path = demo_candidates_path(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    passages = corpus.passages(ChunkSpec(*DEFAULT_CHUNK))
    result = synthesize(corpus, passages, hand, config, out=path, workspace=workspace, progress=progress)
    return DemoSynthetic(as_golden(result.records), result.report, path, result)
