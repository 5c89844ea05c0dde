"""The results JSON: schema 2 round trip, goldset 0.1 files read by compare, report and the page, and
edited, truncated or non-finite files refused with one line naming the place."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from golden_factory import make_golden
from goldeval import compare, evaluate
from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.metrics.definitions import Metric
from goldeval.scorecard import MetricComparison, Scorecard

V01 = Path(__file__).parent / "data" / "goldset-0.1-results.json"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"


def two_retrievers(question: str, k: int) -> list[tuple[str, float]]:
    return [("b.md", 0.9), ("a.md", 0.5), ("c.md", 0.1)][:k]


def card_with_everything() -> Scorecard:
    golden = make_golden([
        ("q1", "where is a", {"a.md": 2, "b.md": 0}, ("x",)),
        ("q2", "where is c", {"c.md": 1}, ("y",), "synthetic"),
        ("q3", "where is b", {"b.md": 1}),
        ("off", "nothing about this", {}),
    ], path="g.jsonl", version=2)
    card = evaluate({"one": two_retrievers, "two": lambda q, k: ["c.md", "a.md"][:k]}, golden, k=(1, 3), depth=5)
    return compare(card, resamples=200, seed=1)


# --- schemas 3 and 2 ------------------------------------------------------------------------------


def test_schema_3_round_trips_to_an_equal_scorecard(tmp_path: Path) -> None:
    card = card_with_everything()
    path = tmp_path / "r.json"
    card.save(path)
    data = json.loads(path.read_text())
    assert (data["schema"], data["tool"]) == (3, "goldeval")
    assert data["headline"] == ["hit@3", "mrr", "ndcg@3"]
    loaded = Scorecard.load(path)
    assert loaded.to_dict() == card.to_dict()
    for before, after in zip(card.retrievers, loaded.retrievers, strict=True):
        assert after.questions == before.questions and after.curves == before.curves
        assert after.metrics == before.metrics and after.intervals == before.intervals
    assert (loaded.identity, loaded.statistics, loaded.flips) == (card.identity, card.statistics, card.flips)
    assert (loaded.metrics, loaded.headline, loaded.k, loaded.depth) == (card.metrics, card.headline, [1, 3], 5)
    loaded.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == path.read_text()  # stable, byte for byte


def test_a_result_keeps_its_doc_and_grade_only_where_they_say_something(tmp_path: Path) -> None:
    golden = make_golden([("q1", "where", {"a.md": 2, "n.md": 0}), ("q2", "and here", {"b.md": 1})])
    chunks = {"q1": ["a.md#1", "n.md", "a.md#2", "x.md"], "q2": ["x.md#3", "b.md"]}
    card = evaluate(lambda q, k: chunks[{"where": "q1", "and here": "q2"}[q]][:k], golden, k=(1, 5), depth=5)
    card.save(tmp_path / "r.json")
    top = [q["top"] for q in json.loads((tmp_path / "r.json").read_text())["retrievers"][0]["questions"]]
    assert [[{k: v for k, v in h.items() if k != "score"} for h in hits] for hits in top] == [
        [{"id": "a.md#1", "doc": "a.md", "counted": "relevant", "grade": 2}, {"id": "n.md", "counted": "nonrelevant"},
         {"id": "a.md#2", "doc": "a.md", "counted": "repeat"}, {"id": "x.md", "counted": "unjudged"}],
        [{"id": "x.md#3", "counted": "unjudged"}, {"id": "b.md", "counted": "relevant", "grade": 1}],
    ]  # x.md#3: no corpus, and nothing names x.md, so the id is its own document (`goldeval.ids`)
    assert [[h.doc for h in q.top] for q in Scorecard.load(tmp_path / "r.json").retrievers[0].questions] == [
        ["a.md", "n.md", "a.md", "x.md"], ["x.md#3", "b.md"]]


def test_a_schema_2_file_reads_as_the_same_scorecard(tmp_path: Path) -> None:
    """goldeval 0.2 wrote every result's `doc` (its id too) and `grade` (null too): read as schema 3 is."""
    card = card_with_everything()
    card.save(tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    data["schema"] = 2
    for r in data["retrievers"]:
        for q in r["questions"]:
            q["top"] = [{"id": h["id"], "doc": h.get("doc", h["id"]), "score": h["score"], "counted": h["counted"],
                         "grade": h.get("grade")} for h in q["top"]]
    assert any(h["grade"] is None for r in data["retrievers"] for q in r["questions"] for h in q["top"])
    (tmp_path / "old.json").write_text(json.dumps(data))
    loaded = Scorecard.load(tmp_path / "old.json")
    assert loaded.to_dict() == card.to_dict()
    loaded.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == (tmp_path / "r.json").read_text()  # written as schema 3


def test_metrics_are_typed_in_memory_and_strings_only_in_json(tmp_path: Path) -> None:
    card = card_with_everything()
    card.save(tmp_path / "r.json")
    loaded = Scorecard.load(tmp_path / "r.json")
    r = loaded.retrievers[0]
    assert all(isinstance(m, Metric) for m in [*loaded.metrics, *loaded.headline, *r.metrics, *r.intervals])
    assert all(isinstance(m, Metric) for q in r.answerable for m in q.metrics)
    assert all(isinstance(v, tuple) and len(v) == 2 for v in r.intervals.values())
    assert loaded.statistics is not None and loaded.statistics.comparison is not None
    result = loaded.statistics.comparison.get(Metric("hit", 1), "two", "one")
    assert isinstance(result, MetricComparison) and isinstance(result.metric, Metric)
    assert json.loads((tmp_path / "r.json").read_text())["statistics"]["comparison"]["results"][0]["metric"] == "hit@1"


def test_writing_a_non_finite_number_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    card = card_with_everything()
    card.retrievers[0].metrics[Metric("mrr")] = math.nan
    with pytest.raises(ValueError, match="non-finite"):
        card.save(tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


# --- goldset 0.1 files -----------------------------------------------------------------------------


def test_a_goldset_0_1_file_loads_with_its_statistics_and_a_note() -> None:
    card = Scorecard.load(V01)
    assert [r.name for r in card.retrievers] == ["bm25", "bm25?stem=none"]
    assert any("goldset 0.1.0" in note and "schema 1" in note for note in card.notes)
    assert card.identity.golden_fingerprint == json.loads(V01.read_text())["golden"]["fingerprint"]
    assert card.statistics is not None and card.statistics.comparison is not None
    assert card.statistics.comparison.systems == ["bm25", "bm25?stem=none"]
    assert card.statistics.resamples == 10_000 and card.statistics.off_topic["retrievers"]
    bm25 = card.retriever("bm25")
    # 0.1 pooled its one synthetic question (h09, MRR 1) into 0.8; read back, the headline is the 8
    # hand-written ones (0.2 + 1 + 0.5 + 0.5 + 1 + 1 + 1 + 1) / 8, with h09 beside (issue 18)
    assert bm25.metrics[Metric("mrr")] == pytest.approx(6.2 / 8) and len(bm25.off_topic) == 2
    assert bm25.synthetic.n == 1 and bm25.synthetic.metrics[Metric("mrr")] == pytest.approx(1.0)
    assert any("pool" in note and "re-run" in note for note in card.notes)


def _hand_curve(name: str, questions: list[dict[str, Any]], k: int) -> float:
    """hit, recall, precision and nDCG (linear gains, trec_eval's ndcg_cut) at k from `expected` and `ranks`."""
    values = []
    for q in questions:
        found = {doc: rank for doc, rank in q["ranks"].items() if rank is not None and rank <= k}
        if name == "hit":
            values.append(1.0 if found else 0.0)
        elif name == "recall":
            values.append(len(found) / len(q["expected"]))
        elif name == "precision":
            values.append(len(found) / k)
        else:
            dcg = sum(q["expected"][d] / math.log2(r + 1) for d, r in found.items())
            ideal = sorted(q["expected"].values(), reverse=True)[:k]
            values.append(dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal)))
    return sum(values) / len(values)


