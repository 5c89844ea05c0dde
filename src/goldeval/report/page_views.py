"""What the scorecard page shows that is a rule's answer rather than a stored number, prepared here so the
page only looks it up (issue 18: the page computes no rule of its own):

- `returned`: per retriever, the deepest k that still measures something (`goldeval.scorecard.depth`: past
  it every curve point is unmeasurable, shown with the terminal's word), the terminal's line saying how
  many results came back, and each miss's rank as the tables show it (`>100`, or `not in the 4 returned`
  past a list cut short, or `error`, as the terminal's miss lines say);
- `highlights`: for each question, the spans of the question's words in the title and text of every
  snippet the page can show for it (`goldeval.words.page_highlights`, the rule the pool and review pages
  use; in UTF-16 code units, as JavaScript counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldeval.scorecard.model import QuestionResult, Scorecard


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


def highlights_view(card: Scorecard) -> dict[str, dict[str, dict[str, list[list[int]]]]]:
    """Question id -> snippet id -> {"title": spans, "text": spans}, for the snippets of every result kept
    for it (any retriever) and of its expected answers; spans are [start, end) pairs."""
    from goldeval.words import page_highlights

    snippets = card.snippets
    out: dict[str, dict[str, dict[str, list[list[int]]]]] = {}
    for r in card.retrievers:
        for q in r.questions:
            marks = out.setdefault(q.id, {})
            for sid in _snippet_ids(q, snippets):
                if sid in marks:
                    continue
                snip = snippets[sid]
                marks[sid] = {part: [list(span) for span in page_highlights(q.question, snip.get(part, ""))]
                              for part in ("title", "text")}
    return {qid: marks for qid, marks in out.items() if marks}


def _snippet_ids(q: QuestionResult, snippets: dict[str, dict[str, str]]) -> list[str]:
    ids = [i for h in q.top for i in (h.id, h.doc) if i] + list(q.expected)
    return [i for i in dict.fromkeys(ids) if i in snippets]
