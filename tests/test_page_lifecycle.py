"""The page's lifecycle data, without a browser: leakage and the synthetic gap prepared in Python, the
trend of the run history, label fixes through the server (and its checks), the offline report's
--history, the review of log candidates, and the one server (`goldeval.web.app`) holding the pool page alone."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import scorecard_dict  # noqa: F401 - fixture
from goldeval.cli import main
from goldeval.golden.changelog import read_changes
from goldeval.golden.io import load_golden
from goldeval.report.lifecycle import leakage_view, trend_view
from goldeval.report.page import results_payload
from goldeval.synth.leakage import FIGURES
from goldeval.synth.summary import LABELS, format_figure
from goldeval.web.app import make_server, start_in_thread
from hang_guard import HANG_GUARD
from lifecycle_fixtures import World, card_of, world  # noqa: F401 - fixture


def request(server: Any, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=HANG_GUARD)
    data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
    conn.request(method, path, body=data, headers=headers or {})
    response = conn.getresponse()
    out = response.status, response.read()
    conn.close()
    return out


@pytest.fixture()
def fix_server(world: World, tmp_path: Path) -> Iterator[tuple[Any, Path, str]]:  # noqa: F811
    """`goldeval serve results.json --golden G --workspace W` in a thread; yields (server, G, token)."""
    golden = world.golden_copy(tmp_path / "g")
    server = make_server(results_payload([world.results]), port=0, golden=golden, workspace=world.workspace, judge="ana")
    start_in_thread(server)
    page = request(server, "GET", "/")[1].decode()
    token = page.split('<meta name="goldeval-token" content="', 1)[1].split('"', 1)[0]
    yield server, golden, token
    server.shutdown()
    server.server_close()


def fix_headers(server: Any, token: str, **extra: str) -> dict[str, str]:
    host = f"127.0.0.1:{server.server_address[1]}"
    return {"Content-Type": "application/json", "X-Goldeval-Token": token, "Host": host, "Origin": f"http://{host}", **extra}


def a_miss(card: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A miss at k = 5 (of any retriever) and a passage retrieved for it that is not expected."""
    q = next(q for r in card["retrievers"] for q in r["questions"]
             if not q["off_topic"] and (q["rank"] is None or q["rank"] > 5) and q["top"])
    doc = next(d for h in q["top"] if (d := h.get("doc", h["id"])) not in q["expected"])
    return q, doc


def test_leakage_view_has_python_labels_order_and_formatting(world: World) -> None:  # noqa: F811
    card = card_of(world)
    view = leakage_view(card)
    assert view is not None
    sets = card["statistics"]["leakage"]["sets"]
    gap = card["statistics"]["leakage"]["gap"]
    assert view["kinds"] == ["synthetic", "hand"] and view["counts"] == {"synthetic": 5, "hand": 13}
    assert [r["figure"] for r in view["rows"]] == list(FIGURES)
    for row in view["rows"]:
        name = row["figure"]
        assert row["label"] == LABELS[name]
        assert row["values"] == {k: format_figure(name, sets[k][name]) for k in ("synthetic", "hand")}
        assert row["gap"] == format_figure(name, gap[name], signed=True)
    # the measured gap: hand and synthetic each over their own questions, from the breakdown
    by_source = card["statistics"]["breakdown"]["retrievers"]["bm25"]["by_source"]
    rows = {r["metric"]: r for r in view["metric_gap"]["bm25"]["rows"]}
    assert list(rows) == card["headline"]
    for metric, row in rows.items():
        hand, synthetic = by_source["hand"]["metrics"][metric], by_source["synthetic"]["metrics"][metric]
        assert (row["hand"], row["synthetic"]) == (f"{hand:.3f}", f"{synthetic:.3f}")
        assert row["gap"] == f"{(synthetic - hand) * 100:+.1f} pt"
    warned = {(w["retriever"], w["metric"]) for w in card["statistics"]["breakdown"]["warnings"]}
    assert {m for m, r in rows.items() if r["beyond_noise"]} == {m for n, m in warned if n == "bm25"}
    # the page payload carries it, and a set without synthetic questions has none
    payload = results_payload([world.results])
    assert payload["files"][0]["data"]["views"]["leakage"] == view


