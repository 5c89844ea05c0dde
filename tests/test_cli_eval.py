"""`goldeval eval` as a user runs it: the scorecard, the misses, the JSON, and bad input (exit 2)."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from goldeval.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"


def write_golden(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "git").mkdir(parents=True)
    (folder / "git" / "git-stash.md").write_text("# git stash\n\nStash the changes in a dirty working directory away.\n")
    (folder / "git" / "git-branch.md").write_text("# git branch\n\nList, create, or delete branches.\n")
    (folder / "cooking.md").write_text("# Pasta\n\nBoil water, add salt, cook the pasta.\n")
    return folder


def test_eval_prints_the_scorecard_and_writes_the_documented_json(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes away", "expected": ["git/git-stash.md"]},
        {"id": "h02", "question": "how do I delete a branch", "expected": ["git/git-branch.md"]},
        {"id": "o01", "question": "best pizza in Naples", "expected": []},
    ])
    out = tmp_path / "results.json"
    code = main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--k", "1,3", "--json", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "hit@1" in printed and "bm25" in printed
    data = json.loads(out.read_text())
    (bm25,) = data["retrievers"]
    assert (bm25["name"], bm25["n_answerable"], bm25["n_off_topic"]) == ("bm25", 2, 1)
    assert bm25["metrics"]["hit@1"] == 1.0  # each question names its page's own words
    questions = {q["id"]: q for q in bm25["questions"]}
    assert questions["h01"]["rank"] == 1 and questions["h01"]["top"][0]["id"] == "git/git-stash.md"
    assert questions["o01"]["off_topic"] is True and questions["o01"]["metrics"] == {}


def test_misses_name_what_was_expected_what_came_first_and_the_final_rank(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        # lexical bait: "branches" pulls git-branch.md first; the stash page is the answer
        {"id": "h05", "question": "put my work aside so I can switch branches", "expected": ["git/git-stash.md"]},
        # no word in common with the stash page at all: never retrieved
        {"id": "h06", "question": "tuck my edits somewhere safe before switching branches", "expected": ["git/git-stash.md"]},
    ])
    code = main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--k", "1", "--misses", "--quiet", "--no-stats"])
    assert code == 0
    out = " ".join(capsys.readouterr().out.split())  # miss lines wrap at words for the terminal's width
    # "working" in the stash page stems like "work": the answer comes second
    assert "miss h05 (rank 2): put my work aside so I can switch branches expected git/git-stash.md got git/git-branch.md (" in out
    assert "miss h06 (rank >100): tuck my edits somewhere safe before switching branches expected git/git-stash.md got git/git-branch.md (" in out


def test_unknown_expected_id_exits_2_with_a_suggestion_and_keeps_old_results(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes", "expected": ["git/git-stsh.md"]},
    ])
    out = tmp_path / "results.json"
    out.write_text('{"earlier": "results"}')
    code = main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--json", str(out), "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "golden.jsonl:1" in err and "git/git-stsh.md" in err and "did you mean `git/git-stash.md`" in err
    assert out.read_text() == '{"earlier": "results"}'


def test_malformed_golden_line_exits_2_naming_the_line(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(textwrap.dedent("""\
        {"id": "h01", "question": "stash my changes", "expected": ["git/git-stash.md"]}
        {"id": "h02", "question": "delete a branch", "expected": ["git/git-branch.md"]
    """))
    assert main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--quiet"]) == 2
    assert "golden.jsonl:2" in capsys.readouterr().err


@pytest.mark.parametrize("problem", ["missing corpus", "empty corpus", "only non-utf8"])
def test_unusable_corpus_exits_2(tmp_path: Path, problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "docs"
    if problem != "missing corpus":
        folder.mkdir()
    if problem == "only non-utf8":
        (folder / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    golden = write_golden(tmp_path / "golden.jsonl", [{"id": "h01", "question": "x", "expected": []}])
    assert main(["eval", "--corpus", str(folder), "--golden", str(golden), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(folder) in err or "docs" in err


def test_a_user_function_that_raises_names_the_question_and_keeps_the_others(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mysearch.py").write_text(textwrap.dedent("""\
        def search(question, k):
            if "branch" in question:
                raise RuntimeError("index shard 3 is down")
            return [("git/git-stash.md", 0.9), ("cooking.md", 0.1)]
    """))
    monkeypatch.chdir(tmp_path)
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes", "expected": ["git/git-stash.md"]},
        {"id": "h02", "question": "delete a branch", "expected": ["git/git-branch.md"]},
    ])
    out = tmp_path / "results.json"
    code = main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--retriever", "mysearch:search",
                 "--json", str(out), "--quiet", "--no-stats"])
    assert code == 3  # it ran, and the exit code says a retriever failed on a question (issue 9)
    captured = capsys.readouterr()
    assert "question h02" in captured.err and "index shard 3 is down" in captured.err
    questions = {q["id"]: q for q in json.loads(out.read_text())["retrievers"][0]["questions"]}
    assert questions["h01"]["rank"] == 1 and questions["h02"]["error"].endswith("index shard 3 is down")


def test_unknown_retriever_exits_2(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [{"id": "h01", "question": "x", "expected": []}])
    assert main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--retriever", "bm52", "--quiet"]) == 2
    assert "unknown retriever 'bm52'" in capsys.readouterr().err


@pytest.mark.parametrize("problem", ["unknown retriever", "bad golden line"])
def test_a_failed_eval_leaves_no_workspace_it_made_and_keeps_one_it_found(tmp_path: Path, corpus: Path, problem: str,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "h01", "question": "x", "expected": []}\n' + ("{" if problem == "bad golden line" else ""))
    spec = "bm52" if problem == "unknown retriever" else "bm25"
    new, found = tmp_path / "new-ws", tmp_path / "found-ws"
    found.mkdir()
    for workspace in (new, found):
        code = main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--retriever", spec, "--quiet",
                     "--workspace", str(workspace)])
        assert code == 2 and "Traceback" not in capsys.readouterr().err
    assert not new.exists() and found.is_dir()  # made for the command, empty: undone; the user's own: kept
    golden.write_text('{"id": "h01", "question": "stash my changes", "expected": ["git/git-stash.md"]}\n')
    assert main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--quiet", "--no-stats",
                 "--workspace", str(new)]) == 0
    assert (new / "history.sqlite").is_file()  # a run that works still records its history there


def test_the_shipped_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--corpus", str(EXAMPLES / "corpus"), "--golden", str(EXAMPLES / "golden_example.jsonl"),
                 "--quiet", "--no-stats"])
    assert code == 0
    assert "bm25" in capsys.readouterr().out


def test_cranfield_folder_serves_as_corpus_and_golden_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cranfield = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"
    out = tmp_path / "cran.json"
    code = main(["eval", "--corpus", str(cranfield), "--golden", str(cranfield), "--k", "10",
                 "--metric", "recall@100", "--json", str(out), "--quiet", "--no-stats"])
    assert code == 0
    (bm25,) = json.loads(out.read_text())["retrievers"]
    # every one of the 225 Cranfield queries has at least one relevant document
    assert (bm25["n_answerable"], bm25["n_off_topic"]) == (225, 0)
    assert bm25["metrics"]["recall@100"] > bm25["metrics"]["recall@10"] > 0.3


def test_a_saved_trec_run_is_a_retriever(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes", "expected": ["git/git-stash.md"]},
        {"id": "h02", "question": "delete a branch", "expected": ["git/git-branch.md"]},
    ])
    run = tmp_path / "service.trec"
    # the rank column is ignored, as trec_eval ignores it: scores decide the order
    run.write_text("h01 Q0 cooking.md 1 0.2 prod\nh01 Q0 git/git-stash.md 2 0.9 prod\nh02 Q0 cooking.md 1 0.5 prod\n")
    out = tmp_path / "results.json"
    assert main(["eval", "--golden", str(golden), "--retriever", f"run:{run}", "--k", "1",
                 "--json", str(out), "--quiet", "--no-stats"]) == 0
    (result,) = json.loads(out.read_text())["retrievers"]
    questions = {q["id"]: q for q in result["questions"]}
    assert questions["h01"]["rank"] == 1 and questions["h02"]["rank"] is None
    assert result["metrics"]["hit@1"] == 0.5

    run.write_text("h01 Q0 cooking.md 1 high prod\n")
    assert main(["eval", "--golden", str(golden), "--retriever", f"run:{run}", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "service.trec:1" in err and "high" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--retriever", "bm25?k1=1.2"], "no corpus given"),
    (["--retriever", "bm25?stem=off"], "stem='off'"),
    (["--timeout", "0", "--retriever", "x:y"], "--timeout must be a positive"),
    (["--depth", "0"], "depth must be between 1 and 10,000, got 0"),
])
def test_bad_options_exit_2(tmp_path: Path, corpus: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [{"id": "h01", "question": "stash", "expected": []}])
    base = ["eval", "--golden", str(golden), "--quiet"]
    if "no corpus" not in message:
        base += ["--corpus", str(corpus)]
    try:
        code = main(base + args)
    except SystemExit as exc:  # argparse refuses a number past its bounds (goldeval.limits.number_type)
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_run_file_for_other_questions_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash", "expected": ["a"]},
        {"id": "h02", "question": "branch", "expected": ["b"]},
    ])
    run = tmp_path / "other.trec"
    run.write_text("301 Q0 a 1 0.5 prod\n302 Q0 b 1 0.5 prod\n")
    assert main(["eval", "--golden", str(golden), "--retriever", f"run:{run}", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "has results for none of the 2 questions" in err and "301" in err and "h01" in err


def test_chunk_level_refuses_chunk_ids_that_match_no_chunk(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes", "expected": ["git/git-stash.md#0"]},
        {"id": "h02", "question": "delete a branch", "expected": ["git/git-branch.md#7"]},
    ])
    base = ["eval", "--corpus", str(corpus), "--golden", str(golden), "--level", "chunk", "--quiet", "--no-stats"]
    # whole documents: no chunk ids at all
    assert main(base) == 2
    assert "pass --chunk SIZE" in capsys.readouterr().err
    # split into chunks: #0 exists, #7 does not, and the error names the chunks there are
    assert main([*base, "--chunk", "200:20"]) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl:2" in err and "git/git-branch.md#7" in err and "`git/git-branch.md#0`" in err
    assert "h01" not in err


def test_a_search_function_stuck_past_the_timeout_does_not_hold_the_command(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # stuck for 600 s: a command that held on would hang, so the test reads no clock (issue 17)
    (tmp_path / "stuck.py").write_text("import time\n\ndef search(q, k):\n    if 'branch' in q:\n        time.sleep(600)\n    return ['git/git-stash.md']\n")
    monkeypatch.chdir(tmp_path)
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes", "expected": ["git/git-stash.md"]},
        {"id": "h02", "question": "delete a branch", "expected": ["git/git-branch.md"]},
    ])
    assert main(["eval", "--golden", str(golden), "--retriever", "stuck:search", "--timeout", "0.5", "--quiet", "--no-stats"]) == 3  # ran, with an error
    err = capsys.readouterr().err
    assert "question h02" in err and "timed out after 0.5 s" in err


def test_headline_leads_every_view_and_sets_the_k_misses_are_counted_at(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes away", "expected": ["git/git-stash.md"]},
        {"id": "h02", "question": "how do I delete a branch", "expected": ["git/git-branch.md"]},
        {"id": "h06", "question": "tuck my edits somewhere safe before switching branches", "expected": ["git/git-stash.md"]},
    ])
    out = tmp_path / "results.json"
    assert main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--k", "1,3", "--headline", "hit@3",
                 "--misses", "--json", str(out), "--quiet", "--no-stats"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(out.read_text())["headline"] == ["hit@3", "mrr", "ndcg@3"]
    rows = [line.split()[0] for line in printed.splitlines() if line.split() and line.split()[0] in ("hit@1", "hit@3", "mrr")]
    assert rows == ["hit@3", "mrr", "hit@1"]
    assert "miss(es) at k=3" in printed and "h06 (rank >100)" in printed


def test_the_json_carries_the_run_identity_configs_and_curves(tmp_path: Path, corpus: Path) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes away", "expected": ["git/git-stash.md"]},
    ])
    out = tmp_path / "results.json"
    assert main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--retriever", "bm25",
                 "--retriever", "bm25?stem=none", "--k", "1", "--depth", "20", "--chunk", "30:0",
                 "--json", str(out), "--quiet", "--no-stats"]) == 0
    data = json.loads(out.read_text())
    assert data["schema"] == 3 and data["statistics"] is None
    identity = data["identity"]
    assert re.fullmatch(r"[0-9a-f]{64}", identity["corpus_fingerprint"]) and identity["chunking"] == "30:0"
    assert identity["corpus_fingerprint"] == data["corpus"]["fingerprint"]
    assert identity["golden_fingerprint"] == data["golden"]["fingerprint"]
    assert identity["machine"]["cores"] == os.cpu_count()
    first, second = data["retrievers"]
    assert (first["config"]["spec"], first["config"]["depth"]) == ("bm25", 20)
    assert (second["config"]["spec"], second["config"]["options"]["stem"]) == ("bm25?stem=none", "none")
    assert all(len(curve) == 20 for curve in first["curves"].values())
    assert first["curves"]["hit"][0] == first["metrics"]["hit@1"]
    assert len(data["flips"]["bm25|bm25?stem=none"]["a_only"]) == 20


def test_a_question_judged_all_non_relevant_stays_answerable_from_a_golden_file(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_golden(tmp_path / "golden.jsonl", [
        {"id": "h01", "question": "stash my changes away", "expected": ["git/git-stash.md"]},
        {"id": "t01", "question": "how do I cook pasta", "intent": "answerable", "expected": {"cooking.md": 0}},
        {"id": "o01", "question": "best pizza in Naples", "expected": []},
    ])
    out = tmp_path / "results.json"
    assert main(["eval", "--corpus", str(corpus), "--golden", str(golden), "--k", "1", "--json", str(out),
                 "--quiet", "--no-stats"]) == 0
    assert "t01" in capsys.readouterr().err  # said once: nothing relevant can be found for it
    (bm25,) = json.loads(out.read_text())["retrievers"]
    assert (bm25["n_answerable"], bm25["n_off_topic"]) == (2, 1)
    t01 = {q["id"]: q for q in bm25["questions"]}["t01"]
    assert t01["off_topic"] is False and t01["nonrelevant"] == ["cooking.md"] and t01["expected"] == {}
    assert t01["metrics"]["hit@1"] == 0.0 and bm25["metrics"]["hit@1"] == 0.5
