"""The scorecard in the terminal: a retrievers x metrics table, and every miss on request.

Computes nothing: it formats what the Scorecard holds. The table is laid out for the console's
width (`report.grid`); sentences wrap at words (`report.layout`).
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from goldeval.metrics.definitions import Metric, default_metrics
from goldeval.report.grid import NO_SPREAD, MetricGrid, no_spread
from goldeval.report.layout import say
from goldeval.scorecard.depth import Returned, miss_place
from goldeval.scorecard.model import QuestionResult, RetrieverResult, Scorecard
from goldeval.stats.diagnosis import CAUSES
from goldeval.textsafe import safe_console


def table_metrics(card: Scorecard) -> list[Metric]:
    """The rows of the scorecard table (terminal and Markdown): the headline metrics first, then hit at
    every k, nDCG and recall at the largest k, precision@1, MAP, and any metric asked for by name."""
    top = max(card.k) if card.k else 10
    wanted = [*card.headline, *(Metric("hit", k) for k in card.k), Metric("mrr"), Metric("ndcg", top),
              Metric("recall", top), Metric("precision", 1), Metric("map")]
    defaults = set(default_metrics(tuple(card.k))) if card.k else set()
    asked = [m for m in card.metrics if m not in defaults]  # --metric extras, e.g. recall@100
    return [m for m in dict.fromkeys(wanted + asked) if m in card.metrics]


def render_table(card: Scorecard, console: Console) -> None:
    """Metrics as rows, retrievers as columns, intervals beside (or under) the values; best in green."""
    if not card.retrievers:
        console.print("goldeval: no retrievers were evaluated", style="bold red")
        return
    first, *others = title_lines(card)
    head, paren, rest = first.rpartition(" (")  # the settings in parentheses go on a line of their own
    for part in ([head, paren.strip() + rest] if paren and len(first) > console.width else [first]):
        say(console, part, "bold")
    for line in others:
        say(console, line, "bold")
    console.print(MetricGrid([r.name for r in card.retrievers], card.retrievers, table_metrics(card)))
    for line in table_notes(card):
        say(console, line, "dim")
    if (beside := synthetic_title(card)) is not None:
        say(console, beside, "bold")
        console.print(MetricGrid([r.name for r in card.retrievers], card.retrievers, card.headline, synthetic=True,
                                 mark_best=False))


def headline_line(card: Scorecard) -> str | None:
    """What the headline is made of, when it is not every answerable question (or is all synthetic)."""
    if not card.retrievers:
        return None
    r = card.retrievers[0]
    sources = r.headline_sources()  # counted without a record per question (issue 23)
    kinds = list(sources)
    if not r.synthetic.n and kinds != ["synthetic"]:
        return None
    counts = ", ".join(f"{sources[k]} {KIND_WORDS.get(k, k)}" for k in kinds)
    if r.synthetic.n:
        return (f"Headline and verdicts: the {r.n_headline} non-synthetic answerable questions ({counts}); the "
                f"{r.synthetic.n} synthetic ones are shown beside them, never pooled in (they flatter search).")
    return (f"Headline: {r.n_headline} synthetic questions, the set has no other: synthetic questions flatter "
            "search, so read these numbers as an upper bound.")


KIND_WORDS = {"hand": "hand-written", "synthetic": "synthetic", "log": "from a search log", "incident": "from incidents"}
"""How each provenance kind is named in the scorecard's sentences."""


def synthetic_title(card: Scorecard) -> str | None:
    """The title of the table of synthetic questions beside the headline; None when there are none beside."""
    n = max((r.synthetic.n for r in card.retrievers), default=0)
    return f"Beside the headline: the {n} synthetic questions (never pooled in)" if n else None


def title_lines(card: Scorecard) -> list[str]:
    """What was evaluated, then how: the level, the depth and how long documents were ranked."""
    golden = Path(card.golden.get("path") or "golden set").name
    corpus = card.corpus.get("name") or card.corpus.get("path") or ""
    where = f" on {corpus}" if corpus else ""
    short = [(r, r.returned) for r in card.retrievers if r.returned and r.returned.cut_short]
    got = f"{card.depth} asked per question" if short else f"top {card.depth} retrieved"
    lines = [f"goldeval scorecard: {golden}{where} ({card.level} level, {got})"]
    lines += [returned_line(r, returned) for r, returned in short]
    for r in card.retrievers:
        scoring = r.config.get("long_documents")
        if isinstance(scoring, dict) and scoring.get("summary"):
            lines.append(f"{r.name}: {scoring['summary']}")
    return lines


def returned_line(r: RetrieverResult, got: Returned) -> str:
    """`lc: returned at most 4 results per question (min 4, median 4) of the 100 asked; hit@5, ...: n/a, ...`."""
    median = f"{got.median:g}"
    gone = ", ".join(str(m) for m in r.unmeasurable)
    past = f"; {gone}: n/a, past what it returned" if gone else ""
    return (f"{r.name}: returned at most {got.max} results per question (min {got.min}, median {median}) of the "
            f"{got.asked} asked{past}; raise the retriever's own k")


