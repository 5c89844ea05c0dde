"""What an API retriever used and what it costs: requests, tokens, seconds, and dollars from a price table.

Every API embedder and reranker (`encoders/api.py`, `rerank_api.py`) counts into one `ApiUsage`: requests
sent (retries included, since they are paid or at least rate-limited), tokens as the server's `usage` field
reports them (`tokens_estimated` counts those the server did not report, estimated by `estimate_tokens`),
and seconds spent waiting. Dollars are `price_of(model)` applied to that: the table is
`goldeval/data/prices.toml` (public list prices with their date and source pages), or the user's own file in
the same format (`GOLDEVAL_PRICES=FILE`, or the retriever option `prices=FILE`). One rule for every path: the
scorecard, the results JSON, `--dry-run` and the sweep's cost axis all call `dollars`.
"""

from __future__ import annotations

import math
import os
import threading
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from goldeval.errors import InputError

T = TypeVar("T")
PRICES_FILE = Path(__file__).resolve().parents[1] / "data" / "prices.toml"
CHARS_PER_TOKEN = 4
"""OpenAI's rule of thumb for English ("a token is about 4 characters"): the estimate where no tokenizer runs."""


def estimate_tokens(text: str) -> int:
    """Tokens a text is estimated to take where the server reports none (and for `--dry-run`): its UTF-8
    bytes over `CHARS_PER_TOKEN`, at least 1. Real tokenizers differ by model; the server's count wins."""
    return max(1, math.ceil(len(text.encode("utf-8")) / CHARS_PER_TOKEN))


@dataclass(frozen=True)
class Price:
    """A list price: dollars per 1M input tokens and/or per 1,000 requests (Cohere prices rerank by search)."""

    per_million_tokens: float = 0.0
    per_thousand_requests: float = 0.0
    source: str = ""

    def dollars(self, tokens: int, requests: int) -> float:
        return tokens * self.per_million_tokens / 1e6 + requests * self.per_thousand_requests / 1e3


@dataclass
class ApiUsage:
    """Counters of one API model in this process; thread-safe (requests run a few at a time)."""

    requests: int = 0
    tokens: int = 0
    tokens_estimated: int = 0
    texts: int = 0
    seconds: float = 0.0
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, *, requests: int = 0, tokens: int = 0, estimated: int = 0, texts: int = 0, seconds: float = 0.0,
            retries: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.tokens += tokens
            self.tokens_estimated += estimated
            self.texts += texts
            self.seconds += seconds
            self.retries += retries

    def metered(self, call: Callable[[], T]) -> Callable[[], T]:
        """`call`, counted: each try is a request (paid, or at least rate-limited) and its seconds."""
        def counted() -> T:
            start = time.perf_counter()
            try:
                return call()
            finally:
                self.add(requests=1, seconds=time.perf_counter() - start)
        return counted

    def count_tokens(self, reported: object, texts: Sequence[str], *, items: int) -> None:
        """The one rule for a request's tokens: the server's count where it reports one, else
        `estimate_tokens` of what was sent (`texts`), kept apart as estimated; `items` texts embedded or scored."""
        if isinstance(reported, int) and not isinstance(reported, bool) and reported > 0:
            self.add(tokens=reported, texts=items)
        else:
            self.add(estimated=sum(estimate_tokens(t) for t in texts), texts=items)

    def snapshot(self) -> ApiUsage:
        with self._lock:
            return ApiUsage(self.requests, self.tokens, self.tokens_estimated, self.texts, self.seconds, self.retries)

    def since(self, start: ApiUsage) -> ApiUsage:
        """What was used after `start` (a snapshot): one retriever's share of a model shared by several."""
        now = self.snapshot()
        return ApiUsage(now.requests - start.requests, now.tokens - start.tokens,
                        now.tokens_estimated - start.tokens_estimated, now.texts - start.texts,
                        now.seconds - start.seconds, now.retries - start.retries)

    def to_dict(self, model: str, prices: str | None = None) -> dict[str, object]:
        """The record results JSON keeps (`config["api"]`): counters, and dollars where the model has a price."""
        out: dict[str, object] = {"requests": self.requests, "tokens": self.tokens,
                                  "tokens_estimated": self.tokens_estimated, "texts": self.texts,
                                  "seconds": round(self.seconds, 3), "retries": self.retries}
        out["model"] = model
        # a retried request is not billed twice: per-request prices count the requests that were answered
        out["dollars"] = dollars(model, self.tokens + self.tokens_estimated, self.requests - self.retries,
                                 prices=prices)
        return out


