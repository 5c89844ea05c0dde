"""`goldeval judge` through the real openai and anthropic SDKs, over real HTTP, against a local stand-in.

The stand-in (synth_llm_server.py, the one synth's tests use) answers with scripted grades: a fixed rule
on the people's grade of the passage (`machine_grade`), so the calibration has known values, checked
against scikit-learn and the `krippendorff` package; the ranking check's numbers are checked against
pytrec_eval on the judgments the test builds itself, and tau against scipy. Malformed, refused, slow
and rate-limited replies are in its repertoire. A second identical run must send it no request at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import krippendorff
import pytest
import pytrec_eval
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from goldeval.cli import main
from synth_llm_server import error_body, fake_llm

pytestmark = pytest.mark.llm  # the Anthropic and OpenAI SDKs, against a fake server on 127.0.0.1

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "data" / "corpus"
GOLDEN = REPO / "examples" / "data" / "golden_example.jsonl"
KEY = "sk-judge-test-Qw7-never-shown-0042"
RETRIEVERS = ("bm25", "bm25?k1=0.3&b=0.1", "bm25?k1=3.0&b=1.0")
ALWAYS_UNREADABLE = "claude/claude-git-workflow.md"
"""The stand-in never gives this passage a grade: it must be recorded as failed, not guessed."""
UNREADABLE_ONCE = "python/venv.md"
"""The stand-in answers this passage with prose first, and with a digit once reminded."""
MISSED_BY_COVERED = "h04"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _people(rows: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """(question text, passage) -> the people's grade, read from the golden file by the test itself."""
    out = {}
    for r in rows:
        if "id" not in r:
            continue
        expected = r.get("expected") or []
        grades = expected if isinstance(expected, dict) else {d: 1 for d in expected}
        grades = {**grades, **{j["doc"]: j["grade"] for j in r.get("judgments", [])}}
        out.update({(r["question"], d): g for d, g in grades.items()})
    return out


def machine_grade(people: int | None, passage: str) -> int:
    """The scripted judge: lenient on 1s, harsh on 3s, generous with unjudged python pages."""
    if people is None:
        return 1 if passage.startswith("python/") else 0
    return {0: 1 if passage.startswith("git/") else 0, 1: 2, 2: 2, 3: 2}[people]


