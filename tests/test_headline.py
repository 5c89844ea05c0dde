"""Which questions make the headline (issue 18): hand-written, log and incident ones; synthetic ones beside.

A golden set shaped like the one the issue reproduced (25 hand-written, 8 synthetic and 1 incident question,
plus 2 off-topic ones) goes through every consumer of the rule: the means, the paired verdicts, the gate,
the terminal, the Markdown and the results JSON. Expected numbers are counted by hand from what each search
function returns, and checked against pytrec_eval on the headline questions.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from rich.console import Console

from golden_factory import make_golden
from goldeval import compare, evaluate
from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.golden.model import headline_split
from goldeval.metrics.definitions import Metric
from goldeval.report.markdown import scorecard_markdown
from goldeval.report.terminal import render_table
from goldeval.scorecard import Scorecard
from goldeval.stats.compare import compare_scorecard
from goldeval.testing import RegressionError, assert_no_regression

HIT5, MRR = Metric("hit", 5), Metric("mrr")
HAND = [f"h{i:02d}" for i in range(25)]
SYNTHETIC = [f"s{i}" for i in range(8)]
INCIDENT = ["i0"]
OFF = ["o0", "o1"]


def golden_rows() -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = [(q, f"question {q}", {f"{q}.md": 1}, (), "hand") for q in HAND]
    rows += [(q, f"question {q}", {f"{q}.md": 1}, (), "synthetic") for q in SYNTHETIC]
    rows += [(q, f"question {q}", {f"{q}.md": 1}, (), "incident") for q in INCIDENT]
    rows += [(q, f"question {q}", {}, (), "hand") for q in OFF]
    return rows


def finder(found: set[str]) -> Callable[[str, int], list[tuple[str, float]]]:
    """A search function that ranks a question's answer first when its id is in `found`, else misses it
    (10 results either way, so every cut-off up to 10 is measured)."""
    def search(question: str, k: int) -> list[tuple[str, float]]:
        qid = question.split()[-1]
        fillers = [(f"filler{i}.md", 0.5 - i / 100) for i in range(10)]
        return ([(f"{qid}.md", 1.0)] + fillers[:9]) if qid in found else fillers
    return search


BASE = set(HAND[:20]) | set(SYNTHETIC) | set(INCIDENT)        # headline 21 of 26, synthetic 8 of 8
CAND = set(HAND[:15]) | set(SYNTHETIC[:4]) | set(INCIDENT)    # headline 16 of 26, synthetic 4 of 8
SAME_BUT_SYNTHETIC = set(HAND[:20]) | set(INCIDENT)          # the base's headline, every synthetic one missed


def card_of(**finders: set[str]) -> Scorecard:
    return evaluate({name: finder(found) for name, found in finders.items()}, make_golden(golden_rows()), k=(1, 5))


def test_the_rule_keeps_hand_log_and_incident_questions_and_sets_synthetic_ones_beside() -> None:
    golden = make_golden(golden_rows() + [("l0", "question l0", {"l0.md": 1}, (), "log")])
    headline, beside = headline_split(golden)
    assert [q.id for q in headline] == HAND + INCIDENT + ["l0"]  # file order kept, off-topic ones in neither
    assert [q.id for q in beside] == SYNTHETIC
    # a set of synthetic questions only has nothing else to report: they are the headline, nothing beside
    only = make_golden([(q, f"question {q}", {f"{q}.md": 1}, (), "synthetic") for q in SYNTHETIC] + [("o0", "x", {})])
    assert [q.id for q in headline_split(only)[0]] == SYNTHETIC and headline_split(only)[1] == []


def test_the_headline_is_the_26_non_synthetic_questions_and_synthetic_ones_are_beside() -> None:
    card = card_of(base=BASE, cand=CAND)
    base, cand = card.retrievers
    assert [q.id for q in base.headline_questions] == HAND + INCIDENT and len(base.answerable) == 34
    assert base.metrics[HIT5] == 21 / 26 and cand.metrics[HIT5] == 16 / 26  # not 29/34 and 20/34, pooled
    assert base.synthetic.n == 8 and base.synthetic.metrics[HIT5] == 1.0 and cand.synthetic.metrics[HIT5] == 0.5
    assert base.curves["hit"][4] == 21 / 26 and cand.synthetic.curves["hit"][0] == 0.5
    # pytrec_eval on the headline questions only gives the same means
    qrels = {q: {f"{q}.md": 1} for q in HAND + INCIDENT}
    for r, found in ((base, BASE), (cand, CAND)):
        run = {q: dict(finder(found)(f"question {q}", 10)) for q in qrels}
        ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "success"}).evaluate(run)
        assert r.metrics[MRR] == pytest.approx(sum(v["recip_rank"] for v in ref.values()) / 26, abs=1e-12)
        assert r.metrics[HIT5] == pytest.approx(sum(v["success_5"] for v in ref.values()) / 26, abs=1e-12)


def test_every_verdict_counts_the_headline_questions_only() -> None:
    card = compare(card_of(base=BASE, cand=CAND), resamples=500)
    assert card.statistics is not None and card.statistics.comparison is not None
    comparison = card.statistics.comparison
    assert (comparison.n_questions, comparison.n_beside) == (26, 8)
    r = comparison.get(HIT5, "cand", "base")
    assert (r.wins, r.losses, r.ties, r.n) == (0, 5, 21, 26)  # h15..h19; the 4 synthetic losses are beside
    assert "finds 5 that cand misses and misses 0 that it finds, of 26 questions (19.2 points" in r.verdict
    assert r.p == pytest.approx(2 / 2**5)  # exact McNemar on 5 discordant questions
    assert compare_scorecard(card).get(HIT5, "cand", "base").n == 26
    assert set(card.retriever("base").intervals) == set(card.metrics)  # 26 headline questions: intervals


def test_the_gate_judges_the_headline_not_the_synthetic_questions(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    baseline = card_of(search=BASE)
    # worse on all 8 synthetic questions only: pooled, exact McNemar gives p = 2/256 and the gate would fail
    same = card_of(search=SAME_BUT_SYNTHETIC)
    report = assert_no_regression(same, baseline, metric="hit@5", resamples=500)
    assert report is not None and report.gate is not None and report.gate.passed
    assert [(c.result.losses, c.result.n, c.worse) for c in report.gate.checks] == [(0, 26, False)]
    # worse on 10 headline questions, better on none: the gate fails on them
    worse = card_of(search=set(HAND[:10]) | set(SYNTHETIC) | set(INCIDENT))
    assert worse.retrievers[0].metrics[HIT5] == 11 / 26
    with pytest.raises(RegressionError, match="of 26 questions"):
        assert_no_regression(worse, baseline, metric="hit@5", resamples=500)
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    baseline.save(old)
    same.save(new)
    assert main(["compare", str(old), str(new), "--fail-if-worse", "hit@5", "--resamples", "500"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "26 headline questions (8 synthetic beside, in no verdict)" in printed


def test_terminal_and_markdown_show_the_headline_with_synthetic_beside_even_when_lower() -> None:
    card = compare(card_of(base=BASE, cand=CAND), resamples=500)
    console = Console(record=True, width=160)
    render_table(card, console)
    text = console.export_text()
    assert ("Headline and verdicts: the 26 non-synthetic answerable questions (25 hand-written, 1 from "
            "incidents); the 8 synthetic ones are shown beside them") in " ".join(text.split())
    beside = text.split("Beside the headline: the 8 synthetic questions (never pooled in)")[1]
    rows = [line.replace("│", " ").replace("┃", " ").split() for line in beside.splitlines()]
    lines = {row[0]: row[1:] for row in rows if row and row[0][:1].isalpha()}
    assert lines["questions"] == ["8", "8"] and lines["hit@5"] == ["1.000", "0.500"]  # cand's lower: shown too
    md = scorecard_markdown(card)
    assert "| `base` | 26 + 2 off-topic | 0.808" in md  # 21/26
    assert "**Beside the headline: the 8 synthetic questions (never pooled in)**" in md
    assert "| `cand` | 8 | 0.500 |" in md
    assert "**Comparison** over 26 headline questions (8 synthetic beside, in no verdict)." in md


def test_the_results_json_says_what_the_headline_is_and_what_is_beside(tmp_path: Path) -> None:
    card = compare(card_of(base=BASE, cand=CAND), resamples=500)
    data = card.to_dict()
    base = data["retrievers"][0]
    assert (base["n_answerable"], base["n_headline"], base["headline_sources"]) == (34, 26, ["hand", "incident"])
    assert base["synthetic"]["n"] == 8 and base["synthetic"]["metrics"]["hit@5"] == 1.0
    assert [q["id"] for q in base["questions"] if q["headline"]] == HAND + INCIDENT
    assert data["headline_k"] == 5 and data["statistics"]["comparison"]["n_beside"] == 8
    path = tmp_path / "r.json"
    card.save(path)
    back = Scorecard.load(path)
    assert back.retrievers[0].metrics == card.retrievers[0].metrics and back.retrievers[0].synthetic.n == 8
    assert back.to_dict()["retrievers"] == data["retrievers"]


def test_a_file_written_before_the_rule_loads_with_the_headline_made_again(tmp_path: Path) -> None:
    data = card_of(base=BASE, cand=CAND).to_dict()
    old = copy.deepcopy(data)
    for r in old["retrievers"]:
        del r["n_headline"], r["headline_sources"], r["synthetic"]
        answerable = [q for q in r["questions"] if not q["off_topic"]]
        r["metrics"] = {m: sum(q["metrics"][m] for q in answerable) / len(answerable) for m in r["metrics"]}
        for q in r["questions"]:
            del q["headline"]
            for h in q["top"]:
                del h["counted"]
                h.pop("grade", None)
    del old["headline_k"], old["differences"]
    assert old["retrievers"][0]["metrics"]["hit@5"] == pytest.approx(29 / 34)  # what such a file said
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    card = Scorecard.load(path)
    assert card.retrievers[0].metrics[HIT5] == 21 / 26 and card.retrievers[0].synthetic.metrics[HIT5] == 1.0
    assert any("kept out of the headline" in note and "re-run" in note for note in card.notes)
    assert card.to_dict()["retrievers"][0]["questions"] == data["retrievers"][0]["questions"]  # marks filled
    # the pooled mean is still checked: an edited one is refused
    old["retrievers"][0]["metrics"]["hit@5"] = 21 / 26
    path.write_text(json.dumps(old))
    with pytest.raises(InputError, match=r"retrievers\[0\]\.metrics\.hit@5: is 0\.807692 but the mean of its 34"):
        Scorecard.load(path)


def test_files_that_disagree_on_which_questions_are_synthetic_are_not_compared() -> None:
    from goldeval.stats.compare import compare_scorecards

    baseline = card_of(search=BASE)
    moved = make_golden([(r[0], r[1], r[2], r[3], "synthetic" if r[0] == "h03" else r[4]) for r in golden_rows()])
    relabelled = evaluate({"search": finder(BASE)}, moved, k=(1, 5))
    assert relabelled.identity.golden_fingerprint == baseline.identity.golden_fingerprint  # provenance is not in it
    with pytest.raises(InputError, match=r"disagree on which questions are synthetic \(h03\)"):
        compare_scorecards([baseline, relabelled])


def test_a_generated_set_joined_to_the_hand_written_one_is_scored_beside_it() -> None:
    # what `goldeval demo` does with a generator configured: one scorecard, the hand-written headline
    hand = make_golden([r for r in golden_rows() if r[4] != "synthetic"])
    generated = make_golden([r for r in golden_rows() if r[4] == "synthetic"])
    joined = hand.joined(generated)
    assert [q.id for q in joined] == [q.id for q in hand] + SYNTHETIC and len(joined.qrels) == 34
    r = evaluate({"search": finder(BASE)}, joined, k=(1, 5)).retrievers[0]
    assert r.metrics[HIT5] == 21 / 26 and (r.synthetic.n, r.synthetic.metrics[HIT5]) == (8, 1.0)
    with pytest.raises(ValueError, match="question ids in both sets: h00"):
        hand.joined(make_golden([("h00", "again", {"x.md": 1})]))
