"""Stage 2: embed what the missing runs will search, before any search runs.

Every text a model will need in this stage (the passages of each chunking, the questions) goes into one
pool per model and prefix, each text once, sorted and cut into shards by
`goldeval.sweep.stages.shard_texts`. A text's vector depends on the batch it is padded in, so this is
what makes the vectors the same bytes whether one process or many workers compute them: every text is
embedded exactly once, in the same batch, whatever runs first (two chunkings share the texts of short
documents, which would otherwise be embedded by whichever shard got there first).

The stage reports how far it is (`goldeval.progress`: a bar on a terminal, a line every 15 s with an
estimate in a log; `--quiet` turns it off) as shards finish, so shards are cut to at most about
`SHARD_TEXTS` texts (issue 19: an 11-minute embedding stage used to print nothing).

The time a model takes on each chunking's passages is recorded (`embedding-time/` in the sweep cache)
as that configuration's embedding cost: each shard's time shared among its texts, summed over the
chunking's texts, so it does not depend on the number of workers or on the other chunkings.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from goldeval.corpus.model import Passage
from goldeval.progress import progress_bar
from goldeval.runstore import model_key
from goldeval.sweep.cache import passages_texts
from goldeval.sweep.plan import Plan
from goldeval.sweep.stages import EmbedReport, EmbedTask, embed_shard, shard_texts

SHARD_TEXTS = 1024
"""About the most texts in one shard: progress moves as shards finish (about a minute of a small model's
work on 2 cores), and a shard's cache entry stays small. The batches are the same whatever the count."""

Job = tuple[str, list[str], str | None]
"""(model, texts, chunking): `chunking` is set when the time is that configuration's embedding cost."""


def retrieval_texts(plan: Plan, model: str, passages: Sequence[Passage]) -> list[str]:
    """What `dense:MODEL` embeds for these passages: each passage's text, or the windows of a passage
    longer than the model's window (`goldeval.retrievers.long_documents`, the dense option `long`)."""
    from goldeval.retrievers.base import declared_options
    from goldeval.retrievers.encoders.registry import shared_encoder
    from goldeval.retrievers.long_documents import plan_windows

    spec = f"dense:{model}"
    long = declared_options(spec, plan.settings.options)[0].values.get("long") or "max"
    encoder = shared_encoder(model, **encoder_options(plan, model))
    return plan_windows([p.id for p in passages], passages_texts(passages), encoder, mode=str(long), label=spec).texts


def encoder_options(plan: Plan, model: str) -> dict[str, Any]:
    """What the sweep's settings give `dense:MODEL`'s encoder besides its name: the API options (base_url,
    dimensions, ...; None for a local model) and the precision (None: the model's own). The embed stage must
    embed with the encoder the run's retrievers build: the same server, the same variant."""
    from goldeval.retrievers.base import declared_options
    from goldeval.retrievers.dense import api_values, precision_value

    values = declared_options(f"dense:{model}", plan.settings.options)[0].values
    return {"api": api_values(values, model), "precision": precision_value(values, model)}


def embed_stage(plan: Plan, jobs: Sequence[Job]) -> None:
    """Embed the jobs' passages, and the questions once per model, through the shared embedding cache."""
    from goldeval.retrievers.encoders.registry import shared_encoder

    if not jobs:
        return
    tasks: list[EmbedTask] = []
    for model in dict.fromkeys(job[0] for job in jobs):
        options = encoder_options(plan, model)
        encoder = shared_encoder(model, **options)
        pools: dict[str, tuple[str, list[str]]] = {}  # prefix -> (kind, texts): a text with one prefix has one vector
        for kind, texts in [("passage", t) for m, t, _ in jobs if m == model] + [
                ("query", list(plan.questions.values()))]:
            prefix = encoder.prefix(kind)  # type: ignore[arg-type]
            pools.setdefault(prefix, (kind, []))[1].extend(texts)
        batch = int(getattr(encoder, "batch_size", 32) or 32)
        for prefix, (kind, texts) in pools.items():
            shards = max(1, plan.executor.workers * 2, math.ceil(len(set(texts)) / SHARD_TEXTS))
            for shard in shard_texts(texts, prefix=prefix, batch_size=batch, shards=shards):
                tasks.append(EmbedTask(model, kind, shard, plan.workspace_path, plan.executor.threads, model,
                                      options["api"], options["precision"]))
    models = ", ".join(dict.fromkeys(job[0] for job in jobs))
    if plan.progress:
        print(f"goldeval sweep: embedding {sum(len(t.texts) for t in tasks)} texts in {len(tasks)} shard(s) "
              f"({models})", file=sys.stderr)
    with progress_bar(f"sweep: embedding ({models})", total=sum(len(t.texts) for t in tasks), unit="texts",
                      enabled=plan.progress) as advance:
        reports: list[EmbedReport] = plan.executor.map(embed_shard, [(t,) for t in tasks],
                                                       done=lambda report: advance(report.texts))
    plan.count("embeddings", "texts_embedded", sum(r.computed for r in reports))
    plan.count("embeddings", "shards", len(reports))
    for model, texts, chunking in jobs:
        if chunking is not None:
            _record_time(plan, model, chunking, set(texts), tasks, reports)


def _record_time(plan: Plan, model: str, chunking: str, texts: set[str], tasks: Sequence[EmbedTask],
                 reports: Sequence[EmbedReport]) -> None:
    """Record how long `model` takes on `chunking`'s passages: exact when this stage embedded all of them
    (each shard's time shared equally among its texts), scaled when it embedded some, unchanged when none."""
    seconds, computed = 0.0, 0
    for task, report in zip(tasks, reports, strict=True):
        if task.model != model or task.kind != "passage" or not report.computed:
            continue
        mine = sum(1 for t in task.texts if t in texts)
        seconds += report.seconds * mine / len(task.texts)
        computed += round(report.computed * mine / len(task.texts))
    if not computed:
        return
    computed = min(computed, len(texts))
    plan.cache.put_embedding_time(plan.embedding_key(model_key(model, encoder_options(plan, model)["precision"]), chunking), {
        "seconds": seconds * len(texts) / computed, "texts": len(texts), "computed": computed,
        "estimated": computed < len(texts), "measured_seconds": seconds,
    })