def test_a_goldset_0_1_file_gets_curves_at_every_k_from_its_ranks() -> None:
    raw = json.loads(V01.read_text())
    card = Scorecard.load(V01)
    for stored, r in zip(raw["retrievers"], card.retrievers, strict=True):
        hand = [q for q in stored["questions"] if not q["off_topic"] and q["source"] != "synthetic"]
        synthetic = [q for q in stored["questions"] if not q["off_topic"] and q["source"] == "synthetic"]
        for name in ("hit", "recall", "precision", "ndcg"):
            assert len(r.curves[name]) == raw["depth"] == 100
            # at the computed ks: the pooled values goldset 0.1 itself wrote, taken apart again
            for k in raw["k"]:
                pooled = (len(hand) * r.curves[name][k - 1] + len(synthetic) * r.synthetic.curves[name][k - 1])
                assert pooled / (len(hand) + len(synthetic)) == pytest.approx(stored["metrics"][f"{name}@{k}"], abs=1e-12)
            for k in (1, 2, 3, 4, 7, 10, 11, 50, 100):
                assert r.curves[name][k - 1] == pytest.approx(_hand_curve(name, hand, k), abs=1e-12)
                assert r.synthetic.curves[name][k - 1] == pytest.approx(_hand_curve(name, synthetic, k), abs=1e-12)
    assert set(card.flips) == {"bm25|bm25?stem=none"}