def test_no_leakage_view_without_synthetic_questions(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    assert leakage_view(scorecard_dict) is None
    assert "leakage" not in results_payload([scorecard_dict])["files"][0]["data"]["views"]


def test_trend_view_is_the_history_trend_on_the_frozen_version(world: World, tmp_path: Path) -> None:  # noqa: F811
    from goldeval.history.db import History
    from goldeval.history.trend import trend_payload

    view = trend_view(world.workspace, ["hit@5", "mrr"], version=1)
    assert view is not None and view["metrics"] == ["hit@5", "mrr"] and view["golden_version"] == 1
    expected = trend_payload(History.of(world.workspace), metric="mrr", version=1)
    mrr = view["trends"]["mrr"]
    assert [r["id"] for r in mrr["runs"]] == [r["id"] for r in expected["runs"]] == [1, 2]
    for name, points in expected["retrievers"].items():
        assert [(p["value"], p["low"], p["high"]) for p in mrr["retrievers"][name]] == \
            [(p["value"], p["low"], p["high"]) for p in points]
        assert mrr["retrievers"][name][0]["text"] == f"{points[0]['value']:.3f} ({points[0]['low']:.3f} to {points[0]['high']:.3f})"
    axis = mrr["axis"]
    values = [v for pts in expected["retrievers"].values() for p in pts for v in (p["value"], p["low"], p["high"])]
    assert axis["low"] <= min(values) and axis["high"] >= max(values)
    assert trend_view(world.workspace, ["mrr"], version=7)["golden_version"] == 1  # no run on 7: the newest frozen
    assert trend_view(tmp_path, ["mrr"]) is None  # no history in this workspace


def test_lifecycle_json_has_trend_and_fixes_and_version_follows_it(fix_server: tuple[Any, Path, str]) -> None:
    server, golden, token = fix_server
    status, body = request(server, "GET", "/api/lifecycle.json", headers=fix_headers(server, token))
    data = json.loads(body)
    assert status == 200 and data["trend"]["metrics"] == ["hit@5", "mrr", "ndcg@5"]
    assert data["fixes"] == {"enabled": True, "golden": "golden.jsonl", "path": str(golden), "judge": "ana", "done": [], "count": 0,
                             "changes": None}  # no changelog yet
    version = json.loads(request(server, "GET", "/api/version", headers=fix_headers(server, token))[1])["lifecycle"]
    assert version == data["version"] != ""


def test_a_fix_needs_the_token_this_origin_and_host_and_json(fix_server: tuple[Any, Path, str], world: World) -> None:  # noqa: F811
    server, golden, token = fix_server
    q, doc = a_miss(card_of(world))
    fix = {"action": "also_answers", "question": q["id"], "doc": doc, "reason": "it answers"}
    before = golden.read_bytes()
    refused = [
        (fix_headers(server, ""), 403), (fix_headers(server, "wrong"), 403),
        (fix_headers(server, token, Origin="http://evil.example"), 403),
        (fix_headers(server, token, Host="evil.example", Origin="http://evil.example"), 403),
        (fix_headers(server, token, **{"Content-Type": "text/plain"}), 415),
    ]
    for headers, status in refused:
        assert request(server, "POST", "/api/fix", fix, headers)[0] == status, headers
    assert request(server, "POST", "/api/results.json", fix, fix_headers(server, token))[0] == 405  # a read-only route
    bad = [
        {**fix, "reason": "  "}, {**fix, "question": "nope"}, {**fix, "doc": "python/never-retrieved.md"},
        {**fix, "grade": 7}, {**fix, "grade": True}, {**fix, "action": "delete_everything"}, ["not", "an", "object"],
        {**fix, "reason": "x" * 3000},
    ]
    for action in bad:
        status, body = request(server, "POST", "/api/fix", action, fix_headers(server, token))
        assert status == 400 and json.loads(body)["error"], action
    assert golden.read_bytes() == before and read_changes(golden) == []


def test_fixes_are_written_into_the_golden_set_and_its_changelog(fix_server: tuple[Any, Path, str], world: World) -> None:  # noqa: F811
    server, golden, token = fix_server
    card = card_of(world)
    q, doc = a_miss(card)
    status, body = request(server, "POST", "/api/fix", {"action": "also_answers", "question": q["id"], "doc": doc,
                                                         "grade": 2, "reason": "it answers too"}, fix_headers(server, token))
    assert status == 200
    fixes = json.loads(body)["fixes"]
    assert [(c["action"], c["question"], c["doc"], c["grade"], c["reason"], c["by"]) for c in fixes["done"]] == \
        [("also_answers", q["id"], doc, 2, "it answers too", "ana")]
    # the count the page header shows, as the changelog says it now (issue 18: it stayed stale)
    assert fixes["changes"]["text"] == "1 label fixed since version 1 (not frozen yet)"
    set_now = load_golden(golden)
    assert set_now.relevant(q["id"])[doc] == 2
    other = next(x for x in card["retrievers"][0]["questions"] if not x["off_topic"] and x["id"] != q["id"])
    wrong = next(iter(other["expected"]))
    assert request(server, "POST", "/api/fix", {"action": "wrong_expected", "question": other["id"], "doc": wrong,
                                                "reason": "that page is about something else"}, fix_headers(server, token))[0] == 200
    gap = next(x for x in card["retrievers"][0]["questions"] if not x["off_topic"] and x["id"] not in (q["id"], other["id"]))
    assert request(server, "POST", "/api/fix", {"action": "not_covered", "question": gap["id"], "reason": "no page on it"},
                   fix_headers(server, token))[0] == 200
    set_now = load_golden(golden)
    assert wrong not in set_now.relevant(other["id"]) and set_now.by_id()[gap["id"]].off_topic
    retrieved = {h.get("doc", h["id"]) for r in card["retrievers"] for x in r["questions"] if x["id"] == gap["id"] for h in x["top"]}
    assert retrieved and set_now.grades(gap["id"]) == dict.fromkeys(retrieved | set(gap["expected"]), 0)  # as pool does
    changes = [(c.action, c.question, c.reason) for c in read_changes(golden) if c.action != "judged"]
    assert changes == [("also_answers", q["id"], "it answers too"), ("wrong_expected", other["id"], "that page is about something else"),
                       ("not_covered", gap["id"], "no page on it")]
    judged = [(c.question, c.doc, c.grade) for c in read_changes(golden) if c.action == "judged"]
    assert sorted(judged) == sorted((gap["id"], d, 0) for d in retrieved - set(gap["expected"]))
    after = json.loads(request(server, "GET", "/api/lifecycle.json", headers=fix_headers(server, token))[1])["fixes"]
    assert after["count"] == 3 and after["changes"]["fixed"] == 3
    assert after["changes"]["text"].startswith("3 labels fixed, ") and after["changes"]["text"].endswith(
        " since version 1 (not frozen yet)")


def test_without_golden_the_page_reads_with_its_token_and_takes_no_fix(world: World) -> None:  # noqa: F811
    """Without --golden the page writes nothing, but its data is read with the token all the same (it used
    to carry none, and its data answered without one): the HTML always carries it."""
    server = make_server(results_payload([world.results]), port=0)
    start_in_thread(server)
    try:
        page = request(server, "GET", "/")[1].decode()
        assert "<!--goldeval:token-->" not in page and page.count('<meta name="goldeval-token" content="') == 1
        token = page.split('<meta name="goldeval-token" content="', 1)[1].split('"', 1)[0]
        assert token == server.RequestHandlerClass.token  # type: ignore[attr-defined]
        q, doc = a_miss(card_of(world))
        status, body = request(server, "POST", "/api/fix", {"action": "also_answers", "question": q["id"], "doc": doc,
                                                            "reason": "r"}, fix_headers(server, token))
        assert status == 404 and "label fixes are off" in json.loads(body)["error"]
        assert request(server, "GET", "/api/lifecycle.json")[0] == 403
        assert json.loads(request(server, "GET", "/api/lifecycle.json", headers=fix_headers(server, token))[1]) == {
            "version": "", "trend": None, "fixes": {"enabled": False}}
    finally:
        server.shutdown()
        server.server_close()


def test_report_history_inlines_the_trend(world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    out = tmp_path / "report.html"
    assert main(["report", str(world.results), "--html", str(out), "--history", "--workspace", str(world.workspace)]) == 0
    html = out.read_text(encoding="utf-8")
    data = json.loads(html.split('type="application/json">', 1)[1].split("</script>", 1)[0])
    assert data["lifecycle"]["trend"]["trends"]["mrr"]["runs"][1]["id"] == 2
    assert "<meta name=\"goldeval-token\"" not in html and "<!--goldeval:token-->" not in html
    assert main(["report", str(world.results), "--html", str(out), "--history", "--workspace", str(tmp_path / "none")]) == 2
    assert "no run history to show" in capsys.readouterr().err


def test_review_takes_candidates_from_a_search_log(tmp_path: Path) -> None:
    """`goldeval golden suggest` writes candidates with provenance `log` and no expected document: the
    review page opens them, refuses to accept one before a person adds its documents, then writes it."""
    from goldeval.errors import InputError
    from goldeval.synth.review import ReviewSession

    record = {"id": "log-8072d05dca", "question": "delete a remote tag", "expected": [], "intent": "answerable",
              "provenance": {"kind": "log", "log": "queries.jsonl", "count": 4, "status": "unreviewed"}}
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text(json.dumps(record) + "\n", encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    session = ReviewSession(candidates, golden, reviewer="ana")
    assert [i["id"] for i in session.payload()["items"]] == ["log-8072d05dca"]
    with pytest.raises(InputError, match="no expected document yet"):
        session.apply("log-8072d05dca", {"action": "accept"})
    session.apply("log-8072d05dca", {"action": "expected", "docs": ["git/git-push.md"]})
    session.apply("log-8072d05dca", {"action": "accept"})
    session.apply("log-8072d05dca", {"action": "edit", "question": "delete a tag on the remote"})  # saved again: no clash
    written = load_golden(golden)
    assert written.by_id()["log-8072d05dca"].source == "log" and written.relevant("log-8072d05dca") == {"git/git-push.md": 1}


def test_the_pool_page_alone_is_served_at_its_route_and_home_leads_there() -> None:
    import goldeval.web.pool as pool
    from goldeval.web.app import AppServer

    assert not [name for name in vars(pool) if name.startswith("_") and not name.startswith("__")]

    class Empty:
        def payload(self) -> dict[str, Any]:
            return {"items": []}

        def apply(self, item_id: str, action: Any) -> dict[str, Any]:
            return {}

    server = make_server(pool=Empty(), port=0)
    start_in_thread(server)
    try:
        assert isinstance(server, AppServer) and server.pages == ("pool",)
        assert server.page_url("pool") == server.url + "pool"
        page = request(server, "GET", "/pool")[1].decode()
        assert "pool.js" in page and "{{TOKEN}}" not in page
        assert request(server, "GET", "/review.js")[0] == 404  # only the pages it was given
        token = page.split('<meta name="goldeval-token" content="', 1)[1].split('"', 1)[0]
        assert request(server, "GET", "/api/results.json", headers=fix_headers(server, token))[0] == 404
        assert request(server, "GET", "/results.json")[0] == 404
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=HANG_GUARD)
        conn.request("GET", "/")
        home = conn.getresponse()
        assert (home.status, home.getheader("Location")) == (302, "/pool")
        conn.close()
    finally:
        server.shutdown()
        server.server_close()


def test_serve_takes_results_with_golden_judge_and_workspace() -> None:
    from goldeval.cli import build_parser

    args = build_parser().parse_args(["serve", "results.json", "--golden", "g.jsonl", "--by", "ana", "--workspace", "ws"])
    assert (args.golden, args.by, args.workspace) == (Path("g.jsonl"), "ana", Path("ws"))


def test_serve_leaves_fixes_off_for_a_golden_set_that_is_not_jsonl(capsys: pytest.CaptureFixture[str]) -> None:
    """Fixes rewrite the set as JSONL; a JSON list (or another format) is not silently converted."""
    from goldeval.cli.serve_cmd import fixes_golden

    assert fixes_golden(Path("golden.jsonl")) == Path("golden.jsonl") and fixes_golden(None) is None
    assert fixes_golden(Path("golden.json")) is None
    assert "label fixes from the page are off" in capsys.readouterr().err