class Script:
    def __init__(self, people: dict[tuple[str, str], int], off_topic: set[str]) -> None:
        self.people, self.off_topic = people, off_topic

    def __call__(self, prompt: str) -> str:
        question = re.search(r"Question: (.*)\n", prompt).group(1)  # type: ignore[union-attr]
        if prompt.startswith("You decide whether"):
            off = question in self.off_topic or question == self.missed
            return "not covered" if off else "Covered."
        passage = re.search(r"Passage \((.*)\):", prompt).group(1)  # type: ignore[union-attr]
        if passage == ALWAYS_UNREADABLE:
            return "I would rather not grade this one."
        if passage == UNREADABLE_ONCE and "could not be read" not in prompt:
            return "It is somewhat relevant, maybe a 2?"
        return str(machine_grade(self.people.get((question, passage)), passage))

    missed = ""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Results of three retrievers on a golden set whose people also judged some passages not relevant."""
    tmp = tmp_path_factory.mktemp("judge")
    first = tmp / "first.json"
    args = ["eval", "--corpus", str(CORPUS), "--workspace", str(tmp / "evalws"), "--k", "1,5,10"]
    for r in RETRIEVERS:
        args += ["--retriever", r]
    assert main([*args, "--golden", str(GOLDEN), "--json", str(first)]) == 0
    top = {q["id"]: [h["id"] for h in q["top"][:5]] for q in json.loads(first.read_text())["retrievers"][0]["questions"]}
    rows = _jsonl(GOLDEN)
    for r in rows:  # a person judged every other unexpected passage of bm25's top 5 not relevant
        if "id" in r:
            listed = set(r["expected"] if isinstance(r["expected"], list) else r["expected"])
            unexpected = [d for d in top[r["id"]] if d not in listed]
            r["judgments"] = [{"doc": d, "grade": 0, "judge": "ann"} for d in unexpected[::2]]
    golden = tmp / "golden.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    results = tmp / "results.json"
    assert main([*args, "--golden", str(golden), "--json", str(results)]) == 0
    off_topic = {r["question"] for r in rows if "id" in r and not r["expected"]}
    return {"tmp": tmp, "golden": golden, "results": results, "rows": rows, "off_topic": off_topic}


def _judge(setup: dict[str, Any], spec: str, ws: Path, *extra: str) -> list[str]:
    out = setup["tmp"] / ws.name
    return ["judge", str(setup["results"]), "--golden", str(setup["golden"]), "--llm", spec, "--workspace", str(ws),
            "--json", str(out.with_suffix(".json")), "--labels", str(out.with_suffix(".labels.jsonl")), *extra]


def _spec(kind: str, url: str) -> str:
    return f"openai:judge-1?base_url={url}/v1&key_env=JUDGE_KEY" if kind == "openai" else \
        f"anthropic:judge-1?base_url={url}&key_env=JUDGE_KEY"


def test_grades_calibrates_and_checks_the_ranking_against_the_references(
        setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGE_KEY", KEY)
    people = _people(setup["rows"])
    script = Script(people, setup["off_topic"])
    script.missed = next(r["question"] for r in setup["rows"] if r.get("id") == MISSED_BY_COVERED)
    golden_before = setup["golden"].read_bytes()
    failures = [(429, {"retry-after": "0"}, error_body("slow down")), (500, {}, error_body("oops"))]
    ws = setup["tmp"] / "ws-openai"
    with fake_llm(KEY, script, failures=failures, delay=0.01) as llm:
        assert main(_judge(setup, _spec("openai", llm.url), ws, "--coverage")) == 0
        first_requests = llm.requests
        shown = capsys.readouterr()
        assert not llm.problems
        data = json.loads((setup["tmp"] / "ws-openai.json").read_text())
        assert main(_judge(setup, _spec("openai", llm.url), ws, "--coverage")) == 0
        assert llm.requests == first_requests  # the second identical run: zero model calls, counted at the server
    again = capsys.readouterr()
    assert "0 model call(s) in all" in again.out
    assert data["calls"]["retries"] >= 2 and data["calls"]["made"] == first_requests
    rerun = json.loads((setup["tmp"] / "ws-openai.json").read_text())
    assert rerun["calls"]["made"] == 0 and rerun["labels"] == data["labels"] and rerun["calibration"] == data["calibration"]
    assert setup["golden"].read_bytes() == golden_before  # machine labels never go into the people's set
    for text in (shown.out, shown.err, again.out, again.err, (setup["tmp"] / "ws-openai.json").read_text(),
                 (setup["tmp"] / "ws-openai.labels.jsonl").read_text()):
        assert KEY not in text
    _check_labels(data, setup)
    _check_calibration(data, people, setup)
    _check_ranking(data, setup)
    _check_covered(data, setup)
    assert "Cohen's kappa" in shown.out and "does the ranking survive?" in shown.out


def _check_labels(data: dict[str, Any], setup: dict[str, Any]) -> None:
    labels = _jsonl(setup["tmp"] / "ws-openai.labels.jsonl")
    assert labels == json.loads(json.dumps(data["labels"]))
    unreadable = [x for x in labels if x["passage"] == ALWAYS_UNREADABLE]
    assert unreadable and all(x["status"] == "failed" and x["grade"] is None and "rather not" in x["reply"]
                              for x in unreadable)
    reminded = [x for x in labels if x["passage"] == UNREADABLE_ONCE]
    assert reminded and all(x["status"] == "graded" and x["grade"] is not None for x in reminded)
    assert all(x["judge"] == "machine:judge-1" and x["prompt_version"] == "grade-0-3/v1" for x in labels)
    assert data["failed"] == len(unreadable)


def _check_calibration(data: dict[str, Any], people: dict[tuple[str, str], int], setup: dict[str, Any]) -> None:
    texts = {r["id"]: r["question"] for r in setup["rows"] if "id" in r}
    pairs = [(people[(texts[x["question"]], x["passage"])], machine_grade(people[(texts[x["question"]], x["passage"])], x["passage"]))
             for x in data["labels"] if x["grade"] is not None and (texts[x["question"]], x["passage"]) in people]
    a, b = [p for p, _ in pairs], [m for _, m in pairs]
    c = data["calibration"]
    assert c["pairs"] == len(pairs) > 10 and len(set(a)) > 1 and len(set(b)) > 1
    assert c["values"]["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    assert c["values"]["weighted_kappa"] == pytest.approx(cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2, 3]), abs=1e-9)
    assert c["values"]["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=[a, b], level_of_measurement="interval"), abs=1e-9)
    assert c["values"]["bias"] == pytest.approx(sum(b) / len(b) - sum(a) / len(a), abs=1e-9)
    assert c["alpha_metric"] == "interval"
    worst = c["disagreements"][0]
    assert abs(worst["difference"]) == max(abs(y - x) for x, y in pairs)


def _reference(setup: dict[str, Any], machine: dict[tuple[str, str], int], scheme: str) -> dict[str, dict[str, float]]:
    """Each retriever's mean ndcg@5 and hit@5 by pytrec_eval, on qrels the test builds from the files."""
    results = json.loads(setup["results"].read_text())
    qrels: dict[str, dict[str, int]] = {}
    for r in setup["rows"]:
        if "id" not in r:
            continue
        grades = r["expected"] if isinstance(r["expected"], dict) else {d: 1 for d in r["expected"]}
        people = {**grades, **{j["doc"]: j["grade"] for j in r["judgments"]}}
        mine = {d: g for (q, d), g in machine.items() if q == r["id"]}
        qrels[r["id"]] = {"people": people, "filled": {**mine, **people}, "machine": mine}[scheme] or {"-": 0}
    out = {}
    for ret in results["retrievers"]:
        # the headline: answerable questions, the synthetic one (h09) beside it, never averaged in
        answerable = [q for q in ret["questions"] if not q["off_topic"] and q["source"] != "synthetic"]
        run = {q["id"]: {h["id"]: h["score"] for h in q["top"]} for q in answerable}
        scores = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in run}, {"ndcg_cut_5", "success_5"}).evaluate(run)
        out[ret["name"]] = {m: sum(scores[q][key] for q in run) / len(run)
                            for m, key in (("ndcg@5", "ndcg_cut_5"), ("hit@5", "success_5"))}
    return out


