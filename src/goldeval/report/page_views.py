"""What the scorecard page shows that is a rule's answer rather than a stored number, prepared here so the
page only looks it up (issue 18: the page computes no rule of its own):

- `returned`: per retriever, the deepest k that still measures something (`goldeval.scorecard.depth`: past
  it every curve point is unmeasurable, shown with the terminal's word), the terminal's line saying how
  many results came back, and each miss's rank as the tables show it (`>100`, or `not in the 4 returned`
  past a list cut short, or `error`, as the terminal's miss lines say);
- `api`: per retriever, what each API model it called used and cost (`goldeval.retrievers.usage.api_records`:
  the records of `config.api`, a hybrid's parts' and `config.reranker.api`, as Python wrote them, dollars
  included), so the page lists them without walking a configuration of its own;
- `words`: each question's words and each snippet's words with their spans, so the page marks the
  question's words in a snippet (`goldeval.words`, the rule the pool and review pages use; spans in UTF-16
  code units, as JavaScript counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldeval.scorecard.model import Scorecard


def returned_view(card: Scorecard) -> dict[str, Any]:
    """`{"word": "n/a", "retrievers": {name: {"measurable_k", "line", "miss_rank": {qid: text}}}}`."""
    from goldeval.report.grid import UNMEASURED
    from goldeval.report.terminal import returned_line
    from goldeval.scorecard.depth import miss_rank

    out: dict[str, Any] = {}
    for r in card.retrievers:
        short = bool(r.returned and r.returned.cut_short)
        out[r.name] = {
            "measurable_k": r.returned.measurable_k if r.returned else None,
            "line": returned_line(r, r.returned) if r.returned and short else None,
            "miss_rank": {q.id: "error" if q.error else miss_rank(q.returned, card.depth, short)
                          for q in r.questions if not q.off_topic and q.rank is None},
        }
    return {"word": UNMEASURED, "retrievers": out}


def words_view(card: Scorecard) -> dict[str, Any]:
    """`{"questions": {qid: [stems]}, "snippets": {id: {"title": [[start, end, stem]], "text": [...]}}}`:
    each question's content stems (`goldeval.words.content_terms`) and each snippet's content words with
    their stems and UTF-16 spans (`goldeval.words.page_content_spans`), once each. The page marks a span
    whose stem is one of the question's: the same marks as `goldeval.words.page_highlights`."""
    from goldeval.words import content_terms, page_content_spans

    questions = {q.id: sorted(content_terms(q.question)) for r in card.retrievers for q in r.questions}
    snippets = {sid: {part: [[s, e, st] for s, e, st in page_content_spans(snip.get(part, ""))] for part in ("title", "text")}
                for sid, snip in card.snippets.items()}
    return {"questions": questions, "snippets": snippets}


def api_view(card: Scorecard) -> dict[str, Any]:
    """`{"retrievers": {name: [record, ...]}}`: each retriever's API usage records (requests, retries, tokens,
    tokens_estimated, seconds, model, dollars: None where the price table has no price; role; a part's spec
    and `same_as` where those are the requests of another retriever of the run), only for retrievers that called an API."""
    from goldeval.retrievers.usage import run_api_records

    return {"retrievers": run_api_records({r.name: r.config for r in card.retrievers})}
