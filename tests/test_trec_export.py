"""TREC exports give back the evaluation's numbers (issue 18, item 4): `goldeval eval --qrels --run`, then
`goldeval trec -c` and pytrec_eval on the written files, per question and in the mean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval

import goldeval
from golden_factory import make_golden
from goldeval.cli import main
from goldeval.corpus.model import Corpus, Document
from goldeval.scorecard.export import write_qrels, write_run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "data"
KS = (1, 3, 5, 10)
# goldeval's metric -> trec_eval's measure of the same definition
MAPPED = {**{f"hit@{k}": f"success_{k}" for k in KS}, **{f"recall@{k}": f"recall_{k}" for k in KS},
          **{f"precision@{k}": f"P_{k}" for k in KS}, **{f"ndcg@{k}": f"ndcg_cut_{k}" for k in KS},
          "mrr": "recip_rank", "map": "map"}
MEASURES = ["success.1,3,5,10", "recall.1,3,5,10", "P.1,3,5,10", "ndcg_cut.1,3,5,10", "recip_rank", "map"]


def _golden(tmp_path: Path) -> Path:
    """The example set plus the issue's case: an off-topic question with judged-not-relevant documents."""
    path = tmp_path / "golden.jsonl"
    off = {"id": "o09", "question": "how do I cook rice", "intent": "off_topic",
           "expected": {"git/git-branch.md": 0, "python/venv.md": 0}}
    path.write_text((EXAMPLES / "golden_example.jsonl").read_text() + json.dumps(off) + "\n")
    return path


def _trec(capsys: pytest.CaptureFixture[str], qrels: Path, run: Path) -> dict[str, dict[str, float]]:
    """`goldeval trec -c -q` as printed: measure -> topic (or `all`) -> value (4 decimals)."""
    capsys.readouterr()
    assert main(["trec", "-c", "-q", *(a for m in MEASURES for a in ("-m", m)), str(qrels), str(run)]) == 0
    out: dict[str, dict[str, float]] = {}
    for line in capsys.readouterr().out.splitlines():
        measure, topic, value = line.split()
        out.setdefault(measure, {})[topic] = float(value)
    return out


def _pytrec(qrels: Path, run: Path) -> dict[str, dict[str, float]]:
    with qrels.open() as q, run.open() as r:
        judged, ranking = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    return pytrec_eval.RelevanceEvaluator(judged, set(MEASURES)).evaluate(ranking)


def _assert_same(retriever: dict, trec: dict[str, dict[str, float]], pytrec: dict[str, dict[str, float]]) -> None:
    # off-topic questions are not topics, nor synthetic ones (beside the headline, issue 18 item 3)
    answerable = [q for q in retriever["questions"] if q["headline"]]
    assert set(trec["map"]) - {"all"} == {q["id"] for q in answerable}
    for metric, measure in MAPPED.items():
        assert trec[measure]["all"] == pytest.approx(retriever["metrics"][metric], abs=5e-5), metric
        for q in answerable:
            assert trec[measure][q["id"]] == pytest.approx(q["metrics"][metric], abs=5e-5), (metric, q["id"])
            if q["id"] in pytrec:  # pytrec_eval has no -c: a question with no result is not evaluated
                assert pytrec[q["id"]][measure] == pytest.approx(q["metrics"][metric], abs=1e-9), (metric, q["id"])


@pytest.mark.parametrize(("chunk", "level"), [("none", "doc"), ("300:50", "doc"), ("300:50", "chunk")])
def test_eval_exports_qrels_and_a_full_depth_run_that_give_back_its_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], chunk: str, level: str
) -> None:
    golden, results, qrels, run = _golden(tmp_path), tmp_path / "r.json", tmp_path / "q.txt", tmp_path / "run.txt"
    assert main(["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(golden), "--chunk", chunk, "--level",
                 level, "--k", "1,3,5,10", "--metric", "map", "--no-stats", "--quiet", "--workspace",
                 str(tmp_path / "ws"), "--json", str(results), "--qrels", str(qrels), "--run", str(run)]) == 0
    err = capsys.readouterr().err
    assert "goldeval: TREC export: 3 off-topic question(s) left out (o01, o02, o09)" in err
    assert "goldeval: TREC export: 1 synthetic question(s) left out (h09)" in err
    assert " o09 " not in qrels.read_text()
    data = json.loads(results.read_text())
    (retriever,) = data["retrievers"]
    lines = [line.split()[0] for line in run.read_text().splitlines()]
    assert max(len(q["top"]) for q in retriever["questions"]) <= 10  # what the results JSON keeps
    if chunk != "none":  # the run goes deeper than the JSON's top 10: the whole ranking that was scored
        assert max(lines.count(q) for q in set(lines)) > 10
    _assert_same(retriever, _trec(capsys, qrels, run), _pytrec(qrels, run))