def test_goldeval_compare_reads_a_goldset_0_1_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.json"
    assert main(["compare", str(V01), "--json", str(out), "--resamples", "500"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    # the file's one synthetic question (h09) is beside the headline, in no verdict (issue 18)
    assert "2 systems on 8 headline questions (1 synthetic beside, in no verdict)" in printed
    assert "bm25?stem=none and bm25 tie on hit@10: the same value on all 8 questions" in printed  # 0.1 led with hit@10
    data = json.loads(out.read_text())
    assert data["systems"] == ["bm25", "bm25?stem=none"] and data["n_questions"] == 8 and data["n_beside"] == 1


def test_a_goldset_0_1_file_compares_with_a_new_evaluation_of_the_same_golden_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # read old, write new: the golden fingerprint of a 0.1 golden file is unchanged, so a CI gate
    # against a frozen 0.1 baseline keeps working after the upgrade
    new = tmp_path / "new.json"
    assert main(["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
                 "--json", str(new), "--quiet", "--no-stats"]) == 0
    assert json.loads(new.read_text())["golden"]["fingerprint"] == json.loads(V01.read_text())["golden"]["fingerprint"]
    capsys.readouterr()
    assert main(["compare", str(V01), str(new), "--fail-if-worse", "hit@5", "--resamples", "200"]) == 0
    assert "gate passed" in capsys.readouterr().err


def _embedded_payload(html: str) -> dict[str, Any]:
    match = re.search(r'<script id="goldeval-data" type="application/json">(.*?)</script>', html, re.S)
    assert match, "the report carries its data"
    payload: dict[str, Any] = json.loads(match.group(1))
    return payload


def test_goldeval_report_html_reads_a_goldset_0_1_file(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(V01), "--html", str(out)]) == 0
    (entry,) = _embedded_payload(out.read_text(encoding="utf-8"))["files"]
    assert entry["name"] == V01.name
    data = entry["data"]
    assert data["schema"] == 3 and [r["name"] for r in data["retrievers"]] == ["bm25", "bm25?stem=none"]
    card = Scorecard.load(V01)
    assert [r["curves"] for r in data["retrievers"]] == [r.curves for r in card.retrievers]
    assert data["flips"] == card.flips and len(data["flips"]["bm25|bm25?stem=none"]["a_only"]) == 100


def test_the_serve_payload_reads_a_goldset_0_1_file_with_its_curves() -> None:
    from goldeval.report.page import payload_json, results_payload

    payload = results_payload([V01, json.loads(V01.read_text())], names=["old", "old"])
    assert [f["name"] for f in payload["files"]] == ["old", "old (2)"]
    first, second = (f["data"] for f in payload["files"])
    assert first["schema"] == 3 and first["retrievers"][0]["curves"] == second["retrievers"][0]["curves"]
    hit = first["retrievers"][0]["curves"]["hit"]
    # the file's own hit@1 was 6 of 9 pooled; the 8 hand-written questions hit 5 (h02, h05-h08), h09 beside
    assert hit[0] == pytest.approx(5 / 8) and hit[4] == 1.0
    assert first["retrievers"][0]["synthetic"]["curves"]["hit"][0] == 1.0 and first["retrievers"][0]["n_headline"] == 8
    assert json.loads(payload_json(payload)) == json.loads(json.dumps(payload))  # strict JSON for JSON.parse


# --- refused files ---------------------------------------------------------------------------------


def _edited(tmp_path: Path, edit: Any) -> Path:
    data = json.loads(V01.read_text())
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    first = err.splitlines()[0]
    assert first.startswith("goldeval: error: ")
    return first


@pytest.mark.parametrize("command", ["compare", "report"])
def test_an_edited_aggregate_is_refused_naming_its_json_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = _edited(tmp_path, lambda d: d["retrievers"][0]["metrics"].__setitem__("mrr", 7.5))
    extra = ["--html", str(tmp_path / "r.html")] if command == "report" else []
    assert main([command, str(path), *extra]) == 2
    line = _one_line_error(capsys)
    assert "retrievers[0].metrics.mrr: is 7.5 but the mean of its 9 questions is 0.8" in line
    assert not (tmp_path / "r.html").exists()


def test_an_edited_question_value_is_refused_too(tmp_path: Path) -> None:
    path = _edited(tmp_path, lambda d: d["retrievers"][1]["questions"][0]["metrics"].__setitem__("hit@1", 0.5))
    with pytest.raises(InputError, match=r"retrievers\[1\]\.metrics\.hit@1: is 0\.777778 but the mean of its 9 questions is 0\.833333"):
        Scorecard.load(path)


@pytest.mark.parametrize(("edit", "where"), [
    (lambda d: d["retrievers"][0]["questions"][3].__setitem__("rank", "two"),
     r"retrievers\[0\]\.questions\[3\]\.rank: must be an integer, not 'two'"),
    (lambda d: d["retrievers"][0]["questions"][2]["ranks"].__setitem__("x", 0),
     r"retrievers\[0\]\.questions\[2\]\.ranks\.x: must be a rank >= 1 or null"),
    (lambda d: d["retrievers"][1].pop("questions"), r"retrievers\[1\]\.questions: is missing"),
    (lambda d: d["metric_names"].append("recal@5"), r"metric_names\[14\]: unknown metric 'recal@5'"),
    (lambda d: d["retrievers"][0]["questions"][1].__setitem__("returned", -1),
     r"retrievers\[0\]\.questions\[1\]\.returned: must be a count or null, not -1"),
    (lambda d: d["retrievers"][0].__setitem__("returned", {"asked": 100, "min": 4, "median": 9, "max": 4,
                                                           "cut_short": True}),
     r"retrievers\[0\]\.returned\.median: must be a number from min to max, not 9"),
    (lambda d: d["retrievers"][0].__setitem__("returned", {"asked": 100, "min": 4, "median": 4, "max": 4}),
     r"retrievers\[0\]\.returned\.cut_short: must be true or false"),
])  # fmt: skip
def test_a_bad_field_is_named_by_its_json_path(tmp_path: Path, edit: Any, where: str) -> None:
    with pytest.raises(InputError, match=where):
        Scorecard.load(_edited(tmp_path, edit))


def test_a_truncated_file_is_refused_as_cut_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = V01.read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) // 2])
    assert main(["compare", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "cut.json:" in err and "not valid JSON" in err
    assert "the file looks cut short; re-run the evaluation" in err
    with pytest.raises(InputError, match="not valid JSON"):
        Scorecard.load(path)


def test_non_finite_numbers_and_unknown_schemas_are_refused(tmp_path: Path) -> None:
    nan = tmp_path / "nan.json"
    nan.write_text(V01.read_text().replace('"seconds": 0.5', '"seconds": NaN', 1))
    with pytest.raises(InputError, match="non-finite number NaN"):
        Scorecard.load(nan)
    newer = _edited(tmp_path, lambda d: d.__setitem__("schema", 4))
    with pytest.raises(InputError, match=r"results schema 4 is not one this goldeval reads \(1, 2, 3\)") as info:
        Scorecard.load(newer)
    assert info.value.hint == "upgrade goldeval"
    with pytest.raises(InputError, match="not a goldeval results file"):
        Scorecard.from_dict({"scores": []})
