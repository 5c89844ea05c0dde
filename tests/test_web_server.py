"""The scorecard server: serves the page, its assets and the results, and nothing else."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import results_file, scorecard_dict  # noqa: F401 - fixtures
from goldeval.cli import main
from goldeval.errors import InputError
from goldeval.report.page import SCRIPTS, payload_json, results_payload, static_text
from goldeval.scorecard import Scorecard
from goldeval.web.app import make_server, start_in_thread
from goldeval.web.handler import CSP, TOKEN_HEADER
from hang_guard import HANG_GUARD


@pytest.fixture(scope="module")
def server(results_file: Path) -> Iterator[Any]:  # noqa: F811
    srv = make_server(results_payload([results_file]), port=0)
    thread = start_in_thread(srv)
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=HANG_GUARD)


def get(srv: Any, path: str, method: str = "GET", host_header: str | None = None,
        token: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """Send `path` byte for byte (http.client does not normalise it, unlike a browser), with the session
    `token` as the page's scripts send it, when given."""
    host, port = srv.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=HANG_GUARD)
    try:
        conn.putrequest(method, path, skip_host=host_header is not None, skip_accept_encoding=True)
        if host_header is not None:
            conn.putheader("Host", host_header)
        if token is not None:
            conn.putheader(TOKEN_HEADER, token)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def page_token(srv: Any) -> str:
    """The session token in the page's HTML, read as a browser gets it."""
    match = re.search(rb'<meta name="goldeval-token" content="([^"]+)">', get(srv, "/")[2])
    assert match, "the scorecard page carries the session token"
    return match.group(1).decode()


def data(srv: Any, path: str) -> bytes:
    """The page's data at `path` (under /api/), read as the page reads it: with its session token."""
    status, headers, body = get(srv, path, token=page_token(srv))
    assert status == 200 and headers["content-type"].startswith("application/json"), (path, status, body[:200])
    return body


def test_binds_localhost_by_default_and_picks_a_free_port(results_file: Path) -> None:  # noqa: F811
    srv = make_server(results_payload([results_file]), port=0)
    try:
        assert srv.server_address[0] == "127.0.0.1"
        assert srv.server_address[1] > 0
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", srv.url)
    finally:
        srv.server_close()


def test_serve_command_defaults_to_localhost() -> None:
    from goldeval.cli import build_parser

    args = build_parser().parse_args(["serve", "results.json"])
    assert args.host == "127.0.0.1"
    assert args.port == 8765


