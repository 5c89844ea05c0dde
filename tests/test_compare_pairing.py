"""compare across files pairs retrievers by name (never inside one file); the comment leads with what
changed and lists the flipped questions; runs on different golden sets use the questions they share."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from goldeval.cli import main
from goldeval.history.changes import restrict, shared_questions
from goldeval.metrics.definitions import Metric
from goldeval.scorecard import Hit, QuestionResult, RetrieverResult, Scorecard
from goldeval.stats.compare import compare_scorecards, gate_pairs, pair_systems

HIT5, MRR = Metric("hit", 5), Metric("mrr")
N = 30


def _retriever(name: str, hits: list[int], *, config: dict | None = None, texts: dict[int, str] | None = None,
               nonrelevant: dict[int, list[str]] | None = None) -> RetrieverResult:
    questions = []
    for i, h in enumerate(hits):
        questions.append(QuestionResult(
            id=f"q{i:02d}", question=(texts or {}).get(i, f"question number {i}"), expected={f"d{i}": 1}, off_topic=False,
            rank=1 if h else None, ranks={f"d{i}": 1 if h else None},
            top=[Hit(f"d{i}" if h else "dx", 1.0, f"d{i}" if h else "dx")], metrics={HIT5: float(h), MRR: float(h)},
            nonrelevant=(nonrelevant or {}).get(i, []),
        ))
    mean = {m: float(np.mean([q.metrics[m] for q in questions])) for m in (HIT5, MRR)}
    return RetrieverResult(name, questions, mean, config=config or {"spec": name})


def _card(*retrievers: RetrieverResult, fingerprint: str = "fp1", version: int | None = 1) -> Scorecard:
    from goldeval.scorecard import RunIdentity

    return Scorecard(list(retrievers), [HIT5, MRR], [5], 10, [HIT5, MRR], golden={"fingerprint": fingerprint},
                     identity=RunIdentity(golden_fingerprint=fingerprint, golden_version=version))


BASE_BM25 = [1] * 20 + [0] * 10
BASE_DENSE = [1] * 25 + [0] * 5


def test_two_files_compare_namesakes_only_never_pairs_inside_one_file() -> None:
    base = _card(_retriever("bm25", BASE_BM25), _retriever("dense", BASE_DENSE))
    new = _card(_retriever("bm25", BASE_BM25[:-3] + [1, 1, 1]), _retriever("dense", BASE_DENSE))
    comparison = compare_scorecards([base, new], labels=["base", "new"], resamples=500)
    assert {(r.a, r.b) for r in comparison.results} == {("new/bm25", "base/bm25"), ("new/dense", "base/dense")}
    assert len(comparison.results) == 4 and comparison.correction == "holm"  # 2 pairs x 2 metrics, not 6 pairs
    assert comparison.notes == []


def test_unpaired_retrievers_are_named_and_options_pair_with_their_spec() -> None:
    base = _card(_retriever("bm25", BASE_BM25), _retriever("dense:minilm", BASE_DENSE))
    new = _card(_retriever("bm25?k1=1.5", BASE_BM25), _retriever("hybrid:bm25+dense:minilm", BASE_DENSE))
    pairs, notes = pair_systems([base, new], ["base", "new"])
    assert pairs == [("bm25?k1=1.5", "bm25")]
    assert notes == ["bm25?k1=1.5 is compared against bm25: the same retriever with other options",
                     "hybrid:bm25+dense:minilm is not compared: no retriever named hybrid:bm25+dense:minilm in the "
                     "baseline base (bm25, dense:minilm)",
                     "dense:minilm of the baseline base has no namesake in the later file(s)"]
    assert gate_pairs([base, new], ["base", "new"])[0] == pairs
    one = _card(_retriever("a", BASE_BM25), _retriever("b", BASE_DENSE), _retriever("c", BASE_DENSE))
    assert pair_systems([one], ["x"])[0] == [("b", "a"), ("c", "a"), ("c", "b")]  # one file: its retrievers


def test_comment_leads_with_what_changed_and_lists_the_flipped_questions(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    texts = {i: f"how do I do thing {i}" for i in range(N)}
    worse = BASE_DENSE[:15] + [0] * 10 + BASE_DENSE[25:]  # loses q15..q24
    base = _card(_retriever("bm25", BASE_BM25, texts=texts), _retriever("dense", BASE_DENSE, texts=texts,
                                                                            config={"spec": "dense", "options": {"k": 10}}))
    new = _card(_retriever("bm25", BASE_BM25[:-2] + [1, 1], texts=texts),
                _retriever("dense", worse, texts=texts, config={"spec": "dense", "options": {"k": 20}}))
    base.save(tmp_path / "baseline.json")
    new.save(tmp_path / "candidate.json")
    md = tmp_path / "comment.md"
    code = main(["compare", str(tmp_path / "baseline.json"), str(tmp_path / "candidate.json"), "--markdown", str(md),
                 "--resamples", "1000", "--fail-if-worse", "hit@5"])
    assert code == 1  # dense lost 10 questions: beyond noise
    text = md.read_text()
    lines = text.splitlines()
    assert lines[0] == "### goldeval: candidate vs baseline" and lines[2] == "**What changed**"
    assert lines[4].startswith("- `bm25`: hit@5 0.667 -> 0.733, +6.7 points")
    assert lines[5].startswith("- `dense`: hit@5 0.833 -> 0.500, -33.3 points") and "**worse beyond noise**" in lines[5]
    assert "- `bm25` now finds 2: q28 “how do I do thing 28”; q29 “how do I do thing 29”" in text
    assert "- `dense` now misses 10: q15 “how do I do thing 15”" in text and "and 0 more" not in text
    assert "_dense configuration: options.k: 10 -> 20_" in text
    assert text.index("**Flipped questions**") < text.index("<details>")
    assert len(text[: text.index("<details>")].splitlines()) < 20  # the unfolded part stays short
    assert "gate failed: candidate/dense is worse than baseline/dense" in capsys.readouterr().err


def test_runs_on_different_versions_use_the_questions_they_share_unchanged() -> None:
    old = _card(_retriever("bm25", BASE_BM25), fingerprint="v1", version=1)
    relabelled = _retriever("bm25", BASE_BM25 + [1], texts={3: "question number 3, reworded"})
    new = _card(relabelled, fingerprint="v2", version=2)
    shared = shared_questions([old, new])
    assert shared.changes.added == ["q30"] and shared.changes.changed == ["q03"] and len(shared.qids) == N - 1
    assert shared.describe() == ("compared on the 29 questions the runs share unchanged (of 30 and 31; golden set "
                                 "version 1 -> 2: 1 added (q30), 1 relabelled (q03))")
    cut = [restrict(c, shared.qids) for c in (old, new)]
    assert cut[0].golden["fingerprint"] == cut[1].golden["fingerprint"] != "v1"
    assert cut[1].retrievers[0].metrics[HIT5] == pytest.approx(np.mean([h for i, h in enumerate(BASE_BM25) if i != 3]))
    comparison = compare_scorecards(cut, labels=["old", "new"], resamples=200)
    assert comparison.n_questions == N - 1


def test_compare_json_says_what_was_shared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _card(_retriever("bm25", BASE_BM25), fingerprint="v1").save(tmp_path / "a.json")
    _card(_retriever("bm25", BASE_BM25 + [0]), fingerprint="v2", version=2).save(tmp_path / "b.json")
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json", str(tmp_path / "c.json"),
                 "--resamples", "200"]) == 0
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["shared"]["added"] == ["q30"] and data["shared"]["versions"] == [1, 2] and data["n_questions"] == N
    assert "compared on the 30 questions the runs share unchanged" in capsys.readouterr().err


def test_a_question_judged_further_stays_shared_and_leaves_bpref_out(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    old = _card(_retriever("bm25", BASE_BM25), fingerprint="v1", version=1)
    new = _card(_retriever("bm25", BASE_BM25, nonrelevant={4: ["dx"]}), fingerprint="v2", version=2)
    shared = shared_questions([old, new])
    assert len(shared.qids) == N and shared.changes.judged == ["q04"] and shared.changes.changed == []
    assert "1 judged further (q04); bpref left out" in shared.describe()
    (cut,) = [restrict(new, shared.qids, drop=[MRR])]
    assert cut.metrics == [HIT5] and MRR not in cut.retrievers[0].metrics
    old.save(tmp_path / "old.json")
    new.save(tmp_path / "new.json")
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--resamples", "200"]) == 0
    assert "compared on the 30 questions the runs share unchanged" in capsys.readouterr().err  # said by the CLI too


def test_ci_example_runs_goldeval_commands_that_parse() -> None:
    """examples/ci/goldeval.yml stays in step with the command line: every goldeval command in it parses."""
    import re
    import shlex

    from goldeval.cli import build_parser

    text = (Path(__file__).resolve().parents[1] / "examples" / "ci" / "goldeval.yml").read_text()
    joined = re.sub(r"\\\n\s*", " ", text)
    commands = [shlex.split(line.strip())[1:] for line in joined.splitlines() if line.strip().startswith("goldeval ")]
    assert [c[0] for c in commands] == ["eval", "compare"]
    parser = build_parser()
    for args in commands:
        parsed = parser.parse_args(args)
        assert callable(parsed.func)
    gate = parser.parse_args(commands[1])
    assert gate.fail_if_worse == "hit@5" and gate.results == ["eval/baseline.json", "candidate.json"]
