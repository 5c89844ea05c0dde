"""`goldeval synth` end to end, as functions the CLI and the demo share: plan, generate, annotate.

1. `plan`: sample passages, render prompts, estimate tokens and cost. No call, no key, no SDK import:
   `--dry-run` stops here.
2. `generate`: the replies (cache first), cleaned into unreviewed candidates with provenance.
3. `annotate`: each candidate's leakage and other possible answers, and the leakage report of the whole
   set beside the hand-written questions of the golden set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goldeval.corpus.model import Corpus, Passage
from goldeval.fingerprint import text_fingerprint
from goldeval.golden.model import GoldenSet
from goldeval.golden.versions import lock_path
from goldeval.ids import doc_part
from goldeval.remote.retry import RetryPolicy
from goldeval.store.transaction import transaction
from goldeval.store.workspace import Workspace
from goldeval.synth.backends import BackendSpec, Settings
from goldeval.synth.candidates import (
    Record,
    candidates_text,
    keep_reviews,
    merge,
    new_candidate,
    read_candidates,
    status,
)
from goldeval.synth.generate import Estimate, Job, Outcome, estimate, make_jobs, run_jobs
from goldeval.synth.leakage import LeakageReport, Target, golden_targets, leakage_report
from goldeval.synth.others import other_answers
from goldeval.synth.prompt import PromptTemplate, clean_reply, default_prompt
from goldeval.synth.replies import ReplyCache
from goldeval.synth.sampling import MIN_CHARS, Sample, sample_passages

DEFAULT_CHUNK = (1500, 200)
"""Passages are sections of at most 1500 characters (heading-aware, 200 overlap): one section, one question."""


@dataclass(frozen=True)
class SynthConfig:
    """Everything a synth run depends on besides the corpus and the golden set."""

    spec: BackendSpec
    settings: Settings = field(default_factory=Settings)
    template: PromptTemplate = field(default_factory=default_prompt)
    n: int = 30
    seed: int = 0
    min_chars: int = MIN_CHARS
    uncovered: bool = False
    """Only documents no hand-written question of the golden set lists as relevant."""
    retrievers: tuple[str, ...] = ("bm25",)
    others_top: int = 5
    concurrency: int = 4
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    fresh: bool = False
    price: tuple[float, float] | None = None
    depth: int = 100


@dataclass(frozen=True)
class Plan:
    sample: Sample
    jobs: list[Job]
    estimate: Estimate
    covered_docs: int


def covered_docs(golden: GoldenSet | None) -> set[str]:
    """Documents a hand-written question of `golden` lists as relevant (a chunk id covers its document)."""
    docs: set[str] = set()
    if golden is None:
        return docs
    for q in golden.answerable:
        if q.source == "hand":
            for expected in golden.relevant(q.id):
                docs.add(expected)
                docs.add(doc_part(expected))
    return docs


def plan(corpus: Corpus, passages: Sequence[Passage], golden: GoldenSet | None, config: SynthConfig,
         cache: ReplyCache) -> Plan:
    """The passages to ask about and what asking will cost; nothing is called."""
    covered = covered_docs(golden) if config.uncovered else set()
    sample = sample_passages(passages, config.n, seed=config.seed, min_chars=config.min_chars,
                             exclude_docs=covered, corpus=corpus)
    jobs = make_jobs(sample.passages, config.template, config.spec, config.settings)
    cost = estimate(jobs, cache, config.spec, config.settings, price=config.price, fresh=config.fresh)
    return Plan(sample, jobs, cost, len(covered & set(corpus.documents)))


def generate(the_plan: Plan, config: SynthConfig, cache: ReplyCache,
             progress: Callable[[str], None] | None = None) -> tuple[list[Record], Outcome]:
    """The plan's candidates (one per reply that holds a question) and the outcome of the calls."""
    outcome = run_jobs(the_plan.jobs, lambda: config.spec.build(config.settings), cache,
                       concurrency=config.concurrency, policy=config.policy, fresh=config.fresh,
                       seed=config.seed, progress=progress)
    records: list[Record] = []
    for job in the_plan.jobs:
        reply = outcome.replies.get(job.key)
        if reply is None:
            continue
        question = clean_reply(reply.reply)
        if not question:
            outcome.failures[job.passage.id] = "the reply held no question"
            continue
        records.append(new_candidate(
            qid=candidate_id(job.key), question=question, passage=job.passage, generator=config.spec.kind,
            model=config.spec.model, prompt_hash=config.template.hash,
            temperature=config.settings.temperature, created=reply.created,
        ))
        if "base_url" in config.spec.options:
            records[-1]["provenance"]["endpoint"] = config.spec.options["base_url"]
    return records, outcome


def candidate_id(key: str) -> str:
    """A stable id: the same passage, prompt and model give the same id on every run (so review state
    survives a re-run)."""
    return "syn-" + text_fingerprint(key, length=10)


def annotate(records: list[Record], passages: Sequence[Passage], golden: GoldenSet | None, config: SynthConfig,
             workspace: Path) -> LeakageReport:
    """Fill in `_leakage` and `_others` on every candidate not rejected; return the set's leakage report
    (generated questions beside the golden set's own, by provenance kind)."""
    live = [r for r in records if status(r) != "rejected"]
    ids = {p.id for p in passages}
    targets = [Target(r["id"], r["question"], "synthetic", _passages_of(r, ids, passages)) for r in live]
    if golden is not None:
        mine = {r["id"] for r in records}
        extra, _ = golden_targets(golden, passages)
        targets.extend(t for t in extra if t.question_id not in mine)
    report = leakage_report(targets, passages, depth=config.depth)
    by_id = {q.question_id: q for q in report.questions}
    others = other_answers({r["id"]: (r["question"], r["expected"]) for r in live}, passages,
                           config.retrievers, top=config.others_top, workspace=workspace)
    for r in live:
        if r["id"] in by_id:
            r["_leakage"] = _leak_fields(by_id[r["id"]].to_dict())
        r["_others"] = others.get(r["id"], [])
    return report


def _passages_of(record: Record, ids: set[str], passages: Sequence[Passage]) -> tuple[str, ...]:
    source = record["provenance"].get("source_passage", "")
    if source in ids:
        return (source,)
    docs = set(record.get("expected", []))
    return tuple(p.id for p in passages if p.doc_id in docs)


def _leak_fields(data: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in data.items() if k not in ("question_id", "kind", "passages")}


@dataclass
class SynthResult:
    """What a synth run did: its plan, every candidate now in the output file, how many are new."""

    plan: Plan
    records: list[Record]
    new: int
    outcome: Outcome
    report: LeakageReport


def synthesize(corpus: Corpus, passages: Sequence[Passage], golden: GoldenSet | None, config: SynthConfig, *,
               out: Path, workspace: Path, the_plan: Plan | None = None,
               progress: Callable[[str], None] | None = None) -> SynthResult:
    """Plan (unless given), generate, merge into `out` (earlier candidates keep their review state),
    annotate, and write `out` atomically."""
    cache = ReplyCache(Workspace(workspace))
    the_plan = the_plan or plan(corpus, passages, golden, config, cache)
    fresh, outcome = generate(the_plan, config, cache, progress)
    existing = read_candidates(out) if out.exists() else []
    records = merge(existing, fresh)
    report = annotate(records, passages, golden, config, workspace)
    with transaction(lock_path(out)) as tx:  # a review page may have written the file meanwhile
        records = keep_reviews(records, read_candidates(out) if out.exists() else [])
        tx.write(out, candidates_text(records))
    return SynthResult(the_plan, records, len(records) - len(existing), outcome, report)