def _check_ranking(data: dict[str, Any], setup: dict[str, Any]) -> None:
    machine = {(x["question"], x["passage"]): x["grade"] for x in data["labels"] if x["grade"] is not None}
    results = json.loads(setup["results"].read_text())
    by_metric = {m["metric"]: m for m in data["ranking"]["metrics"]}
    assert set(by_metric) == {"hit@5", "ndcg@5"}
    for metric, block in by_metric.items():
        for r in results["retrievers"]:  # people only: the results file's own numbers, through the rescoring
            assert block["schemes"]["people"]["means"][r["name"]] == pytest.approx(r["metrics"][metric], abs=1e-9)
        for scheme in ("people", "filled", "machine"):
            reference = _reference(setup, machine, scheme)
            means = block["schemes"][scheme]["means"]
            for name, values in reference.items():
                assert means[name] == pytest.approx(values[metric], abs=1e-9), (metric, scheme, name)
            a, b = list(block["schemes"]["people"]["means"].values()), list(means.values())
            tau = kendalltau(a, b).statistic
            assert block["schemes"][scheme]["kendall_tau"] == (None if tau != tau else pytest.approx(tau, abs=1e-12))
        assert block["schemes"]["filled"]["judged_at_k"]["bm25"] > block["schemes"]["people"]["judged_at_k"]["bm25"]
    assert data["ranking"]["conclusion_changes"] == any(m["conclusion_changes"] for m in by_metric.values())


def _check_covered(data: dict[str, Any], setup: dict[str, Any]) -> None:
    c = data["covered"]
    n_off = len(setup["off_topic"])
    n_ans = sum(1 for r in setup["rows"] if "id" in r) - n_off
    assert (c["n_answerable"], c["n_off_topic"], c["failed"]) == (n_ans, n_off, 0)
    assert c["accuracy"] == pytest.approx((n_ans + n_off - 1) / (n_ans + n_off))
    assert c["roc_point"] == {"tpr": 1.0, "fpr": pytest.approx(1 / n_ans)}
    results = json.loads(setup["results"].read_text())["retrievers"][0]["questions"]
    # the threshold is judged on the headline's answerable questions and the off-topic ones (synthetic: beside)
    scored = [(not q["off_topic"], q["top"][0]["score"]) for q in results if q["top"] and (q["headline"] or q["off_topic"])]
    assert c["threshold"]["auc"] == pytest.approx(roc_auc_score([y for y, _ in scored], [s for _, s in scored]))