def test_serves_page_assets_and_results(server: Any, results_file: Path) -> None:  # noqa: F811
    status, headers, body = get(server, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b'<script src="app.js"></script>' in body
    assert headers["content-security-policy"] == CSP
    assert headers["x-content-type-options"] == "nosniff"
    for name in SCRIPTS:
        assert f'<script src="{name}"></script>'.encode() in body
    routes = [(f"/{name}", "text/javascript", name) for name in SCRIPTS] + [("/style.css", "text/css", "style.css")]
    for path, ctype, name in routes:
        status, headers, body = get(server, path)
        assert status == 200 and headers["content-type"].startswith(ctype)
        assert body.decode("utf-8") == static_text(name)
    status, headers, body = get(server, "/api/results.json?x=1", token=page_token(server))
    assert status == 200 and headers["content-type"].startswith("application/json")
    served = json.loads(body)
    assert [f["name"] for f in served["files"]] == ["results.json"]
    on_disk = json.loads(results_file.read_text(encoding="utf-8"))
    assert served["files"][0]["data"]["retrievers"][0]["metrics"] == on_disk["retrievers"][0]["metrics"]


def test_head_has_no_body_and_post_is_refused(server: Any) -> None:
    status, headers, body = get(server, "/app.js", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 1000
    status, _, _ = get(server, "/api/results.json", method="POST", token=page_token(server))
    assert status == 405  # a read-only route


@pytest.mark.parametrize("path", [
    "/nope", "/favicon.ico/", "/static/app.js", "/index.htm", "/app.js/", "/results.json/..",
    "/../pyproject.toml", "/../../../../etc/passwd", "/static/../../pyproject.toml",
    "/%2e%2e/%2e%2e/etc/passwd", "/%2E%2E%2Fpyproject.toml", "/..%2f..%2fetc%2fpasswd",
    "//etc/passwd", "/etc/passwd", "/C:/Windows/win.ini", "/..\\..\\pyproject.toml",
    "/app.js%00.html", "/./app.js", "http://127.0.0.1/../etc/passwd", "/src/goldeval/web/server.py",
    "/static/dom.js", "/report/static/data.js", "/DATA.JS",
])
def test_unknown_and_traversal_paths_are_404(server: Any, path: str) -> None:
    status, headers, body = get(server, path)
    assert status == 404
    assert json.loads(body) == {"error": "not found"}  # every error of every page server: one line of JSON
    assert headers["content-type"].startswith("application/json")


def test_other_host_names_are_refused_against_dns_rebinding(server: Any) -> None:
    port = server.server_address[1]
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", f"192.168.1.9:{port}"):
        status, _, body = get(server, "/api/results.json", host_header=host, token=page_token(server))
        assert status == 403 and b"unexpected Host header" in body, host
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", "localhost", f"[::1]:{port}"):
        status, _, _ = get(server, "/api/results.json", host_header=host, token=page_token(server))
        assert status == 200, host


def test_results_payload_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.json: results file not found"):
        results_payload([tmp_path / "missing.json"])
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(InputError, match=r"other\.json: not a goldeval results file"):
        results_payload([other])
    with pytest.raises(InputError, match="no results to show"):
        results_payload([])


def test_same_file_twice_gets_two_names(results_file: Path) -> None:  # noqa: F811
    payload = results_payload([results_file, results_file])
    assert [f["name"] for f in payload["files"]] == ["results.json", "results.json (2)"]


def test_payload_json_turns_nan_into_null_for_the_browser() -> None:
    text = payload_json({"a": float("nan"), "b": [float("inf"), 1.5]})
    assert json.loads(text) == {"a": None, "b": [None, 1.5]}


def test_busy_port_is_a_clear_error(server: Any, results_file: Path) -> None:  # noqa: F811
    with pytest.raises(InputError, match=r"cannot listen on 127\.0\.0\.1:\d+"):
        make_server(results_payload([results_file]), port=server.server_address[1])


def test_serve_without_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve"]) == 2
    assert "nothing to serve: no results file and no golden set" in capsys.readouterr().err


def test_serve_refuses_results_and_corpus_together(capsys: pytest.CaptureFixture[str], results_file: Path) -> None:  # noqa: F811
    assert main(["serve", str(results_file), "--corpus", "docs/", "--golden", "g.jsonl"]) == 2
    assert "either results files or --corpus/--golden" in capsys.readouterr().err


def test_serve_results_with_a_missing_golden_set_for_label_fixes_exits_2(capsys: pytest.CaptureFixture[str], results_file: Path) -> None:  # noqa: F811
    """`serve results.json --golden G` turns label fixes on; a G that is not there is bad input."""
    assert main(["serve", str(results_file), "--golden", "g.jsonl", "--port", "0"]) == 2
    assert "g.jsonl: golden set not found" in capsys.readouterr().err


def test_serve_evaluates_with_the_eval_options(tmp_path: Path) -> None:
    """`goldeval serve --corpus --golden --retriever` runs a real evaluation with eval's own options."""
    from goldeval.cli import build_parser
    from goldeval.cli.serve_cmd import payload_from_args

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "stash.md").write_text("# Stash\nPut uncommitted changes aside with git stash.\n", encoding="utf-8")
    (docs / "json.md").write_text("# JSON\nParse JSON strings with json.loads.\n", encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        '{"id": "a", "question": "put changes aside", "expected": ["stash.md"]}\n'
        '{"id": "b", "question": "parse a JSON string", "expected": ["json.md"]}\n'
        '{"id": "c", "question": "capital of France", "expected": []}\n',
        encoding="utf-8",
    )
    args = build_parser().parse_args([
        "serve", "--corpus", str(docs), "--golden", str(golden), "--retriever", "bm25", "--k", "1,2",
        "--workspace", str(tmp_path / "ws"), "--quiet", "--json", str(tmp_path / "saved.json"),
    ])
    payload = payload_from_args(args)
    data = payload["files"][0]["data"]  # type: ignore[index]
    assert data["k"] == [1, 2]
    bm25 = data["retrievers"][0]
    assert bm25["name"] == "bm25" and bm25["n_answerable"] == 2 and bm25["n_off_topic"] == 1
    assert bm25["metrics"]["hit@1"] == 1.0
    assert json.loads((tmp_path / "saved.json").read_text(encoding="utf-8"))["retrievers"][0]["metrics"]["hit@1"] == 1.0


def test_serve_cli_prints_the_address_and_serves(results_file: Path) -> None:  # noqa: F811
    proc = subprocess.Popen(
        [sys.executable, "-m", "goldeval", "serve", str(results_file), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        # the address is printed once the socket listens: no retries after sleeps (issue 17)
        conn = http.client.HTTPConnection("127.0.0.1", int(match.group(1)), timeout=HANG_GUARD)
        conn.request("GET", "/")
        page = conn.getresponse().read()
        token = re.search(rb'<meta name="goldeval-token" content="([^"]+)">', page)
        assert token, page[:300]
        conn.request("GET", "/api/results.json", headers={TOKEN_HEADER: token.group(1).decode()})
        response = conn.getresponse()
        assert response.status == 200
        assert json.loads(response.read())["files"][0]["name"] == "results.json"
    finally:
        proc.terminate()
        proc.wait(timeout=HANG_GUARD)


def test_results_files_are_reread_when_they_change(tmp_path: Path, scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    from goldeval.web.live import ResultsFiles

    path = tmp_path / "results.json"
    Scorecard.from_dict(scorecard_dict).save(path)
    source = ResultsFiles([path])
    srv = make_server(source, port=0)
    thread = start_in_thread(srv)
    try:
        assert json.loads(data(srv, "/api/version")) == {"version": "1", "error": None, "lifecycle": ""}
        assert json.loads(data(srv, "/api/results.json"))["version"] == "1"
        changed = json.loads(json.dumps(scorecard_dict))
        changed["retrievers"] = changed["retrievers"][:1]
        Scorecard.from_dict(changed).save(path)
        assert json.loads(data(srv, "/api/version")) == {"version": "2", "error": None, "lifecycle": ""}
        served = json.loads(data(srv, "/api/results.json"))
        assert [r["name"] for r in served["files"][0]["data"]["retrievers"]] == ["bm25"]
        path.write_text("{ broken", encoding="utf-8")
        info = json.loads(data(srv, "/api/version"))
        assert info["version"] == "2" and "could not reload the results" in info["error"] and "not valid JSON" in info["error"]
        assert json.loads(data(srv, "/api/results.json")) == served  # the last good results stay
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=HANG_GUARD)


def test_a_fixed_payload_has_a_fixed_version(results_file: Path) -> None:  # noqa: F811
    srv = make_server(results_payload([results_file]), port=0)
    thread = start_in_thread(srv)
    try:
        assert json.loads(data(srv, "/api/version")) == {"version": "fixed", "error": None, "lifecycle": ""}
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=HANG_GUARD)


GOLDSET_01 = Path(__file__).parent / "data" / "goldset-0.1-results.json"


def test_a_goldset_01_file_reaches_the_page_as_schema_2_with_what_the_page_looks_up() -> None:
    """goldset 0.1 wrote no curves, no flips and no ROC table; the page computes none, so Python adds them."""
    from goldeval.stats.offtopic import separability

    old = json.loads(GOLDSET_01.read_text(encoding="utf-8"))
    assert old["schema"] == 1 and "roc" not in old["off_topic"]["retrievers"]["bm25"]
    data = results_payload([GOLDSET_01])["files"][0]["data"]
    assert data["schema"] == 3 and data["headline"] and data["flips"]
    card = Scorecard.load(GOLDSET_01)
    for r, stored in zip(data["retrievers"], old["retrievers"], strict=True):
        assert len(r["curves"]["hit"]) == data["depth"] == old["depth"]
        n_hand, n_synthetic = r["n_headline"], r["synthetic"]["n"]
        assert (n_hand, n_synthetic) == (8, 1)  # the file pooled its synthetic question: taken apart (issue 18)
        for k in old["k"]:
            pooled = n_hand * r["curves"]["ndcg"][k - 1] + n_synthetic * r["synthetic"]["curves"]["ndcg"][k - 1]
            assert pooled / (n_hand + n_synthetic) == pytest.approx(stored["metrics"][f"ndcg@{k}"], abs=1e-12)
        entry = data["statistics"]["off_topic"]["retrievers"][r["name"]]
        assert entry["threshold"] == old["off_topic"]["retrievers"][r["name"]]["threshold"]  # the file's own verdict
        assert entry["roc"] == separability(card.retriever(r["name"]))["roc"]
        assert entry["threshold"] in entry["roc"]["thresholds"]
        # the table added is the headline's (issue 18): the file's 9 answerable less its synthetic one
        assert entry["roc"]["n_answerable"] == stored["n_answerable"] - n_synthetic == n_hand
        assert entry["roc"]["n_off_topic"] == stored["n_off_topic"]


def test_a_diagnosis_without_its_k_gets_goldset_01s_rule(scorecard_dict: dict[str, Any]) -> None:  # noqa: F811
    """goldset 0.1 diagnosed misses at the largest computed k without saying so: the page needs that k."""
    card = json.loads(json.dumps(scorecard_dict))
    q = next(q for r in card["retrievers"] for q in r["questions"] if q["diagnosis"])
    del q["diagnosis"]["k"]
    data = results_payload([card])["files"][0]["data"]
    got = next(x for r in data["retrievers"] for x in r["questions"] if x["id"] == q["id"] and x["diagnosis"])
    assert got["diagnosis"]["k"] == max(card["k"])
