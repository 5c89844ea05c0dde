"""Rerank APIs (Cohere-shaped and TEI-shaped `/rerank`) against the stand-in server, whose scores are the
bundled `minilm`'s cosine similarities: reranking through the API must rank as `rerank:bm25>dense:minilm`
(the same model, scored here), retry as the one rule says, and fail in one line (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest

import goldeval
from api_standin import standin
from goldeval.errors import InputError
from sweep_fixtures import tiny_corpus, tiny_golden

pytestmark = [pytest.mark.api, pytest.mark.models]

KEY = "sk-rerank-standin-77aa66bb55cc"



def _eval(spec: str, workspace: Path):  # type: ignore[no-untyped-def]
    return goldeval.evaluate(spec, tiny_golden(), corpus=tiny_corpus(), k=[1, 5, 10], workspace=workspace,
                             progress=False, cache=False)


def _rankings(card) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    return {q.id: [h.id for h in q.top] for q in card.retrievers[0].questions}


@pytest.mark.parametrize(("route", "shape"), [("/v1/rerank", "cohere"), ("/rerank", "tei")])
def test_a_rerank_api_ranks_like_the_model_behind_it(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     route: str, shape: str) -> None:
    monkeypatch.setenv("RERANK_KEY", KEY)
    local = _eval("rerank:bm25>dense:minilm?top=10", tmp_path / "local")
    with standin(minilm, key=KEY) as server:
        remote = _eval(f"rerank:bm25>api:minilm-rerank?url={server.url}{route}&format={shape}&key_env=RERANK_KEY"
                       "&top=10", tmp_path / "remote")
    asked = sum(1 for q in local.retrievers[0].questions if q.top)  # a question BM25 finds nothing for: none
    assert server.requests == asked  # one request per question
    assert all(set(body) == ({"query", "texts"} if shape == "tei" else {"model", "query", "documents", "top_n"})
               for body in server.bodies)
    assert _rankings(remote) == _rankings(local)
    assert remote.retrievers[0].metrics == local.retrievers[0].metrics
    api = remote.retrievers[0].config["reranker"]["api"]
    assert api["requests"] == server.requests and api["retries"] == 0
    assert api["tokens_estimated"] > 0 and api["tokens"] == 0  # neither shape reports tokens here: estimated


def test_rerank_retries_429_and_500_then_goes_on(minilm, tmp_path: Path) -> None:
    asked = sum(1 for q in _eval("bm25", tmp_path / "bm25").retrievers[0].questions if q.top)
    with standin(minilm, script=[("429", 0), ("500", None)]) as server:
        card = _eval(f"rerank:bm25>api:m?url={server.url}/rerank&format=tei&top=5", tmp_path)
    assert server.requests == asked + 2
    assert card.retrievers[0].config["reranker"]["api"]["retries"] == 2


def test_a_bad_rerank_key_or_reply_is_one_line(minilm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RERANK_KEY", "sk-wrong-rerank-000111")
    with standin(minilm, key=KEY) as server, pytest.raises(InputError, match=r"refused the API key \(HTTP 401\)") as err:
        _eval(f"rerank:bm25>api:m?url={server.url}/v1/rerank&key_env=RERANK_KEY", tmp_path)
    assert "sk-wrong-rerank-000111" not in str(err.value) and "\n" not in err.value.reason
    with standin(minilm, script=[("malformed", None)]) as server, \
            pytest.raises(InputError, match="the reply is not a cohere rerank reply"):
        _eval(f"rerank:bm25>api:m?url={server.url}/v1/rerank", tmp_path)


def test_the_api_options_are_for_an_api_reranker_only(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"url in .* is for a rerank API"):
        _eval("rerank:bm25>dense:minilm?url=http://127.0.0.1:9/rerank", tmp_path)
    with pytest.raises(InputError, match=r"needs a model and \?url="):
        _eval("rerank:bm25>api:rerank-v3.5", tmp_path)