def test_golden_export_leaves_off_topic_judgments_out_and_gives_back_hit_at_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # regression: the off-topic question's grade-0 judgments became a TREC topic scoring 0, so success_5
    # on `golden export` + the run was below the evaluation's hit@5 (0.778 vs 0.808 in the issue)
    golden, results, run = _golden(tmp_path), tmp_path / "r.json", tmp_path / "run.txt"
    assert main(["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(golden), "--k", "1,3,5,10", "--metric",
                 "map", "--no-stats", "--quiet", "--workspace", str(tmp_path / "ws"), "--json", str(results),
                 "--run", str(run), "--qrels", str(tmp_path / "eval.qrels")]) == 0
    exported = tmp_path / "golden.qrels"
    capsys.readouterr()
    assert main(["golden", "export", str(golden), "--qrels", str(exported)]) == 0
    captured = capsys.readouterr()
    assert f"wrote {exported}: 10 judgments of 8 question(s)" in captured.out  # h09 is synthetic: beside
    assert "3 off-topic question(s) left out (o01, o02, o09): TREC has no intent" in captured.err
    assert "1 synthetic question(s) left out (h09)" in captured.err
    assert exported.read_text() == (tmp_path / "eval.qrels").read_text()  # whole documents: the same judgments
    (retriever,) = json.loads(results.read_text())["retrievers"]
    _assert_same(retriever, _trec(capsys, exported, run), _pytrec(exported, run))


def test_tied_scores_and_questions_without_results_keep_their_numbers(tmp_path: Path) -> None:
    """Chunks whose scores tie, scored at doc level: written as document ids (and later chunks of a document
    under their own ids), trec_eval's sort by docno would reorder the ties, so the score column becomes the
    reverse rank; a question with no result has no line and scores 0 with -c, as in the evaluation."""
    docs = Corpus({f"d{i}": Document(f"d{i}", " ".join(f"page {i} line {n}." for n in range(40))) for i in range(30)})
    golden = make_golden([(f"q{i}", f"page {i}", {f"d{i}": 1, f"d{(i + 7) % 30}": 2}) for i in range(12)]
                         + [("off", "nothing here", {})])

    def search(question: str, k: int) -> list[tuple[str, float]]:
        i = int(question.split()[-1]) if question[-1].isdigit() else 0
        if i == 11:
            return []
        order = [f"d{(i * 5 + j) % 30}#{c}" for j in range(15) for c in (0, 1)]  # two chunks of each document
        return [(pid, 1.0 if n < 20 else 0.5) for n, pid in enumerate(order)][:k]

    card = goldeval.evaluate({"tied": search}, golden, corpus=docs, k=KS, metrics=list(MAPPED), depth=30, chunking="200:0")
    # goldeval ranks the tied chunks of d0..d9 by id descending: d9#1, d9#0, d8#1, ... (d9#1 counts for d9)
    (result,) = card.retrievers
    qrels, run = tmp_path / "q.txt", tmp_path / "run.txt"
    assert write_qrels(card, qrels) == ["1 off-topic question(s) left out (off): TREC has no intent, and the "
                                        "evaluation never averages them in"]
    notes = write_run(result, run)
    assert notes[0].startswith("1 question(s) with no result (q11) have no line in")
    assert notes[1].startswith("11 question(s) of") and "reverse ranks as scores" in notes[1]
    assert run.read_text().splitlines()[:3] == ["q0 Q0 d9 1 30.0 tied", "q0 Q0 d9#0 2 29.0 tied", "q0 Q0 d8 3 28.0 tied"]
    data = json.loads(json.dumps(card.to_dict()))
    evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(qrels.open()), set(MEASURES))
    pytrec = evaluator.evaluate(pytrec_eval.parse_run(run.open()))
    assert "q11" not in pytrec
    _assert_same(data["retrievers"][0], _trec_files(qrels, run), pytrec)


def _trec_files(qrels: Path, run: Path) -> dict[str, dict[str, float]]:
    """goldeval's trec_eval engine on the files, unrounded (as `goldeval trec -c -q` computes it)."""
    from goldeval.metrics.trec import evaluate_trec_files, parse_measures

    report = evaluate_trec_files(str(qrels), str(run), parse_measures(MEASURES), complete=True)
    out: dict[str, dict[str, float]] = {}
    for line in report.lines(per_query=True, summary=True):
        measure, topic, value = line.split()
        out.setdefault(measure, {})[topic] = float(value)
    return out


def test_a_run_cut_short_by_its_retriever_names_the_metrics_past_it(tmp_path: Path) -> None:
    # regression (issue 18 items 2 and 4): the export said `to depth 100` of a retriever that returned 3, and
    # trec_eval's success_5 on it is success_3 under another name, which the evaluation shows n/a
    docs = Corpus({f"d{i}": Document(f"d{i}", f"page {i}") for i in range(30)})
    golden = make_golden([(f"q{i}", f"page {i}", {f"d{i}": 1}) for i in range(6)])
    card = goldeval.evaluate({"three": lambda q, k: [f"d{int(q.split()[-1]) + j}" for j in range(3)]}, golden,
                             corpus=docs, k=(1, 3, 5), depth=30)
    (result,) = card.retrievers
    run = tmp_path / "run.txt"
    assert write_run(result, run) == [
        f"three returned at most 3 results per question of the 30 asked: in {run}, hit@5, recall@5, precision@5, "
        "ndcg@5 are past what it returned (the evaluation shows them n/a, and compares and gates none of them); "
        "raise the retriever's own k"]
    assert len(run.read_text().splitlines()) == 18  # what it returned: 3 for each of the 6 questions
