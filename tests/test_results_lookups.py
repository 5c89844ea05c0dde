"""What the results JSON says so that no reader needs a rule of its own (issue 18, item 5): what each
retrieved result counted for, the headline k, and B - A between retrievers.

The marks are checked against the metric engine (precision@k counts exactly the `relevant` marks) and
against pytrec_eval on the rankings as the level rule sees them; the expected marks are read off by hand.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

from golden_factory import make_golden
from goldeval import evaluate
from goldeval.errors import InputError
from goldeval.metrics.definitions import Metric
from goldeval.scorecard import Scorecard

# q1 expects a.md (grade 2) and b.md (grade 1) and judged n.md not relevant
GRADES = {"a.md": 2, "b.md": 1, "n.md": 0}
RANKING = ["a.md#1", "a.md#2", "x.md#1", "n.md#1", "b.md#3", "b.md#1", "n.md#2"]
"""x.md is no document the golden set knows: `goldeval.ids` keeps `x.md#1` as its own id."""


def chunks(question: str, k: int) -> list[tuple[str, float]]:
    return [(pid, 1.0 - i / 10) for i, pid in enumerate(RANKING)][:k]


def marks(card: Scorecard, qid: str = "q1") -> list[tuple[str, int | None]]:
    data = card.to_dict()
    q = next(q for q in data["retrievers"][0]["questions"] if q["id"] == qid)
    return [(h["counted"], h.get("grade")) for h in q["top"]]


def test_each_hit_says_what_it_counted_for_at_doc_level() -> None:
    card = evaluate(chunks, make_golden([("q1", "where", GRADES)]), k=(1, 5, 10), depth=10)
    # the second chunk of a.md is a repeat, never counted twice, as precision counts it
    assert marks(card) == [("relevant", 2), ("repeat", None), ("unjudged", None), ("nonrelevant", None),
                           ("relevant", 1), ("repeat", None), ("repeat", None)]
    r = card.retrievers[0]
    for k in (1, 5, 10):
        relevant = sum(1 for counted, _ in marks(card)[:k] if counted == "relevant")
        assert r.metrics[Metric("precision", k)] == pytest.approx(relevant / k, abs=1e-12)
    # pytrec_eval on the documents in the order the level rule counts them (repeats count for nothing)
    ranked = {"a.md": 1.0, "x.md#1": 0.8, "n.md": 0.7, "b.md": 0.6}
    ref = pytrec_eval.RelevanceEvaluator({"q1": GRADES}, {"P"}).evaluate({"q1": ranked})["q1"]
    assert r.metrics[Metric("precision", 5)] == pytest.approx(ref["P_5"], abs=1e-12)


def test_each_hit_says_what_it_counted_for_at_chunk_level() -> None:
    # a.md#1 is expected as a chunk, b.md as a whole document (any one of its chunks, once)
    golden = make_golden([("q1", "where", {"a.md#1": 1, "b.md": 3, "n.md#1": 0})])
    card = evaluate(chunks, golden, k=(1, 5, 10), depth=10, level="chunk")
    assert marks(card) == [("relevant", 1), ("unjudged", None), ("unjudged", None), ("nonrelevant", None),
                           ("relevant", 3), ("repeat", None), ("unjudged", None)]  # n.md#2: not n.md#1


def test_the_results_json_carries_the_headline_k_and_b_minus_a() -> None:
    golden = make_golden([("q1", "where", GRADES), ("q2", "what", {"x.md": 1}), ("o", "off", {})])
    card = evaluate({"a": chunks, "b": lambda q, k: chunks(q, k)[1:]}, golden, k=(1, 3), headline="mrr", depth=10)
    data = card.to_dict()
    assert data["headline"][0] == "mrr" and data["headline_k"] == 3  # the first headline metric with a k
    a, b = data["retrievers"]
    diff = data["differences"]["a|b"]
    assert set(data["differences"]) == {"a|b", "b|a"}
    for name in ("hit", "recall", "precision", "ndcg"):
        assert diff["curves"][name] == [y - x for x, y in zip(a["curves"][name], b["curves"][name], strict=True)]
    # b drops a's first chunk: q1 still finds a.md first (a.md#2); q2 finds x.md at 2, not 3
    assert diff["metrics"]["mrr"] == pytest.approx(((1 + 1 / 2) - (1 + 1 / 3)) / 2, abs=1e-12)
    # every metric without a cut-off (bpref too: the set judges n.md not relevant)
    assert diff["metrics"] == {m: b["metrics"][m] - a["metrics"][m] for m in ("mrr", "map", "bpref")}
    assert data["differences"]["b|a"]["metrics"]["map"] == -diff["metrics"]["map"]


def _saved(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    card = evaluate(chunks, make_golden([("q1", "where", GRADES)]), k=(1, 5, 10), depth=10)
    path = tmp_path / "r.json"
    card.save(path)
    return path, json.loads(path.read_text())


def test_an_older_file_gets_its_marks_by_the_same_rule_and_an_edited_mark_is_refused(tmp_path: Path) -> None:
    path, data = _saved(tmp_path)
    old = copy.deepcopy(data)
    for h in old["retrievers"][0]["questions"][0]["top"]:
        del h["counted"]
        h.pop("grade", None)
    del old["headline_k"]
    path.write_text(json.dumps(old))
    assert Scorecard.load(path).to_dict()["retrievers"] == data["retrievers"]
    assert Scorecard.load(path).to_dict()["headline_k"] == 5
    data["retrievers"][0]["questions"][0]["top"][1]["counted"] = "relevant"  # a repeat passed off as an answer
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"questions\[0\]\.top\[1\]\.counted: is 'relevant' .* gives 'repeat'"):
        Scorecard.load(path)
    data["retrievers"][0]["questions"][0]["top"][1]["counted"] = "maybe"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"top\[1\]\.counted: must be one of relevant, repeat, nonrelevant"):
        Scorecard.load(path)


def test_the_known_documents_are_gathered_only_when_an_id_holding_a_chunk_mark_asks() -> None:
    from goldeval.ids import DocumentOf

    asked: list[int] = []
    document_of = DocumentOf({}, lambda: asked.append(1) or {"a.md"})  # a golden set's judged ids, made on demand
    assert [document_of(p) for p in ("a.md", "x.md", "b b")] == ["a.md", "x.md", "b b"] and not asked
    assert [document_of(p) for p in ("a.md#2", "x.md#1", "a.md#3")] == ["a.md", "x.md#1", "a.md"] and asked == [1]
