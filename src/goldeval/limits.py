"""Every bound on what goldeval is given, declared once (issue 20): numbers from a user, files, replies.

A number a user types (`--k 1000000000` asked numpy for 67 GiB; `@99999999999999999999999` overflowed
SQLite; `depth = 1000000000` in a sweep file) is checked against its row of `NUMBERS` wherever it comes
from (a flag, a sweep file, the Python API): one `InputError` that names the value, the bounds and the
fix. What goldeval reads (input files, a search service's reply, a retriever's results) is bounded by the
constants below; `goldeval.corpus.files` (the one reader) and the retriever adapters use them, and
docs/reliability.md lists them all (tests/hostile/test_numbers.py holds the page to this table).
"""

from __future__ import annotations

from dataclasses import dataclass

from goldeval.errors import InputError

INPUT_BYTES = 2_000_000_000
"""An input file (golden set, qrels, topics, a log) past this is refused rather than read into memory."""
SETTINGS_FILE_BYTES = 1_000_000
"""A settings file (a sweep's TOML) past this is not a settings file."""
LINE_CHARS = 10_000_000
"""One line of a JSONL input (a golden question, a log entry, a version): 10 MB is far past any real one."""
NESTING = 64
"""Levels of nesting in one JSON value or TOML file: no goldeval file needs more than a handful, and a deeper
one (60 KB of `[`) would exhaust Python's recursion limit inside the parser."""
REPLY_BYTES = 10_000_000
"""One reply of a search service (`http:` retrievers), for one question: a top 10,000 with long ids fits."""


@dataclass(frozen=True)
class Limit:
    """The range a number must be in: `low <= value <= high` (`low < value` when `low_open`)."""

    name: str
    low: float
    high: float
    fix: str
    """What to write instead, e.g. `e.g. --k 1,5,10`."""
    whole: bool = True
    low_open: bool = False
    high_open: bool = False

    def check(self, value: object, *, what: str | None = None, **where: object) -> int | float:
        """`value` as a number within the bounds, or an InputError naming it, the bounds and the fix
        (`where` passes `path=` and `line=` on to the error)."""
        shown = what or self.name
        try:
            number = self._number(value)
        except (TypeError, ValueError, OverflowError):
            kind = "a whole number" if self.whole else "a number"
            raise InputError(f"{shown} must be {kind} {self.bounds()}, got {_shown(value)}", value=_shown(value),
                             hint=self.fix, **where) from None  # type: ignore[arg-type]
        too_low = number <= self.low if self.low_open else number < self.low
        too_high = number >= self.high if self.high_open else number > self.high
        if too_low or too_high or number != number:  # NaN is neither
            raise InputError(f"{shown} must be {self.bounds()}, got {_shown(number)}", value=_shown(number),
                             hint=self.fix, **where)  # type: ignore[arg-type]
        return number

    def _number(self, value: object) -> int | float:
        if isinstance(value, bool):
            raise ValueError("true/false is not a number")
        if not self.whole:
            return float(str(value).strip())
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError("not whole")
            return int(value)
        return int(str(value).strip().replace("_", ""))

    def bounds(self) -> str:
        """`between 1 and 10,000`, or `in [0.5, 1)` for a fraction."""
        if self.whole:
            return f"between {int(self.low):,} and {int(self.high):,}"
        return f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


NUMBERS: dict[str, Limit] = {limit.name: limit for limit in (
    Limit("k", 1, 10_000, "a cut-off is a rank a reader looks at, e.g. --k 1,5,10 (k = [1, 5, 10] in a sweep file)"),
    Limit("depth", 1, 10_000, "results per question; trec_eval's runs go to 1,000, e.g. --depth 100"),
    Limit("resamples", 100, 1_000_000, "10,000 (the default) gives intervals stable to about 0.005"),
    Limit("seed", 0, 2**32 - 1, "any whole number from 0, e.g. --seed 0"),
    Limit("confidence", 0.5, 1, "a fraction, e.g. confidence = 0.95", whole=False, high_open=True),
    Limit("run", 1, 2**63 - 1, "`goldeval history` lists the runs; e.g. @12, @last, @last~1"),
    Limit("back", 0, 2**63 - 1, "@last~N counts runs back from the newest; `goldeval history` lists them"),
    Limit("version", 1, 2**63 - 1, "`goldeval golden freeze` numbers them from 1 (GOLDEN.versions.jsonl lists each), e.g. --golden-version 3"),
    Limit("limit", 1, 100_000, "how many to list, e.g. --limit 20"),
    Limit("min-count", 1, 1_000_000_000, "how often a query must be searched to be proposed, e.g. --min-count 2"),
    Limit("max-cells", 1, 100_000, "configurations in one sweep, e.g. --max-cells 500"),
    Limit("workers", 1, 1024, "CPUs for the local Ray, e.g. --workers 4"),
    Limit("top", 1, 1_000_000, "rows to print, e.g. --top 10"),
    Limit("batch_size", 1, 4096, "texts or pairs per model call, e.g. batch_size=32 (unset: the model's own)"),
    Limit("threads", 1, 1024, "CPU threads for a model, e.g. threads=2 (unset: all cores)"),
    Limit("candidates", 1, 100_000, "HNSW candidates (expansion_add, expansion_search), e.g. 128"),
    Limit("timeout", 0, 86_400, "seconds per question, e.g. timeout=30 (--timeout 30)", whole=False, low_open=True),
    Limit("concurrency", 1, 256, "requests in flight at once, e.g. concurrency=4"),
    Limit("dimensions", 1, 65_536, "the vector size an embedding API returns, e.g. dimensions=512"),
    Limit("max_batch_tokens", 1, 10_000_000, "estimated tokens per embedding request, e.g. max_batch_tokens=100000"),
)}
"""Every number a user gives goldeval, by the name its flag and sweep key carry."""


def check_number(name: str, value: object, *, what: str | None = None, **where: object) -> int | float:
    """`NUMBERS[name].check(value)`: the one check every path calls."""
    return NUMBERS[name].check(value, what=what, **where)


def check_int(name: str, value: object, *, what: str | None = None, **where: object) -> int:
    """`check_number` for a whole number, typed as one."""
    return int(check_number(name, value, what=what, **where))


def number_type(name: str):  # type: ignore[no-untyped-def]
    """An argparse `type=` for the flag of `NUMBERS[name]`: a value out of bounds is argparse's one usage line
    (exit 2) with the bounds and the fix."""
    import argparse

    def parse(text: str) -> int | float:
        try:
            return check_number(name, text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(f"{exc.reason}; {exc.hint}") from None

    parse.__name__ = name  # argparse names the type in its own messages
    return parse
