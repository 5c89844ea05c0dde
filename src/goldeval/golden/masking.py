"""Mask strings that look like personal data or secrets before a search log's queries go anywhere.

Production queries carry what users paste: email addresses, phone numbers, API keys and tokens, IBANs,
card numbers. `mask` replaces each with a placeholder (`<email>`, `<phone>`, `<key>`, `<iban>`,
`<card>`) before anything is embedded, clustered or written, so a proposed question never repeats one.
The rules lean towards masking: a long digit run that is not a card number is masked as a phone
number, a long mixed letters-and-digits token as a key. IBANs are recognised by their mod-97 check
(ISO 13616), card numbers by the Luhn check or the usual 4-4-4-4 grouping.
"""

from __future__ import annotations

import re
from collections import Counter

PLACEHOLDERS = ("<key>", "<email>", "<iban>", "<card>", "<phone>")

_KEY_PATTERNS = [
    re.compile(r"\b(?:sk|pk|rk)-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}"),  # OpenAI, Anthropic, Stripe
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),  # Google API key
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWT
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{12,}=*"),
    re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{32,}\b"),  # long mixed token
]
_ASSIGNED = re.compile(r"(?i)\b(api[_-]?key|apikey|access[_-]?token|token|secret|password|passwd|pwd)(\s*[=:]\s*)(\S{6,})")
"""`api_key: VALUE`, `password=VALUE`: the name stays, the value is masked."""
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_IBAN = re.compile(r"(?i)\b[a-z]{2}\d{2}(?:[ -]?[a-z0-9]{4}){2,7}(?:[ -]?[a-z0-9]{1,3})?\b")
_DIGIT_RUN = re.compile(r"(?<![\w+])(?:\+|00)?\d[\d \-().]{6,}\d(?!\w)")


def mask(text: str) -> tuple[str, Counter[str]]:
    """The text with personal data and secrets replaced by placeholders, and how many of each kind."""
    counts: Counter[str] = Counter()

    def sub(pattern: re.Pattern[str], placeholder: str, s: str, keep: object = None) -> str:
        def replace(m: re.Match[str]) -> str:
            if keep is not None and not keep(m.group(0)):  # type: ignore[operator]
                return m.group(0)
            counts[placeholder] += 1
            return placeholder

        return pattern.sub(replace, s)

    for pattern in _KEY_PATTERNS:
        text = sub(pattern, "<key>", text)

    def assigned(m: re.Match[str]) -> str:
        if m.group(3).startswith("<key>"):  # masked above already
            return m.group(0)
        counts["<key>"] += 1
        return m.group(1) + m.group(2) + "<key>"

    text = _ASSIGNED.sub(assigned, text)
    text = sub(_EMAIL, "<email>", text)
    text = sub(_IBAN, "<iban>", text, keep=_valid_iban)
    text = _DIGIT_RUN.sub(lambda m: _digits(m.group(0), counts), text)
    return text, counts


def _digits(run: str, counts: Counter[str]) -> str:
    """A digit run: a card number, a phone number, or (fewer than 8 digits: a year, a version) kept."""
    digits = re.sub(r"\D", "", run)
    if len(digits) < 8:
        return run
    if 13 <= len(digits) <= 19 and (_luhn(digits) or re.fullmatch(r"\d{4}([ -])\d{4}\1\d{4}\1\d{4}", run.strip())):
        counts["<card>"] += 1
        return "<card>"
    counts["<phone>"] += 1
    return "<phone>"


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _valid_iban(text: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to 10..35; the number mod 97 is 1."""
    raw = re.sub(r"[ -]", "", text).upper()
    if not 15 <= len(raw) <= 34:
        return False
    moved = raw[4:] + raw[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1
