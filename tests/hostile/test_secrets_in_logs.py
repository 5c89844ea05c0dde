"""Class: secrets and personal data in a production search log (issue 20). `golden suggest --from-log` masks
them before anything is embedded, printed or written: no planted secret reaches stdout, stderr or any file
the command writes, and no control character in a query reaches the terminal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile_cases import Outcome, assert_clean, assert_refused

PLANTED = {
    "an AWS secret key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "an AWS secret key by name": "AWS_SECRET_ACCESS_KEY=Zq3oTWHb9rW2Vn1sgq8pExAMpLe",
    "a Stripe key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "a short sk- key": "sk-abc123def456",
    "a password in words": "Tr0ub4dor&3",
    "an internationalised email": "jörg.müller@exämple.de",
    "a phone with an extension": "+1 555 201 3344 ext. 812",
    "a phone glued to words": "555-201-7788",
    "an IPv4 address": "10.20.30.40",
    "an IPv6 address": "2001:db8:85a3::8a2e:370:7334",
}
QUERIES = [
    f"aws login fails with {PLANTED['an AWS secret key']}", f"export {PLANTED['an AWS secret key by name']} not working",
    f"refund charge {PLANTED['a Stripe key']}", f"openai rejects {PLANTED['a short sk- key']}",
    f"my password is {PLANTED['a password in words']} please reset", f"contact {PLANTED['an internationalised email']}",
    f"call {PLANTED['a phone with an extension']} about the invoice", f"call{PLANTED['a phone glued to words']}now",
    f"server {PLANTED['an IPv4 address']} unreachable", f"host {PLANTED['an IPv6 address']} unreachable",
]


@pytest.mark.models
def test_golden_suggest_masks_every_planted_secret_everywhere(inputs: Path, cli: Callable[..., Outcome]) -> None:
    rows = [{"query": q, "time": f"2026-11-0{1 + i % 9}T10:00:00Z"} for i, q in enumerate(QUERIES * 2)]
    rows.append({"query": "undo \x1b[2Jmy last\u202e commit"})
    rows.append({"query": "undo \x1b[2Jmy last\u202e commit"})
    (inputs / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                          encoding="utf-8")
    outcome = cli("golden", "suggest", "--from-log", "queries.jsonl", "--golden", "golden.jsonl", "--out",
                  "candidates.jsonl", "--min-count", "2", "--covered", "1.01", "--limit", "50")
    assert_clean(outcome, 0)
    written = (inputs / "candidates.jsonl").read_text(encoding="utf-8")
    assert len(written.splitlines()) >= 5  # proposed: the check below reads real candidates
    everything = outcome.out + outcome.err + written
    for what, secret in PLANTED.items():
        assert secret not in everything, what
    for raw in ("\x1b", "\u202e"):
        assert raw not in outcome.out + outcome.err


HUGE = "1" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("case", "line", "says"), [
    ("a 5000-digit integer", '{"query": "a", "clicks": ' + HUGE + "}", "queries.jsonl:1: search log"),
    ("deeply nested JSON", '{"query": "a", "x": ' + DEEP + "}", "queries.jsonl:1: search log"),
], ids=["a 5000-digit integer", "deeply nested JSON"])
# `golden suggest` loads its embedding model (minilm, extra `dense`) before it reads the log
@pytest.mark.models
def test_a_log_line_json_cannot_hold_is_one_error_naming_its_line(inputs: Path, cli: Callable[..., Outcome],
                                                                   case: str, line: str, says: str) -> None:
    (inputs / "queries.jsonl").write_text(line + "\n", encoding="utf-8")
    assert_refused(cli("golden", "suggest", "--from-log", "queries.jsonl", "--golden", "golden.jsonl"), says)
