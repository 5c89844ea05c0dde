"""What the scorecard page receives prepared in Python (`goldeval.report.page_views`), without a browser:
the marks of the question's words are `goldeval.words.page_highlights`' (the pool and review pages' rule),
and a list cut short gives the terminal's word and miss places (`goldeval.scorecard.depth`)."""

from __future__ import annotations

from typing import Any

from browser_fixtures import overlap_search, scorecard_dict  # noqa: F401 - fixture
from goldeval.report.page import results_payload
from goldeval.scorecard import Scorecard
from goldeval.words import page_highlights


def marks_of(words: dict[str, Any], qid: str, sid: str, part: str) -> list[tuple[int, int]]:
    """What the page marks (data.js `highlightsOf`): the snippet's spans whose stem is the question's."""
    wanted = set(words["questions"][qid])
    return [(s, e) for s, e, stem in words["snippets"][sid][part] if stem in wanted]


def test_the_pages_marks_are_the_pool_pages_marks(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    card = dict(scorecard_dict)
    sid = next(iter(card["snippets"]))
    card["snippets"] = {**card["snippets"], sid: {**card["snippets"][sid], "text": "🙂 Stash your changes 🙂 stashing"}}
    words = results_payload([card])["files"][0]["data"]["views"]["words"]
    checked = 0
    for r in card["retrievers"]:
        for q in r["questions"]:
            for snip_id, snip in card["snippets"].items():
                for part in ("title", "text"):
                    assert marks_of(words, q["id"], snip_id, part) == page_highlights(q["question"], snip[part])
                    checked += 1
    assert checked and any(marks_of(words, q["id"], sid, "text") for q in card["retrievers"][0]["questions"])


def test_the_returned_view_says_what_the_terminal_says(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    from goldeval.report.grid import UNMEASURED
    from goldeval.report.terminal import returned_line
    from goldeval.scorecard.depth import miss_place

    data = results_payload([scorecard_dict])["files"][0]["data"]
    view = data["views"]["returned"]
    assert view["word"] == UNMEASURED == "n/a"
    loaded = Scorecard.from_dict(scorecard_dict)
    for r in loaded.retrievers:
        mine = view["retrievers"][r.name]
        short = bool(r.returned and r.returned.cut_short)
        assert mine["measurable_k"] == (r.returned.max if short else None)
        assert mine["line"] == (returned_line(r, r.returned) if short else None)
        for q in r.questions:
            if q.off_topic or q.rank is not None:
                assert q.id not in mine["miss_rank"]
            elif q.error:
                assert mine["miss_rank"][q.id] == "error"
            else:  # the terminal's miss line says "rank >20" or "not in the 4 returned": the page the same
                place = miss_place(q.returned, loaded.depth, short)
                assert place in (f"rank {mine['miss_rank'][q.id]}", mine["miss_rank"][q.id])