def table_notes(card: Scorecard) -> list[str]:
    """The lines under the table: errors, off-topic questions, what the intervals are or why none."""
    notes = [_errors_line(r) for r in card.retrievers if r.n_errors]
    if (line := headline_line(card)) is not None:
        notes.append(line)
    first = card.retrievers[0]
    if first.n_off_topic:
        notes.append(f"{first.n_off_topic} off-topic question(s) (no expected answer) are counted apart, "
                     "never averaged in as zeros.")
    stats = card.statistics
    small = [r for r in card.retrievers if r.n_headline and not r.intervals]
    if stats is not None and stats.min_questions and small:
        n = small[0].n_headline
        notes.append(f"No intervals: {n} headline question(s) are too few for one (goldeval gives intervals "
                     f"from {stats.min_questions}); read the values as counts of questions, not estimates.")
    if any(r.intervals for r in card.retrievers):
        notes.append("(low–high): 95% bootstrap interval over the headline questions; best value in green.")
    notes.extend(api_lines(card))
    from goldeval.report.judged import judged_lines

    notes.extend(judged_lines(card))  # judged@k, metric ranges, label fixes since the last version
    if any(no_spread(ci) for r in card.retrievers for ci in r.intervals.values()):
        notes.append(f"{NO_SPREAD}: every question scored the same, so resampling them gives no interval.")
    return notes


def api_lines(card: Scorecard) -> list[str]:
    """What each API model of the run used and cost, as its config records it (`retrievers.usage.run_api_records`:
    a dense retriever's, a hybrid's parts', a reranker's; a part's requests listed under another retriever too
    say so)."""
    from goldeval.retrievers.usage import run_api_records, shared_note

    lines = []
    for name, records in run_api_records({r.name: r.config for r in card.retrievers}).items():
        for used in records:
            retried = f" ({used.get('retries')} retried)" if used.get("retries") else ""
            guessed = f" (+{used.get('tokens_estimated'):,} estimated)" if used.get("tokens_estimated") else ""
            cost = "no price in the table" if used.get("dollars") is None else f"${used['dollars']:,.4f} at list price"
            lines.append(f"{name}: {used.get('model')}: {used.get('requests', 0):,} API request(s){retried}, "
                         f"{used.get('tokens', 0):,} tokens{guessed}, {used.get('seconds', 0):g} s, {cost}{shared_note(used)}")
    return lines


def _errors_line(r: RetrieverResult) -> str:
    ids = ", ".join(r.error_ids)
    return f"{r.name}: {r.n_errors} question(s) failed and score 0: {ids} (see the warnings above)"


def miss_line(q: QuestionResult, k: int, depth: int, cut_short: bool = False) -> str:
    """`miss h05 (rank 14): question  expected a, b  got x (0.721)`; `rank >depth` when never retrieved,
    `not in the N returned` past a retriever's list cut short (`goldeval.scorecard.depth`)."""
    where = "error" if q.error else f"rank {q.rank}" if q.rank is not None else miss_place(q.returned, depth, cut_short)
    expected = ", ".join(q.expected) or "(nothing)"
    got = f"{q.top[0].id} ({q.top[0].score:.3g})" if q.top else "(nothing)"
    return f"miss {q.id} ({where}): {q.question}  expected {expected}  got {got}"


def misses(r: RetrieverResult, k: int) -> list[QuestionResult]:
    """Answerable questions with no expected answer in the top k."""
    return [q for q in r.answerable if not q.hit_at(k)]


_RESTATES_RANK = ("retrieved_deep", "cut_short", "never_retrieved")
"""Causes whose evidence only repeats the rank the miss line already shows."""


def render_misses(card: Scorecard, console: Console) -> None:
    """Every miss at the headline k, grouped by cause (the advice for each cause is in `render_stats`)."""
    k = card.headline_k
    say(console, f"\nMisses at k={k} (the headline cut-off), grouped by cause", "bold")
    for r in card.retrievers:
        missed = misses(r, k)
        console.print(f"\n[bold]{escape(r.name)}[/bold]: {len(missed)} miss(es) at k={k} of "
                      f"{len(r.answerable)} answerable", highlight=False)
        by_cause: dict[str, list[QuestionResult]] = {}
        for q in missed:
            by_cause.setdefault(q.diagnosis["cause"] if q.diagnosis else "", []).append(q)
        for cause in [*CAUSES, ""]:
            group = by_cause.get(cause, [])
            if not group:
                continue
            if cause:  # the advice is given once per cause, under "Why the misses missed"
                say(console, f"{CAUSES[cause][0]} ({len(group)})", "yellow", indent=2)
            evidence = {q.diagnosis["evidence"] for q in group if q.diagnosis and not q.error}
            shared = len(group) > 1 and len(evidence) == 1 and cause not in _RESTATES_RANK
            if shared:  # one hub behind every miss of the group: say it once
                say(console, evidence.pop(), "dim", indent=4)
            for q in group:
                say(console, miss_line(q, k, card.depth, bool(r.returned and r.returned.cut_short)), indent=4)
                if q.error:
                    say(console, f"error: {q.error}", "dim", indent=8)
                elif q.diagnosis and cause not in _RESTATES_RANK and not shared:
                    say(console, q.diagnosis["evidence"], "dim", indent=8)
    _render_missed_by_all(card, console)


def _render_missed_by_all(card: Scorecard, console: Console) -> None:
    ids = card.statistics.missed_by_all if card.statistics else []
    if not ids:
        return
    say(console, f"\nMissed by every retriever at k={card.headline_k} ({len(ids)})", "bold")
    first = card.retrievers[0]
    for qid in ids:
        q = next(q for q in first.answerable if q.id == qid)
        say(console, f"{q.id}: {q.question}  expected {', '.join(q.expected)}", indent=2, hang=4)


def headline_k(card: Scorecard) -> int:
    """The cut-off misses are counted at (`Scorecard.headline_k`: one rule for every view)."""
    return card.headline_k


def render(card: Scorecard, *, show_misses: bool = False, console: Console | None = None,
           details: bool = False) -> None:
    from goldeval.report.sections import render_stats

    console = console or safe_console()  # escapes in questions and ids never reach the terminal
    render_table(card, console)
    render_stats(card, console, details=details)
    if show_misses:
        render_misses(card, console)
