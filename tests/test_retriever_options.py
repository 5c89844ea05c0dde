"""Typed retriever options (issue 8): one parser, every kind's declaration, errors that list the
valid keys, options that really change what a retriever returns, and the CLI's `--option`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers import bm25, dense, function, hybrid, rerank, runfile
from goldeval.retrievers.base import BuildContext, build_retriever, check_run_options
from goldeval.retrievers.options import Option, OptionSet, parse_option_args, split_spec
from hang_guard import HANG_GUARD

# "kettle" five times in a long passage, once in a short one: length normalisation (b) decides.
TEXTS = {
    "long": "kettle kettle kettle kettle kettle boiling water in a big old copper pot on the stove for tea and coffee",
    "short": "kettle descaling",
    "other": "bread baking at home with sourdough",
}
PASSAGES = [Passage(pid, pid, text) for pid, text in TEXTS.items()]
KINDS = {"bm25": bm25, "dense": dense, "hybrid": hybrid, "rerank": rerank, "run": runfile, "function": function}


def search_fn(question: str, k: int) -> list[str]:
    """A user's search function (module level, so a spec can name it)."""
    return ["short", "long"][:k]


def slow_search(question: str, k: int) -> list[str]:
    time.sleep(600)  # far past any limit a test sets: cut off, never waited out (issue 17)
    return ["short"]


def by_length(query: str, texts: list[str]) -> list[float]:
    """A user's reranker: shorter texts first."""
    return [-float(len(t)) for t in texts]


def _ctx(tmp_path: Path, **options: object) -> BuildContext:
    return BuildContext(PASSAGES, workspace=tmp_path / "ws", options=dict(options))


def _top(retriever: object, query: str = "kettle", k: int = 3) -> list[tuple[str, float]]:
    return retriever.search({"q": query}, top_k=k).results["q"]  # type: ignore[attr-defined]


def _run_file(tmp_path: Path, name: str = "prod.trec") -> Path:
    path = tmp_path / name
    path.write_text("q Q0 short 1 2.0 prod\nq Q0 long 2 1.0 prod\n", encoding="utf-8")
    return path


# --- the one parser -------------------------------------------------------------------------------

def test_split_spec_reads_this_specs_options_and_leaves_parenthesised_parts_alone() -> None:
    assert split_spec("minilm?backend=ann&batch_size=8") == ("minilm", {"backend": "ann", "batch_size": "8"})
    assert split_spec("(bm25?k1=1)+bm25?method=norm") == ("(bm25?k1=1)+bm25", {"method": "norm"})
    assert split_spec("minilm") == ("minilm", {})
    with pytest.raises(InputError, match="cannot read option 'k1' in retriever spec"):
        split_spec("?k1")
    with pytest.raises(InputError, match="option k1 is given twice"):
        split_spec("?k1=1&k1=2")


def test_option_args_are_key_value_pairs() -> None:
    assert parse_option_args(["k1=0.9", " b = 0.3 ", "dsn=host=/tmp dbname=x"]) == {
        "k1": "0.9", "b": "0.3", "dsn": "host=/tmp dbname=x"}
    with pytest.raises(InputError, match="cannot read --option 'k1'.*\n.*KEY=VALUE"):
        parse_option_args(["k1"])
    with pytest.raises(InputError, match="--option k1 is given twice \\('1' and '2'\\)"):
        parse_option_args(["k1=1", "k1=2"])


@pytest.mark.parametrize(("option", "raw", "value"), [
    (Option("n", "int", "", low=1), "12", 12),
    (Option("x", "float", "", low=0.0, high=1.0), " 0.25 ", 0.25),
    (Option("x", "float", ""), 3, 3.0),
    (Option("w", "floats", "", low=0.0), "0.2,0.8", [0.2, 0.8]),
    (Option("f", "bool", ""), "Yes", True),
    (Option("f", "bool", ""), "off", False),
    (Option("f", "bool", ""), False, False),
    (Option("c", "choice", "", choices=("minmax", "zscore")), "ZScore", "zscore"),
    (Option("s", "str", ""), "host=/tmp dbname=x", "host=/tmp dbname=x"),
    (Option("p", "path", ""), "~/models", str(Path.home() / "models")),
])
def test_each_type_parses(option: Option, raw: object, value: object) -> None:
    assert option.parse(raw, where="in 'x'") == value


