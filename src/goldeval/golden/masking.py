"""Mask strings that look like personal data or secrets before a search log's queries go anywhere.

Production queries carry what users paste: email addresses, phone numbers, IP addresses, API keys and
tokens, passwords, IBANs, card numbers. `mask` replaces each with a placeholder (`<key>`, `<email>`,
`<ip>`, `<iban>`, `<card>`, `<phone>`) before anything is embedded, clustered, written or printed, so a
proposed question never repeats one.

The patterns are data: `goldeval/data/masking.toml` lists them in the order they apply, each with the
check (in this module) that decides a match. The rules lean towards masking: a long digit run that is not
a card number is masked as a phone number, a long mixed letters-and-digits token as a key. IBANs are
recognised by their mod-97 check (ISO 13616), card numbers by the Luhn check or the usual 4-4-4-4
grouping; dates and numbers of fewer than 8 digits (versions, years, error codes) are kept.

Masking is linear in the length of the text: every pattern starts with a negative lookbehind of the
characters it repeats and repeats possessively, so a run is tried once from its start and never
backtracked into (issue 20: one 200 KB line of `a-a-a-...` took minutes with the earlier rules).
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources

PLACEHOLDERS = ("<key>", "<email>", "<ip>", "<iban>", "<card>", "<phone>")

Check = Callable[[str, "re.Match[str]", str], "str | None"]
"""(the text to replace, the whole match, the pattern's placeholder) -> the placeholder to write, or None to
keep the text."""


@dataclass(frozen=True)
class Pattern:
    """One row of masking.toml, compiled."""

    name: str
    placeholder: str
    regex: re.Pattern[str]
    check: Check | None = None


def mask(text: str) -> tuple[str, Counter[str]]:
    """The text with personal data and secrets replaced by placeholders, and how many of each kind."""
    counts: Counter[str] = Counter()
    for pattern in patterns():
        text = pattern.regex.sub(lambda m, p=pattern: _replace(m, p, counts), text)  # type: ignore[misc]
    return text, counts


def _replace(match: re.Match[str], pattern: Pattern, counts: Counter[str]) -> str:
    """The placeholder for a match its check accepts (only the `secret` group's span, where it has one)."""
    has_secret = "secret" in pattern.regex.groupindex
    value = match.group("secret") if has_secret else match.group(0)
    placeholder = pattern.placeholder if pattern.check is None else pattern.check(value, match, pattern.placeholder)
    if placeholder is None:
        return match.group(0)
    counts[placeholder] += 1
    if not has_secret:
        return placeholder
    whole, start = match.group(0), match.start()
    return whole[:match.start("secret") - start] + placeholder + whole[match.end("secret") - start:]


@cache
def patterns() -> tuple[Pattern, ...]:
    """masking.toml's patterns, compiled, in the order they apply."""
    text = resources.files("goldeval").joinpath("data", "masking.toml").read_text(encoding="utf-8")
    rows = tomllib.loads(text)["pattern"]
    return tuple(Pattern(row["name"], row["placeholder"],
                         re.compile(row["regex"], re.IGNORECASE if "i" in row.get("flags", "") else 0),
                         CHECKS[row["check"]] if "check" in row else None) for row in rows)


def _mixed(value: str, match: re.Match[str], placeholder: str) -> str | None:
    """Letters and digits both: a key, not a word (`sk-learn-tutorial` is kept)."""
    return placeholder if any(c.isdigit() for c in value) and any(c.isalpha() for c in value) else None


def _mixed_case(value: str, match: re.Match[str], placeholder: str) -> str | None:
    """Upper case, lower case and digits: base64 key material, not a word or a hex digest."""
    has = (any(c.isupper() for c in value), any(c.islower() for c in value), any(c.isdigit() for c in value))
    return placeholder if all(has) else None


def _not_a_word(value: str, match: re.Match[str], placeholder: str) -> str | None:
    """`password is hunter2` is a secret; `password is incorrect` is a complaint."""
    return placeholder if len(value) >= 12 or not value.isalpha() else None


def _ipv4(value: str, match: re.Match[str], placeholder: str) -> str | None:
    return placeholder if all(int(part) <= 255 for part in value.split(".")) else None


def _ipv6(value: str, match: re.Match[str], placeholder: str) -> str | None:
    """Two colons at least and a valid address (`10:30:00` is a time, `std::vector` never matches)."""
    if value.count(":") < 2:
        return None
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return None
    return placeholder


def _iban(value: str, match: re.Match[str], placeholder: str) -> str | None:
    """ISO 13616: move the first four characters to the end, letters to 10..35; the number mod 97 is 1."""
    raw = re.sub(r"[ -]", "", value).upper()
    if not 15 <= len(raw) <= 34:
        return None
    moved = raw[4:] + raw[:4]
    return placeholder if int("".join(str(int(c, 36)) for c in moved)) % 97 == 1 else None


_SECRET_NAME = re.compile(r"api[_-]?key|apikey|access[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|"
                          r"passwd|passphrase|pwd|private[_-]?key|credential", re.IGNORECASE)
"""Words in a name (`AWS_SECRET_ACCESS_KEY`, `client-secret`, `db_password`) that make its value a secret."""


def _secret_name(value: str, match: re.Match[str], placeholder: str) -> str | None:
    return placeholder if _SECRET_NAME.search(match.group("name")) else None


def _secret_name_not_a_word(value: str, match: re.Match[str], placeholder: str) -> str | None:
    return _secret_name(value, match, placeholder) and _not_a_word(value, match, placeholder)


_EXTENSION = re.compile(r"\s*(?:ext\.?|extension|x)\s*\d{1,6}$", re.IGNORECASE)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{1,2})?|\d{1,2}[./-]\d{1,2}[./-]\d{4}")


def _digits(value: str, match: re.Match[str], placeholder: str) -> str | None:
    """A digit run: a card number, a phone number (extension included), or kept (a date, fewer than 8 digits:
    a year, a version, an error code)."""
    main = _EXTENSION.sub("", value)
    digits = re.sub(r"\D", "", main)
    if len(digits) < 8 or _DATE.fullmatch(main.strip()):
        return None
    grouped = re.fullmatch(r"\d{4}([ -])\d{4}\1\d{4}\1\d{4}", main.strip())
    if main == value and 13 <= len(digits) <= 19 and (_luhn(digits) or grouped):
        return "<card>"
    return placeholder


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


CHECKS: dict[str, Check] = {"mixed": _mixed, "mixed_case": _mixed_case, "not_a_word": _not_a_word, "ipv4": _ipv4,
                            "ipv6": _ipv6, "iban": _iban, "digits": _digits, "secret_name": _secret_name,
                            "secret_name_not_a_word": _secret_name_not_a_word}
"""The checks masking.toml may name."""
