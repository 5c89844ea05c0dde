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