@pytest.mark.parametrize(("option", "raw", "message"), [
    (Option("n", "int", "", low=1), "2.5", "option n='2.5' in 'x' is not a whole number"),
    (Option("n", "int", "", low=1), True, "option n=True in 'x' is not a whole number"),
    (Option("n", "int", "", low=1), "0", "option n=0 in 'x' must be >= 1"),
    (Option("x", "float", "", low=0.0, high=1.0), "1.5", "option x=1.5 in 'x' is outside \\[0, 1\\]"),
    (Option("x", "float", "", low=0.0, low_open=True), "0", "option x=0 in 'x' must be > 0"),
    (Option("x", "float", ""), "nan", "option x='nan' in 'x' must be a finite number"),
    (Option("x", "float", ""), "-inf", "option x='-inf' in 'x' must be a finite number"),
    (Option("x", "float", ""), "fast", "option x='fast' in 'x' is not a number"),
    (Option("w", "floats", "", low=0.0), "0.5,nan", "option w='nan' in 'x' must be a finite number"),
    (Option("f", "bool", ""), "maybe", "option f='maybe' in 'x' is not true or false"),
    (Option("c", "choice", "", choices=("a", "b")), "c", "option c='c' in 'x' is not one of a, b"),
    (Option("s", "str", ""), " ", "option s='' in 'x' has no value"),
])
def test_bad_values_say_what_and_show_the_option(option: Option, raw: object, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        option.parse(raw, where="in 'x'")
    assert info.value.hint == option.describe()


# --- every kind: an unknown key lists the valid ones with their meaning --------------------------

def _typo_spec(kind: str, tmp_path: Path) -> str:
    return {
        "bm25": "bm25?typo=1", "dense": "dense:minilm?typo=1", "hybrid": "hybrid:bm25+bm25?typo=1",
        "rerank": f"rerank:bm25>{__name__}:by_length?typo=1", "run": f"run:{_run_file(tmp_path)}?typo=1",
        "function": f"{__name__}:search_fn?typo=1",
    }[kind]


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_unknown_key_lists_every_valid_key_with_its_meaning(kind: str, tmp_path: Path) -> None:
    spec = _typo_spec(kind, tmp_path)
    declared: OptionSet = KINDS[kind].OPTIONS
    with pytest.raises(InputError, match=r"unknown option\(s\) typo in '") as info:
        build_retriever(spec, _ctx(tmp_path))
    text = str(info.value)
    assert text.count("\n") == 1  # the message and one hint line
    for option in declared.options:
        assert f"{option.name} (" in text and option.help in text
    if not declared.options:
        assert "run takes no options" in text


def test_a_near_miss_is_named() -> None:
    with pytest.raises(InputError, match="unknown option\\(s\\) kl in 'bm25\\?kl=1'; did you mean k1\\?"):
        build_retriever("bm25?kl=1", BuildContext(PASSAGES))


@pytest.mark.parametrize(("spec", "message"), [
    ("bm25?k1=nan", "option k1='nan' in 'bm25\\?k1=nan' must be a finite number"),
    ("bm25?k1=-1", "option k1=-1 in .* must be >= 0"),
    ("bm25?b=1.5", "option b=1.5 in .* is outside \\[0, 1\\]"),
    ("bm25?stem=porter", "option stem='porter' in .* is not one of english, none"),
    ("dense:minilm?batch_size=0", r"option batch_size=0 in .* is outside \[1, 4096\]"),
    ("dense:minilm?batch_size=1000000000", r"option batch_size=1000000000 in .* is outside \[1, 4096\]"),
    ("dense:minilm?threads=100000", r"option threads=100000 in .* is outside \[1, 1024\]"),
    ("dense:minilm?threads=two", "option threads='two' in .* is not a whole number"),
    ("dense:minilm?backend=faiss", "option backend='faiss' in .* is not one of exact, ann, pgvector"),
    ("dense:minilm?hnsw=true", "option hnsw is for backend=pgvector, not backend=exact"),
    ("dense:minilm?backend=ann&connectivity=1", "option connectivity=1 in .* is outside \\[2, 1024\\]"),
    ("dense:minilm?backend=pgvector&ef_search=5000", "option ef_search=5000 in .* is outside \\[1, 1000\\]"),
    ("dense:minilm?backend=pgvector&hnsw=maybe", "option hnsw='maybe' in .* is not true or false"),
    ("hybrid:bm25+bm25?k=-1", "option k=-1 in .* must be >= 0"),
    ("hybrid:bm25+bm25?weights=0.5,inf", "option weights='inf' in .* must be a finite number"),
    ("hybrid:bm25+bm25?norm=zscore", "option norm is for method=norm, not method=rrf"),
    ("hybrid:bm25+bm25?depth=0", r"option depth=0 in .* is outside \[1, 10000\]"),
    (f"rerank:bm25>{__name__}:by_length?top=2.5", "option top='2.5' in .* is not a whole number"),
    (f"rerank:bm25>{__name__}:by_length?batch_size=-3", r"option batch_size=-3 in .* is outside \[1, 4096\]"),
    (f"{__name__}:search_fn?timeout=0", r"option timeout=0 in .* is outside \(0, 86400\]"),
    (f"{__name__}:search_fn?timeout=1e300", r"option timeout=1e\+300 in .* is outside \(0, 86400\]"),
    (f"{__name__}:search_fn?timeout=nan", "option timeout='nan' in .* must be a finite number"),
])
def test_bad_values_in_specs(spec: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=message):
        build_retriever(spec, _ctx(tmp_path))
    with pytest.raises(InputError, match=message):  # the same check, before anything is built
        check_run_options([spec], {}, [])


# --- options change what a retriever returns ------------------------------------------------------

def test_bm25_b_and_k1_change_scores_and_ranking_from_the_spec_and_from_option(tmp_path: Path) -> None:
    default = _top(build_retriever("bm25", _ctx(tmp_path)))
    assert [d for d, _ in default] == ["long", "short"]  # five "kettle"s beat a short passage
    full_norm = _top(build_retriever("bm25?b=1", _ctx(tmp_path)))
    assert [d for d, _ in full_norm] == ["short", "long"]  # full length normalisation: the short one wins
    assert _top(build_retriever("bm25", _ctx(tmp_path, b="1"))) == full_norm  # --option b=1
    once = _top(build_retriever("bm25?k1=0", _ctx(tmp_path)))
    assert once[0][1] == pytest.approx(once[1][1])  # k1=0: five occurrences count as one
    low = _top(build_retriever("bm25", _ctx(tmp_path, k1="0.1")))
    assert [s for _, s in low] != pytest.approx([s for _, s in default])
    # the spec's own value wins over --option
    assert _top(build_retriever("bm25?b=0.75", _ctx(tmp_path, b="1"))) == default


def test_bm25_stem_and_stopwords(tmp_path: Path) -> None:
    assert [d for d, _ in _top(build_retriever("bm25", _ctx(tmp_path)), "kettles")] == ["long", "short"]
    assert _top(build_retriever("bm25?stem=none", _ctx(tmp_path)), "kettles") == []
    assert _top(build_retriever("bm25", _ctx(tmp_path)), "the for") == []
    assert [d for d, _ in _top(build_retriever("bm25?stopwords=none", _ctx(tmp_path)), "the for")] == ["long"]


@pytest.mark.models
def test_dense_and_rerank_batch_size_threads_and_ann_options_reach_the_model_and_index(tmp_path: Path) -> None:
    from goldeval.retrievers.encoders.base import threads

    before = threads()
    retriever = build_retriever("dense:wordllama?batch_size=2&threads=1&backend=ann&connectivity=8"
                                "&expansion_search=20", _ctx(tmp_path))
    assert threads() == before  # the retriever's own option, not the process's
    assert isinstance(retriever, dense.DenseRetriever)
    assert retriever.encoder.batch_size == 2  # type: ignore[attr-defined]
    assert retriever.encoder.n_threads == 1  # type: ignore[attr-defined]
    assert retriever.config["options"]["threads"] == 1  # type: ignore[index]
    graph = retriever.index._index  # type: ignore[attr-defined]
    assert (graph.connectivity, graph.expansion_add, graph.expansion_search) == (8, 128, 20)
    assert retriever.config["options"] == {"backend": "ann", "batch_size": 2, "threads": 1, "connectivity": 8,
                                           "expansion_add": 128, "expansion_search": 20, "long": "max"}
    assert retriever.config["index"] == {"index": "AnnIndex"}
    # --option batch_size=3 reaches a dense retriever that does not set its own
    other = build_retriever("dense:wordllama", _ctx(tmp_path / "other", batch_size="3"))
    assert other.encoder.batch_size == 3  # type: ignore[attr-defined]
    reranker = build_retriever("rerank:bm25>dense:wordllama?batch_size=5", _ctx(tmp_path / "rerank"))
    assert reranker.scorer.encoder.batch_size == 5  # type: ignore[attr-defined]
    assert reranker.config["options"] == {"top": 50, "batch_size": 5}  # type: ignore[attr-defined]


def test_hybrid_options_reach_the_fusion(tmp_path: Path) -> None:
    from goldeval.retrievers.fusion import norm_fusion, rrf

    ctx = _ctx(tmp_path)
    parts = [build_retriever(s, ctx).search({"q": "kettle"}, top_k=100) for s in ("bm25", "bm25?b=1")]
    spec = "hybrid:bm25+(bm25?b=1)"
    assert _top(build_retriever(f"{spec}?k=10", ctx)) == rrf(parts, k=10).results["q"]
    assert _top(build_retriever(spec, _ctx(tmp_path, k="10"))) == rrf(parts, k=10).results["q"]  # --option k=10
    assert _top(build_retriever(spec, ctx)) == rrf(parts, k=60).results["q"]
    z = _top(build_retriever(f"{spec}?method=norm&norm=zscore&weights=0.2,0.8", ctx))
    assert z == norm_fusion(parts, norm="zscore", weights=[0.2, 0.8]).results["q"]
    weighted = _top(build_retriever(f"{spec}?method=norm&weight=0.9", ctx))
    assert [d for d, _ in weighted] == ["long", "short"]  # plain bm25's order, weighted 0.9
    assert [d for d, _ in _top(build_retriever(f"{spec}?method=norm&weight=0.1", ctx))] == ["short", "long"]
    shallow = build_retriever(f"{spec}?depth=1", ctx)
    shallow.search({"q": "kettle"}, top_k=3)
    assert [len(r.results["q"]) for r in shallow.last_runs] == [1, 1]  # type: ignore[attr-defined]


def test_rerank_top(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    assert [d for d, _ in _top(build_retriever("bm25", ctx))] == ["long", "short"]
    reranked = _top(build_retriever(f"rerank:bm25>{__name__}:by_length", ctx))
    assert [d for d, _ in reranked] == ["short", "long"]  # the shorter first
    one = _top(build_retriever(f"rerank:bm25>{__name__}:by_length?top=1", ctx))
    assert [d for d, _ in one] == ["long", "short"]  # re-scoring one result changes nothing
    flagged = _top(build_retriever(f"rerank:bm25>{__name__}:by_length", _ctx(tmp_path, top="1")))
    assert [d for d, _ in flagged] == ["long", "short"]  # --option top=1


def test_function_timeout_from_the_spec_and_from_the_cli_flag(tmp_path: Path) -> None:
    spec = f"{__name__}:slow_search?timeout=0.05"
    run = build_retriever(spec, _ctx(tmp_path)).search({"q": "kettle"}, top_k=1)
    assert run.errors == {"q": "timed out after 0.05 s (raise it with --timeout SECONDS)"}
    flagged = build_retriever(f"{__name__}:slow_search", _ctx(tmp_path, timeout=0.05))
    assert flagged.config["timeout"] == 0.05  # type: ignore[attr-defined]


def test_a_run_file_takes_no_options_but_a_path_with_a_question_mark_is_read_whole(tmp_path: Path) -> None:
    odd = _run_file(tmp_path, "prod?v=2.trec")
    retriever = build_retriever(f"run:{odd}", _ctx(tmp_path))
    assert [d for d, _ in _top(retriever)] == ["short", "long"]
    with pytest.raises(InputError, match="unknown option\\(s\\) v in .*\n  hint: run takes no options"):
        build_retriever(f"run:{tmp_path / 'prod.trec'}?v=2", _ctx(tmp_path))


# --- the run as a whole: every --option key must be taken by some retriever -----------------------

def test_an_option_no_retriever_of_the_run_declares_names_them_and_their_keys() -> None:
    specs = ["bm25", "dense:minilm", f"{__name__}:search_fn"]
    with pytest.raises(InputError, match="--option typo=1: no retriever in this run declares it") as info:
        check_run_options(specs, {"typo": "1"}, ["typo"])
    assert info.value.hint is not None and info.value.hint.startswith(
        f"bm25 takes stem, stopwords, k1, b; dense:minilm takes backend, batch_size, threads, long, precision; "
        f"{__name__}:search_fn takes timeout")  # not an API model's nor a hub model's


def test_an_option_no_model_of_the_run_takes_is_refused_naming_who_takes_it() -> None:
    """`--option precision=fp32` with only e5-small (one precision), `--option base_url=...` with only local
    models: refused before anything loads, as an option of another backend is; taken where one model uses it."""
    with pytest.raises(InputError, match="--option precision=fp32: precision is for models with int8 and float32 "
                                         r"variants \(minilm.*\), and dense:e5-small is not one"):
        check_run_options(["dense:e5-small", "bm25"], {"precision": "fp32"}, ["precision"])
    with pytest.raises(InputError, match=r"--option base_url=http://x/v1: base_url is for API models \(openai:, ollama:\), "
                                         "and dense:minilm, dense:e5-small are not"):
        check_run_options(["dense:minilm", "hybrid:bm25+dense:e5-small"], {"base_url": "http://x/v1"}, ["base_url"])
    check_run_options(["dense:minilm", "dense:e5-small"], {"precision": "fp32"}, ["precision"])  # minilm takes it
    check_run_options(["dense:openai:text-embedding-3-small", "dense:minilm"], {"base_url": "http://x/v1"}, ["base_url"])
    check_run_options(["dense:e5-small?precision=fp32"], {}, [])  # in the spec: the model itself refuses it, in one line


def test_a_model_is_given_only_the_run_wide_options_it_takes() -> None:
    from goldeval.retrievers.dense import api_values, left_out, precision_value

    values = {"precision": "fp32", "base_url": "http://x/v1", "timeout": 5.0}
    assert precision_value(values, "minilm") == "fp32" and precision_value(values, "e5-small") is None
    assert precision_value(values, "e5-small?precision=fp32") == "fp32"  # its own: passed on, and refused there
    assert api_values(values, "minilm") is None
    assert api_values(values, "openai:text-embedding-3-small") == {"base_url": "http://x/v1", "timeout": 5.0}
    assert "precision" in left_out("openai:text-embedding-3-small") and "precision" not in left_out("minilm")
    assert "query_prefix" in left_out("minilm") and "query_prefix" not in left_out("hf:BAAI/bge-small-en-v1.5")
    assert "query_prefix" not in left_out("minilm?query_prefix=x")  # its own: given, and the model refuses it
    with pytest.raises(InputError, match="--option trust_remote_code=true: trust_remote_code is for hub models"):
        check_run_options(["dense:minilm"], {"trust_remote_code": "true"}, ["trust_remote_code"])
    check_run_options(["dense:minilm", "dense:hf:BAAI/bge-small-en-v1.5"], {"query_prefix": "q:"}, ["query_prefix"])


def test_an_option_for_another_backend_or_method_is_refused() -> None:
    with pytest.raises(InputError, match="--option hnsw=true: hnsw is for backend=pgvector, and dense:minilm has "
                                         "backend=exact"):
        check_run_options(["dense:minilm"], {"hnsw": "true"}, ["hnsw"])
    check_run_options(["dense:minilm"], {"hnsw": "true", "backend": "pgvector"}, ["hnsw"])  # --index pgvector
    with pytest.raises(InputError, match="--option k=10: k is for method=rrf, and .* has method=norm"):
        check_run_options(["hybrid:bm25+bm25?method=norm"], {"k": "10"}, ["k"])
    with pytest.raises(InputError, match="option k1='fast' \\(--option, for 'bm25'\\) is not a number"):
        check_run_options(["bm25"], {"k1": "fast"}, ["k1"])


def test_an_option_goes_to_every_retriever_that_declares_it_and_a_spec_keeps_its_own(tmp_path: Path) -> None:
    check_run_options(["bm25", "hybrid:bm25+(bm25?b=1)"], {"b": "0.5"}, ["b"])
    fused = build_retriever("hybrid:bm25+(bm25?b=1)", _ctx(tmp_path, b="0.5"))
    assert [p.config["options"]["b"] for p in fused.parts] == [0.5, 1.0]  # type: ignore[attr-defined]


# --- the command line -----------------------------------------------------------------------------

@pytest.fixture
def eval_args(tmp_path: Path) -> list[str]:
    corpus, golden = tmp_path / "kettle.jsonl", tmp_path / "golden.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in TEXTS.items()), encoding="utf-8")
    golden.write_text(json.dumps({"id": "q", "question": "kettle", "expected": ["short"]}) + "\n", encoding="utf-8")
    return ["eval", "--corpus", str(corpus), "--golden", str(golden), "--quiet", "--no-stats",
            "--workspace", str(tmp_path / "ws")]


def test_cli_option_typo_exits_2_listing_the_valid_keys_without_a_traceback(eval_args: list[str]) -> None:
    for extra, expected in [
        (["--option", "typo=1"], "--option typo=1: no retriever in this run declares it"),
        (["--retriever", "bm25?typo=1"], "unknown option(s) typo in 'bm25?typo=1'"),
    ]:
        done = subprocess.run([sys.executable, "-m", "goldeval", *eval_args, *extra], capture_output=True,
                              text=True, timeout=HANG_GUARD)
        assert done.returncode == 2, done.stderr
        assert expected in done.stderr and "Traceback" not in done.stderr
        assert "k1" in done.stderr and "stopwords" in done.stderr


def test_cli_option_changes_the_results_and_the_results_record_it(eval_args: list[str], tmp_path: Path) -> None:
    plain, flagged = tmp_path / "plain.json", tmp_path / "flagged.json"
    assert main([*eval_args, "--json", str(plain)]) == 0
    assert main([*eval_args, "--option", "b=1", "--json", str(flagged)]) == 0
    (before,), (after,) = (json.loads(p.read_text())["retrievers"] for p in (plain, flagged))
    assert [h["id"] for h in before["questions"][0]["top"]] == ["long", "short"]
    assert [h["id"] for h in after["questions"][0]["top"]] == ["short", "long"]
    assert before["config"]["options"]["b"] == 0.75 and after["config"]["options"]["b"] == 1.0


@pytest.mark.parametrize(("extra", "message"), [
    (["--option", "k1=nan"], "option k1='nan' (--option, for 'bm25') must be a finite number"),
    (["--option", "k1"], "cannot read --option 'k1'"),
    (["--retriever", "dense:minilm", "--option", "hnsw=true"], "hnsw is for backend=pgvector, and dense:minilm has"),
    (["--retriever", "bm25", "--retriever", "dense:minilm", "--option", "connectivity=8"], "connectivity is for backend=ann"),
])
def test_cli_bad_option_values_exit_2(eval_args: list[str], extra: list[str], message: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*eval_args, *extra]) == 2
    assert message in capsys.readouterr().err
