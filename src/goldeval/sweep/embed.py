"""Stage 2: embed what the missing runs will search, before any search runs.

Embedding first, in shards laid out by `goldeval.sweep.stages.shard_texts`, makes the vectors the same
bytes whether one process or many workers compute them (the batches are the same), and lets two
searches that need the same model never embed the same text twice at once. The time each model takes
on each chunking's passages is recorded (`embedding-time/` in the sweep cache): it is that
configuration's embedding cost, summed over shards, so it does not depend on the number of workers.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from goldeval.corpus.model import Passage
from goldeval.sweep.cache import passages_texts
from goldeval.sweep.keys import model_key
from goldeval.sweep.plan import Plan
from goldeval.sweep.stages import EmbedReport, EmbedTask, embed_shard

Job = tuple[str, Sequence[Passage], str, str | None]
"""(model, passages, tag, chunking): `chunking` is set when the time is that configuration's cost."""


def embed_stage(plan: Plan, jobs: Sequence[Job]) -> None:
    """Embed the jobs' passages, and the questions once per model, through the shared embedding cache."""
    from goldeval.retrievers.encoders.registry import shared_encoder

    if not jobs:
        return
    shards = max(1, plan.executor.workers * 2)
    tasks: list[EmbedTask] = []
    for model, passages, tag, _ in jobs:
        encoder = shared_encoder(model, workspace=plan.workspace)
        for shard in _shards(encoder, passages_texts(passages), "passage", shards):
            tasks.append(EmbedTask(model, "passage", shard, plan.workspace_path, plan.executor.threads, tag))
    for model in dict.fromkeys(job[0] for job in jobs):
        encoder = shared_encoder(model, workspace=plan.workspace)
        for shard in _shards(encoder, list(plan.questions.values()), "query", shards):
            tasks.append(EmbedTask(model, "query", shard, plan.workspace_path, plan.executor.threads, f"{model}|queries"))
    if plan.progress:
        print(f"goldeval sweep: embedding {sum(len(t.texts) for t in tasks)} texts in {len(tasks)} shard(s) "
              f"({', '.join(dict.fromkeys(job[0] for job in jobs))})", file=sys.stderr)
    reports: list[EmbedReport] = plan.executor.map(embed_shard, [(t,) for t in tasks])
    plan.count("embeddings", "texts_embedded", sum(r.computed for r in reports))
    plan.count("embeddings", "shards", len(reports))
    for model, _, tag, chunking in jobs:
        if chunking is not None:
            _record_time(plan, model, chunking, [r for r in reports if r.tag == tag and r.kind == "passage"])


def _shards(encoder: object, texts: list[str], kind: str, shards: int) -> list[list[str]]:
    from goldeval.sweep.stages import shard_texts

    prefix = encoder.prefix(kind)  # type: ignore[attr-defined]
    return shard_texts(texts, prefix=prefix, batch_size=int(getattr(encoder, "batch_size", 32) or 32), shards=shards)


def _record_time(plan: Plan, model: str, chunking: str, reports: Sequence[EmbedReport]) -> None:
    """Record the passages' embedding time: exact when this sweep embedded them all, scaled when it
    embedded some (the rest were cached), left as it was when it embedded none."""
    texts = sum(r.texts for r in reports)
    computed = sum(r.computed for r in reports)
    if not computed:
        return
    seconds = sum(r.seconds for r in reports)
    plan.cache.put_embedding_time(plan.embedding_key(model_key(model, plan.workspace), chunking), {
        "seconds": seconds * texts / computed, "texts": texts, "computed": computed, "estimated": computed < texts,
        "measured_seconds": seconds,
    })