def api_records(config: Mapping[str, object]) -> list[dict[str, object]]:
    """Every usage record (`ApiUsage.to_dict`) a retriever's resolved configuration holds, each with its
    `role` (`embedding` or `rerank`): its own `api`, those of its parts (a rerank's `base`, a hybrid's
    `parts`: each with the `part` whose model it is, the innermost spec), then its reranker's. The one walk
    the terminal, the Markdown report and the page go through (`run_api_records`)."""
    out: list[dict[str, object]] = []
    own = config.get("api")
    if isinstance(own, Mapping):
        out.append({**own, "role": "embedding"})
    parts = config.get("parts")
    for part in [config.get("base"), *(parts if isinstance(parts, list) else [])]:
        if isinstance(part, Mapping):
            spec = part.get("spec")
            out.extend(record if "part" in record or not isinstance(spec, str) else {**record, "part": spec}
                       for record in api_records(part))
    reranker = config.get("reranker")
    used = reranker.get("api") if isinstance(reranker, Mapping) else None
    if isinstance(used, Mapping):
        out.append({**used, "role": "rerank"})
    return out


def run_api_records(configs: Mapping[str, Mapping[str, object]]) -> dict[str, list[dict[str, object]]]:
    """`api_records` of each retriever of one run (name -> its resolved configuration), for those that called an
    API. A record of a part that is itself one of the run's retrievers (a hybrid's `dense:openai:...` evaluated on
    its own too) says so in `same_as`: the part's requests were sent once, listed under both, so the rows of
    a run's cost table add up to more than it paid. The one rule the terminal, the Markdown report and the page
    show it by."""
    out = {}
    for name, config in configs.items():
        records = [{**r, "same_as": r["part"]} if r.get("part") in configs and r.get("part") != name else r
                   for r in api_records(config)]
        if records:
            out[name] = records
    return out


def shared_note(record: Mapping[str, object]) -> str:
    """` (the same requests as NAME: sent once)` for a record `run_api_records` marked as another
    retriever of the run; empty otherwise."""
    return f" (the same requests as {record['same_as']}: sent once)" if record.get("same_as") else ""


def price_table(path: str | Path | None = None) -> dict[str, Price]:
    """Prices by model (`openai:text-embedding-3-small`) and by provider (`provider:ollama`), from `path`,
    else $GOLDEVAL_PRICES, else the bundled table."""
    chosen = Path(path or os.environ.get("GOLDEVAL_PRICES") or PRICES_FILE).expanduser()
    try:
        data = tomllib.loads(chosen.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"price table {chosen} does not exist", path=chosen,
                         hint="write one in the format of goldeval/data/prices.toml, or unset GOLDEVAL_PRICES") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"price table {chosen} is not TOML: {exc}", path=chosen,
                         hint="see goldeval/data/prices.toml for the format") from None
    out: dict[str, Price] = {}
    for section, prefix in (("model", ""), ("provider", "provider:")):
        for name, entry in (data.get(section) or {}).items():
            try:
                out[prefix + name] = Price(float(entry.get("per_million_tokens", 0.0)),
                                           float(entry.get("per_thousand_requests", 0.0)), str(chosen))
            except (AttributeError, TypeError, ValueError):
                raise InputError(f"price table {chosen}: [{section}.\"{name}\"] is not a table of numbers",
                                 path=chosen, value=name, hint="e.g. per_million_tokens = 0.02") from None
    return out


def price_of(model: str, *, prices: str | None = None) -> Price | None:
    """The price of `model` (`PROVIDER:NAME`): its own entry, else its provider's, else None (unknown)."""
    table = price_table(prices)
    return table.get(model) or table.get("provider:" + model.partition(":")[0])


def dollars(model: str, tokens: int, requests: int, *, prices: str | None = None) -> float | None:
    """What `tokens` and `requests` of `model` cost at list price; None when the table has no price for it."""
    price = price_of(model, prices=prices)
    return None if price is None else round(price.dollars(tokens, requests), 6)
