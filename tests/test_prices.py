"""The price table (goldeval/data/prices.toml) and the one dollars rule: list prices with their date and
sources in the file, a user's own table in the same format, and a model without a price shown as unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeval.errors import InputError
from goldeval.retrievers.usage import PRICES_FILE, ApiUsage, dollars, estimate_tokens, price_of


def test_the_bundled_table_says_when_and_where_its_prices_come_from() -> None:
    text = PRICES_FILE.read_text(encoding="utf-8")
    assert 'checked = "' in text and "https://openai.com/api/pricing/" in text
    # text-embedding-3-small is $0.02 per 1M tokens on OpenAI's page: 5M tokens are 10 cents
    assert dollars("openai:text-embedding-3-small", 5_000_000, 40) == pytest.approx(0.10)
    assert dollars("api:rerank-v3.5", 0, 1000) == pytest.approx(2.00)  # Cohere prices rerank per 1,000 searches
    assert dollars("ollama:nomic-embed-text", 10**9, 10**6) == 0.0  # a local server is free
    assert dollars("openai:no-such-model", 1000, 1) is None


def test_a_users_table_replaces_the_bundled_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "prices.toml"
    mine.write_text('[model."openai:text-embedding-3-small"]\nper_million_tokens = 0.01\n', encoding="utf-8")
    assert dollars("openai:text-embedding-3-small", 2_000_000, 1, prices=str(mine)) == pytest.approx(0.02)
    monkeypatch.setenv("GOLDEVAL_PRICES", str(mine))
    assert price_of("openai:text-embedding-3-small") is not None
    assert dollars("openai:text-embedding-3-large", 1, 1) is None  # not in the user's table
    bad = tmp_path / "bad.toml"
    bad.write_text('[model."x:y"]\nper_million_tokens = "cheap"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.toml: \[model\.\"x:y\"\] is not a table of numbers"):
        dollars("x:y", 1, 1, prices=str(bad))


def test_a_retried_request_is_not_billed_twice_and_tokens_are_estimated_at_4_bytes() -> None:
    usage = ApiUsage()
    usage.add(requests=3, retries=2, tokens=0, estimated=estimate_tokens("x" * 4000))
    record = usage.to_dict("api:rerank-v3.5")
    assert record["tokens_estimated"] == 1000 and record["requests"] == 3
    assert record["dollars"] == pytest.approx(2.00 / 1000)  # one search answered, at $2 per 1,000


def test_every_api_record_of_a_configuration_is_found_parts_base_and_reranker() -> None:
    from goldeval.retrievers.usage import api_records

    embed = {"model": "openai:a", "requests": 2}
    rerank = {"model": "api:r", "requests": 5}
    config = {"kind": "rerank", "base": {"kind": "hybrid", "parts": [{"kind": "bm25"}, {"kind": "dense", "api": embed}]},
              "reranker": {"kind": "rerank-api", "api": rerank}}
    assert api_records(config) == [{**embed, "role": "embedding"}, {**rerank, "role": "rerank"}]
    assert api_records({"kind": "bm25", "parts": "not a list", "reranker": None}) == []


def test_a_part_evaluated_on_its_own_too_is_marked_as_the_same_requests() -> None:
    """A hybrid's dense part evaluated on its own too: its requests were sent once, listed under both."""
    from goldeval.retrievers.usage import run_api_records, shared_note

    embed = {"model": "openai:a", "requests": 2}
    dense = {"spec": "dense:openai:a", "kind": "dense", "api": embed}
    hybrid = {"spec": "hybrid:bm25+dense:openai:a", "kind": "hybrid", "parts": [{"spec": "bm25", "kind": "bm25"}, dense]}
    reranked = {"spec": "rerank:hybrid:bm25+dense:openai:a>api:r", "kind": "rerank", "base": hybrid,
                "reranker": {"kind": "rerank-api", "api": {"model": "api:r", "requests": 5}}}
    found = run_api_records({"bm25": {"spec": "bm25"}, "dense:openai:a": dense, hybrid["spec"]: hybrid, reranked["spec"]: reranked})
    assert list(found) == ["dense:openai:a", hybrid["spec"], reranked["spec"]]  # bm25 called no API
    assert found["dense:openai:a"] == [{**embed, "role": "embedding"}]  # its own: not marked
    assert found[hybrid["spec"]] == [{**embed, "role": "embedding", "part": "dense:openai:a", "same_as": "dense:openai:a"}]
    assert [r.get("same_as") for r in found[reranked["spec"]]] == ["dense:openai:a", None]  # the innermost part
    assert shared_note(found[hybrid["spec"]][0]) == " (the same requests as dense:openai:a: sent once)"
    alone = run_api_records({hybrid["spec"]: hybrid})  # the part not evaluated on its own: its requests are the hybrid's
    assert "same_as" not in alone[hybrid["spec"]][0] and shared_note(alone[hybrid["spec"]][0]) == ""