def test_the_anthropic_sdk_gets_the_same_grades(setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGE_KEY", KEY)
    script = Script(_people(setup["rows"]), setup["off_topic"])
    with fake_llm(KEY, script) as llm:
        assert main(_judge(setup, _spec("openai", llm.url), setup["tmp"] / "ws-o2")) == 0
        assert main(_judge(setup, _spec("anthropic", llm.url), setup["tmp"] / "ws-anthropic")) == 0
        assert not llm.problems and {s.path for s in llm.seen} == {"/v1/chat/completions", "/v1/messages"}
    capsys.readouterr()
    grades = [[(x["question"], x["passage"], x["grade"]) for x in json.loads((setup["tmp"] / f"{n}.json").read_text())["labels"]]
              for n in ("ws-o2", "ws-anthropic")]
    assert grades[0] == grades[1] and len(grades[0]) > 20


def test_dry_run_calls_nothing_and_a_refused_call_is_failed_not_guessed(
        setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGE_KEY", KEY)
    script = Script(_people(setup["rows"]), setup["off_topic"])
    ws = setup["tmp"] / "ws-refused"
    with fake_llm(KEY, script, failures=[(400, {}, error_body("content refused"))]) as llm:
        assert main(_judge(setup, _spec("openai", llm.url), ws, "--dry-run")) == 0
        assert llm.requests == 0
        said = capsys.readouterr().err
        planned = int(re.search(r"(\d+) call\(s\) to make", said).group(1))  # type: ignore[union-attr]
        assert main(_judge(setup, _spec("openai", llm.url), ws, "--concurrency", "1")) == 0
    capsys.readouterr()
    labels = json.loads((setup["tmp"] / "ws-refused.json").read_text())["labels"]
    assert len(labels) == planned
    refused = [x for x in labels if "HTTP 400" in x["reason"]]
    assert len(refused) == 1 and refused[0]["grade"] is None and refused[0]["status"] == "failed"


def test_a_refused_key_stops_the_judge_writes_nothing_and_shows_no_key(
        setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGE_KEY", KEY)
    echo = (401, {}, error_body(f"invalid api key {KEY}"))  # a server that echoes the key back
    ws = setup["tmp"] / "ws-401"
    with fake_llm(KEY, Script({}, set()), failures=[echo] * 10) as llm:
        code = main(_judge(setup, _spec("openai", llm.url), ws, "--concurrency", "1"))
    out, err = capsys.readouterr()
    # it stops at the first 401 (48 passages to grade); a dropped keep-alive connection on a loaded machine
    # can make the SDK send that first request twice (seen once: APIConnectionError, then the 401)
    assert code == 2 and 1 <= llm.requests <= 2
    assert "the server refused the API key (HTTP 401)" in err and KEY not in out + err
    assert not (setup["tmp"] / "ws-401.json").exists() and not (setup["tmp"] / "ws-401.labels.jsonl").exists()


def test_machine_labels_that_favour_one_retriever_change_the_conclusion_and_say_so(setup: dict[str, Any]) -> None:
    from goldeval.golden.io import load_golden
    from goldeval.judging.survival import ranking_check
    from goldeval.report.judges import judges_text
    from goldeval.scorecard.model import Scorecard

    card = Scorecard.load(setup["results"])
    golden = load_golden(setup["golden"])
    favoured = card.retrievers[1]  # bm25?k1=0.3&b=0.1, last on ndcg@5 by the people's labels
    top1 = {q.id: q.top[0].doc for q in favoured.questions if q.top}
    # the machine calls relevant only what the favoured retriever ranks first, every other passage not
    machine = {(q.id, h.doc): 3 if h.doc == top1.get(q.id) else 0
               for r in card.retrievers for q in r.questions for h in q.top[:5]}
    check = ranking_check([card], ["r"], golden, machine, {}, "m", resamples=2000)
    ndcg = next(m for m in check["metrics"] if m["metric"] == "ndcg@5")
    people, only = ndcg["schemes"]["people"], ndcg["schemes"]["machine"]
    assert people["order"][-1] == favoured.name and only["order"][0] == favoured.name
    assert only["kendall_tau"] == pytest.approx(kendalltau(list(people["means"].values()),
                                                           list(only["means"].values())).statistic, abs=1e-12)
    assert check["conclusion_changes"] and ndcg["orders_change"]["machine"]
    text = judges_text({"model": "m", "prompt_version": "v", "labels": [], "failed": 0,
                        "calls": {"made": 0, "cached": 0, "retries": 0},
                        "calibration": {"pairs": 0, "questions": 0}, "ranking": check, "covered": None})
    assert "the machine labels CHANGE a conclusion" in text

