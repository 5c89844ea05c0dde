"""Embedding APIs through the real openai SDK, against the stand-in server (tests/api_standin.py), which
computes real vectors with the bundled `minilm`: the API model must rank exactly as the local one, retry 429
and 500 as the one rule says (counted at the server), fail in one line on a bad key, an unknown model, a
wrong dimension or a malformed reply, and never write the key anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

import goldeval
from api_standin import standin
from goldeval.errors import InputError
from goldeval.retrievers.encoders.api import ApiEncoder, ApiSettings, plan_batches
from sweep_fixtures import tiny_corpus, tiny_golden

pytestmark = [pytest.mark.api, pytest.mark.models]

KEY = "sk-standin-9f8e7d6c5b4a39281706"



def _eval(spec: str, workspace: Path, **options: object):  # type: ignore[no-untyped-def]
    return goldeval.evaluate(spec, tiny_golden(), corpus=tiny_corpus(), k=[1, 5, 10], workspace=workspace,
                             progress=False, cache=False, options=options or None)


def _rankings(card) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    return {q.id: [h.id for h in q.top] for q in card.retrievers[0].questions}


def test_an_openai_compatible_model_ranks_exactly_like_the_local_model_it_wraps(
        minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    local = _eval("dense:minilm?long=truncate", tmp_path / "local")
    with standin(minilm, key=KEY) as server:
        remote = _eval(f"dense:openai:minilm-standin?base_url={server.url}/v1", tmp_path / "remote")
    assert server.requests == 2  # 13 passages in one request, 15 questions in another (batch_size 256)
    assert all(h["authorization"] == f"Bearer {KEY}" for h in server.headers)
    assert _rankings(remote) == _rankings(local)
    assert remote.retrievers[0].metrics == local.retrievers[0].metrics
    api = remote.retrievers[0].config["api"]
    assert api["requests"] == 2 and api["retries"] == 0 and api["texts"] == 13 + 15
    texts = [t for body in server.bodies for t in body["input"]]
    assert api["tokens"] == sum(len(t.split()) + 1 for t in texts)  # the server's usage, not an estimate
    assert api["tokens_estimated"] == 0 and api["dollars"] is None  # no price for an unknown model


def test_429_with_retry_after_and_500_are_retried_and_counted(minilm, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with standin(minilm, key=KEY, script=[("429", 0), ("500", None), ("slow", 0.2)]) as server:
        card = _eval(f"dense:openai:minilm-standin?base_url={server.url}/v1", tmp_path)
    assert server.requests == 2 + 2  # the passages' request failed twice, then both went through
    assert card.retrievers[0].config["api"]["retries"] == 2
    assert card.retrievers[0].config["api"]["requests"] == 4


def test_ollama_is_the_same_path_at_ollamas_url(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert ApiEncoder("ollama:nomic-embed-text", ApiSettings()).base_url == "http://localhost:11434/v1"
    with standin(minilm) as server:
        card = _eval(f"dense:ollama:minilm?base_url={server.url}/v1", tmp_path)
    assert server.paths == ["/v1/embeddings", "/v1/embeddings"]
    assert card.retrievers[0].config["api"]["dollars"] == 0.0  # a local server: [provider.ollama] is free


@pytest.mark.parametrize(("script", "message"), [
    ([("404", None)], r"embedding API openai:minilm-standin at http://127\.0\.0\.1:\d+/v1: not found \(HTTP 404\)"),
    ([("malformed", None)], r"the reply (does not parse|is not an embeddings reply)"),
    ([("wrong_dim", None)], r"the reply's vectors have 383 dimensions where dimensions=384 was asked"),
])
def test_a_bad_reply_is_one_line(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script, message) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with standin(minilm, key=KEY, script=list(script)) as server, pytest.raises(InputError, match=message) as err:
        _eval(f"dense:openai:minilm-standin?base_url={server.url}/v1&dimensions=384", tmp_path)
    assert "\n" not in err.value.reason and KEY not in str(err.value)
    assert server.requests == 1  # none of these is retried


def test_a_refused_key_is_one_line_without_the_key(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WRONG_KEY", "sk-wrong-0123456789abcdef")
    with standin(minilm, key=KEY) as server, pytest.raises(InputError, match=r"refused the API key \(HTTP 401\)") as err:
        _eval(f"dense:openai:minilm-standin?base_url={server.url}/v1&key_env=WRONG_KEY", tmp_path)
    assert "sk-wrong-0123456789abcdef" not in f"{err.value} {err.value.hint}"
    assert "WRONG_KEY" in str(err.value.hint)
    assert server.requests == 1


def test_no_key_for_openai_itself_is_one_line_before_any_request(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InputError, match="needs an API key in the environment variable OPENAI_API_KEY"):
        _eval("dense:openai:text-embedding-3-small", tmp_path)


def test_api_options_are_for_api_models_only(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"base_url is for API models .* not 'minilm'"):
        _eval("dense:minilm?base_url=http://127.0.0.1:9/v1", tmp_path)


def test_requests_are_cut_by_count_and_by_estimated_tokens() -> None:
    texts = ["word " * 100] * 5 + ["short"] * 3  # 125 estimated tokens each, then 2
    assert plan_batches(texts, max_texts=4, max_tokens=10_000) == [(0, 4), (4, 8)]
    assert plan_batches(texts, max_texts=100, max_tokens=300) == [(0, 2), (2, 4), (4, 8)]
    assert plan_batches(["x" * 4000], max_texts=10, max_tokens=5) == [(0, 1)]  # alone, the server decides


def test_concurrency_keeps_a_few_requests_in_flight(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with standin(minilm, key=KEY) as server:
        card = _eval(f"dense:openai:minilm-standin?base_url={server.url}/v1&concurrency=3&batch_size=2", tmp_path)
    assert server.requests == 7 + 8  # ceil(13 / 2) + ceil(15 / 2)
    assert all(len(b["input"]) <= 2 for b in server.bodies)
    assert card.retrievers[0].config["model_api"] == {
        "api": "openai", "model": "minilm-standin", "base_url": f"{server.url}/v1", "dimensions": None,
        "key_env": "OPENAI_API_KEY"}
