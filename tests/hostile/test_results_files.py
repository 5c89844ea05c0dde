"""Class 4: results files are not trusted blindly by compare, report and serve.

Each row of BROKEN turns a good results file into a broken or edited one; every command that reads
results refuses it with one error naming the file (and the JSON path of the bad field), exit 2, and
writes nothing. `serve` shows the error of a file replaced by a broken one in the page, keeps the
last good results on screen, and never drops the connection.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_cases import Outcome, assert_clean, assert_refused

from hang_guard import HANG_GUARD

Edit = Callable[[dict[str, Any]], Any]


def _first_q(d: dict[str, Any]) -> dict[str, Any]:
    return next(q for q in d["retrievers"][0]["questions"] if not q["off_topic"])


def _set(path: str, value: Any) -> Edit:
    """An edit that sets the field at a dotted path (`retrievers.0.metrics.mrr`) to `value`."""

    def edit(data: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return data

    return edit


def _drop(path: str) -> Edit:
    def edit(data: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]
        return data

    return edit


def _mrr_everywhere(data: dict[str, Any]) -> dict[str, Any]:
    """mrr 7.5 on every question and in the mean: consistent with each other, impossible as an MRR."""
    r = data["retrievers"][0]
    for q in r["questions"]:
        if not q["off_topic"]:
            q["metrics"]["mrr"] = 7.5
    r["metrics"]["mrr"] = 7.5
    return data


def _flip_hit(data: dict[str, Any]) -> dict[str, Any]:
    """A question's hit@1 flipped, with its mean adjusted: the question's rank says otherwise."""
    r = data["retrievers"][0]
    answerable = [q for q in r["questions"] if not q["off_topic"]]
    answerable[0]["metrics"]["hit@1"] = 1.0 - answerable[0]["metrics"]["hit@1"]
    r["metrics"]["hit@1"] = sum(x["metrics"]["hit@1"] for x in answerable) / len(answerable)
    return data


def _repeat_question(data: dict[str, Any]) -> dict[str, Any]:
    r = data["retrievers"][0]
    r["questions"].append(dict(r["questions"][-1]))  # an off-topic question, so no mean changes
    return data


def _other_questions(data: dict[str, Any]) -> dict[str, Any]:
    data["retrievers"][1]["questions"][-1]["id"] = "q-elsewhere"
    return data


BROKEN: list[tuple[str, Edit | str, str]] = [
    # (case, edit of the parsed JSON or the whole new text, what the error says)
    ("truncated", "CUT", "not valid JSON"),
    ("empty file", "", "not valid JSON"),
    ("not JSON at all", "results of last week, see the wiki\n", "not valid JSON"),
    ("nested 100,000 deep", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("a JSON list", "[1, 2, 3]", "not a goldeval results file"),
    ("NaN literal", "NAN", "non-finite number NaN"),
    ("other schema", _set("schema", 99), "schema 99 is not one this goldeval reads"),
    ("schema as text", _set("schema", "2"), "schema '2' is not one this goldeval reads"),
    ("no retrievers", _drop("retrievers"), "no 'retrievers' list"),
    ("retrievers not a list", _set("retrievers", {"bm25": 1}), "retrievers: must be a list"),
    ("a retriever that is a number", _set("retrievers.0", 5), "retrievers[0]: must be an object"),
    ("missing questions", _drop("retrievers.0.questions"), "retrievers[0].questions: is missing"),
    ("questions null", _set("retrievers.0.questions", None), "retrievers[0].questions: is missing"),
    ("metrics null", _set("retrievers.0.metrics", None), "retrievers[0].metrics"),
    ("metrics a list", _set("retrievers.0.metrics", [0.5]), "retrievers[0].metrics: must be an object"),
    ("edited mean mrr 7.5", _set("retrievers.0.metrics.mrr", 7.5), "retrievers[0].metrics.mrr: is 7.5"),
    ("mrr 7.5 everywhere", _mrr_everywhere, "outside [0, 1]"),
    ("hit@1 flipped with its mean", _flip_hit, ".metrics.hit@1: is 0 but rank 1 gives 1"),
    ("rank as text", lambda d: (_first_q(d).__setitem__("rank", "1"), d)[1], ".rank: must be an integer"),
    ("score as text", lambda d: (_first_q(d)["top"][0].__setitem__("score", "high"), d)[1], "must be a finite number"),
    ("tags a string", lambda d: (_first_q(d).__setitem__("tags", "git"), d)[1], ".tags: must be a list"),
    ("question metrics null", lambda d: (_first_q(d).__setitem__("metrics", None), d)[1], "no value for"),
    ("cut-off 0", _set("k", [0, 5]), "k: cut-offs must be positive"),
    ("unknown level", _set("level", "page"), "level: must be doc or chunk"),
    ("unknown metric", _set("metric_names", ["nonsense@5"]), "unknown metric 'nonsense@5'"),
    ("question listed twice", _repeat_question, "is listed twice"),
    ("retrievers on other questions", _other_questions, "holds other questions than retrievers[0]"),
    ("golden path a number", _set("golden.path", 5), "golden.path: must be a string"),
    ("snippet a string", lambda d: (d["snippets"].__setitem__(next(iter(d["snippets"])), "text"), d)[1],
     "must be an object of strings"),
    ("statistics of the wrong shape", _set("statistics", {"comparison": 5}), "bad results file"),
    ("machine a number", _set("identity.machine", 5), "bad results file"),
    ("interval upside down", _set("retrievers.0.intervals.mrr", [0.9, 0.1]), "low 0.9 is above high 0.1"),
]


def _break(path: Path, edit: Edit | str) -> None:
    text = path.read_text(encoding="utf-8")
    if edit == "CUT":
        path.write_text(text[: len(text) // 2], encoding="utf-8")
    elif edit == "NAN":
        data = json.loads(text)
        path.write_text(json.dumps(data).replace('"mrr": ' + json.dumps(data["retrievers"][0]["metrics"]["mrr"]),
                                               '"mrr": NaN', 1), encoding="utf-8")
    elif isinstance(edit, str):
        path.write_text(edit, encoding="utf-8")
    else:
        path.write_text(json.dumps(edit(json.loads(text))), encoding="utf-8")


COMMANDS: dict[str, list[str]] = {
    "compare": ["compare", "results.json"],
    "compare two files": ["compare", "good.json", "results.json"],
    "report": ["report", "results.json", "--html", "page.html"],
    "serve": ["serve", "results.json", "--port", "0"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("case", "edit", "says"), BROKEN, ids=[row[0] for row in BROKEN])
def test_a_broken_results_file_is_one_error_naming_it(results: Path, cli: Callable[..., Outcome], command: str,
                                                      case: str, edit: Edit | str, says: str) -> None:
    (results.parent / "good.json").write_bytes(results.read_bytes())
    _break(results, edit)
    outcome = cli(*COMMANDS[command])
    assert_refused(outcome, "results.json", says)
    assert not (results.parent / "page.html").exists()


def test_the_good_file_itself_passes_every_command_but_serve(results: Path, cli: Callable[..., Outcome]) -> None:
    # the control: the catalogue's failures come from its edits, not from the file they start with
    (results.parent / "good.json").write_bytes(results.read_bytes())
    for name, args in COMMANDS.items():
        if name != "serve":
            assert_clean(cli(*args), 0)


def test_a_lone_surrogate_in_a_results_file_is_shown_escaped_never_a_crash(results: Path,
                                                                        cli: Callable[..., Outcome]) -> None:
    text = results.read_text(encoding="utf-8").replace('"stash my uncommitted changes"', '"stash \\ud800 changes"')
    results.write_text(text, encoding="utf-8")
    assert_clean(cli("report", "results.json", "--html", "page.html"), 0)
    assert "\\ud800" in (results.parent / "page.html").read_text(encoding="utf-8")


def test_serve_shows_a_replaced_broken_file_in_the_page_and_keeps_the_last_results(results: Path) -> None:
    from goldeval.web.app import make_server, start_in_thread
    from goldeval.web.live import ResultsFiles

    good = results.read_bytes()
    server = make_server(ResultsFiles([results]), port=0)
    start_in_thread(server)
    try:
        token = server.RequestHandlerClass.token  # type: ignore[attr-defined]  # as the page sends it
        shown = _files(server.url, token)
        for case, edit, says in BROKEN:
            _break(results, edit)
            error = json.loads(_get(server.url + "api/version", token))["error"] or ""
            assert "could not reload" in error and says in error, (case, error)
            assert _files(server.url, token) == shown  # the last good results stay on screen, over a live connection
            results.write_bytes(good)
            assert json.loads(_get(server.url + "api/version", token))["error"] is None, case
    finally:
        server.shutdown()
        server.server_close()


def _files(url: str, token: str) -> Any:
    return json.loads(_get(url + "api/results.json", token))["files"]


def _get(url: str, token: str) -> bytes:
    """The page's data at `url`, read as the page reads it: with the session token."""
    with urllib.request.urlopen(urllib.request.Request(url, headers={"X-Goldeval-Token": token}),
                                timeout=HANG_GUARD) as response:
        assert response.status == 200
        body: bytes = response.read()
        return body
