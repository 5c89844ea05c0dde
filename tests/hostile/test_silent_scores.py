"""Class 5: silent wrong scores. Whatever answers (a search function, a run file, a reranker, a Python
Retriever object), the same rules hold:

- ids the corpus does not have: a warning with counts and examples (unknown ids; `doc#N` ids that
  are not chunks of the corpus as indexed), recorded in the results' notes; `--strict` makes it exit 2;
- an id twice in one question's answer: refused (a run file is bad input, exit 2 naming the line; a
  search function's answer is that question's error, exit 3), never two ranks for one document;
- a NaN or infinite score: refused the same way, naming the question;
- a question whose retriever failed stays in the results, paired and flagged, and the command exits 3.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from hostile_cases import EVAL, QUESTIONS, Outcome, assert_clean, assert_refused

from goldeval.run import Run


def _run_file(folder: Path, lines: list[str]) -> str:
    (folder / "run.trec").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return "run:run.trec"


GOOD_LINES = [f"{q['id']} Q0 {q['expected'][0] if q['expected'] else 'cooking/bread.md'} 1 {9 - i}.5 mine"
              for i, q in enumerate(QUESTIONS)]

# (case, retriever or run-file lines, extra flags, exit code, what stderr says)
CASES: list[tuple[str, str | list[str], list[str], int, list[str]]] = [
    ("unknown ids from a function", "search:unknown", [], 0,
     ["retriever unknown returned 12 result id(s) on 6 question(s) that are not passages of the corpus",
      "6 unknown (e.g. `no/such/doc.md`)", "6 chunk ids of a corpus not split into chunks (e.g. `git/stash.md#99`)"]),
    ("unknown ids, strict", "search:unknown", ["--strict"], 2, ["not passages of the corpus", "drop --strict"]),
    ("chunk ids past the chunking", "search:unknown", ["--chunk", "200"], 0,
     ["chunk ids this chunking does not make (e.g. `git/stash.md#99`)"]),
    ("unknown ids from a run file", [*GOOD_LINES, "q1 Q0 ghost.md 2 0.5 mine"], [], 0,
     ["returned 1 result id(s) on 1 question(s) that are not passages", "`ghost.md`"]),
    ("repeated id from a function", "search:repeats", [], 3,
     ["id `git/stash.md` is returned twice (results 1 and 3)", "finished with retriever errors (exit 3)"]),
    ("repeated id in a run file", [*GOOD_LINES, "q1 Q0 git/stash.md 2 0.5 mine"], [], 2, ["run.trec", "git/stash.md"]),
    ("NaN from a function", "search:nan", [], 3, ["score nan of `git/stash.md` is not a finite number"]),
    ("inf from a function", "search:infinite", [], 3, ["score inf of `git/stash.md` is not a finite number"]),
    ("NaN in a run file", [*GOOD_LINES, "q2 Q0 cooking/pasta.md 2 nan mine"], [], 2, ["run.trec"]),
    ("inf in a run file", [*GOOD_LINES, "q3 Q0 cooking/pasta.md 2 inf mine"], [], 2,
     ["run.trec:7: question 'q3': the score of 'cooking/pasta.md' is inf, not a finite number"]),
    ("-inf in a run file", [*GOOD_LINES, "q4 Q0 git/stash.md 2 -inf mine"], [], 2,
     ["question 'q4': the score of 'git/stash.md' is -inf"]),
    ("NaN from a reranker", "rerank:bm25>search:score", [], 3,
     ["reranker search:score gave", "the score nan, not a finite number"]),
]


@pytest.mark.parametrize(("case", "answer", "flags", "code", "says"), CASES, ids=[row[0] for row in CASES])
def test_a_wrong_answer_is_never_scored_silently(inputs: Path, cli: Callable[..., Outcome], case: str,
                                                 answer: str | list[str], flags: list[str], code: int,
                                                 says: list[str]) -> None:
    spec = answer if isinstance(answer, str) else _run_file(inputs, answer)
    outcome = cli(*EVAL, "--retriever", spec, "--json", "results.json", *flags)
    if code == 2:
        assert_refused(outcome, *says)
        assert not (inputs / "results.json").exists()
        return
    assert_clean(outcome, code, *says)
    data = json.loads((inputs / "results.json").read_text(encoding="utf-8"))
    questions = data["retrievers"][0]["questions"]
    assert [q["id"] for q in questions] == [q["id"] for q in QUESTIONS]  # every question stays, in order
    if code == 3:  # failed questions are flagged and score 0, never dropped
        failed = [q for q in questions if q["error"]]
        assert failed and all(q["top"] == [] for q in failed)
        assert all(set(q["metrics"].values()) == {0.0} for q in failed if not q["off_topic"])
    else:
        assert any("not passages of the corpus" in note for note in data["notes"])


class NanRetriever:
    """A Retriever object of the user's that returns a NaN score for one question."""

    name = "object"

    def search(self, queries: Mapping[str, str], *, top_k: int) -> Run:
        run = Run(self.name)
        for qid in queries:
            run.results[qid] = [("git/stash.md", float("nan") if qid == "q2" else 1.0)]
        return run


def test_a_retriever_object_with_a_nan_score_fails_that_question_only(inputs: Path) -> None:
    from goldeval import evaluate
    from goldeval.corpus import load_corpus
    from goldeval.golden.io import load_golden

    card = evaluate(NanRetriever(), load_golden(inputs / "golden.jsonl"), corpus=load_corpus(inputs / "docs"))
    errors = {q.id: q.error for q in card.retrievers[0].questions if q.error}
    assert errors == {"q2": "the score of `git/stash.md` is nan, not a finite number"}


def test_failed_questions_stay_paired_in_compare(inputs: Path, cli: Callable[..., Outcome]) -> None:
    outcome = cli(*EVAL[:-1], "--retriever", "bm25", "--retriever", "search:nan", "--resamples", "200",
                  "--json", "results.json")
    assert_clean(outcome, 3)
    compared = cli("compare", "results.json", "--resamples", "200")
    assert_clean(compared, 0, "errored on 5 of 5 compared questions")
    assert "5 answerable questions" in compared.out  # paired on every question, none dropped
