"""Text from users and retrievers, made safe for what people read: the terminal and Markdown.

Questions, ids, tags, corpus file names and a retriever's error messages are data, and data may
hold anything: an ANSI escape that clears the screen, a bidi override that reverses a line, a lone
surrogate that crashes the encoder, or HTML that closes a `<details>` in a pull-request comment
(issue 9, class 7). They are neutralised here, once, for every renderer and warning:

- `clean` writes control characters (C0 but newline and tab when kept, DEL, C1), bidi controls,
  line separators and lone surrogates as visible escapes (`\\x1b`, `\\u202e`, `\\ud800`), so nothing
  reaches the terminal as a command and the reader still sees that something odd was there;
- `safe_console` is a rich Console that applies `clean` to every piece of text it prints (never to
  the styles rich adds itself), so a renderer cannot forget it;
- `tsv_row` joins cleaned fields with tabs (machine output that a tab or newline in the data cannot break);
- `warn` prints one cleaned, cut `goldeval: warning:` line (and `recording` keeps those a block said); `cut` keeps a long message to `limit`
  characters and says how much was left out;
- `keep_secret` registers a credential goldeval was given (a header value from the environment, a URL's
  password) and `redact` writes `***` for each one: the one redaction rule, applied by `clean` (so every
  terminal line, warning and Markdown cell), by the JSON writers (results, history, pool, compare, the page's
  data) and by the servers' answers, so a service that echoes a token in its error cannot put it anywhere;
- `md_text` and `md_code` put text into Markdown as text (HTML and Markdown syntax escaped) or as a
  code span that no backtick inside can close.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

MESSAGE_LIMIT = 500
"""Characters of an exception message kept in warnings and results (a 1 MB message is cut)."""

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_KEEP_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`\[])")
"""What could start markup that reaches past the text: a code span, a link or image, an escape."""
_HTML = {"&": "&amp;", "<": "&lt;"}
"""Without `<` no tag can open, and without a bare `&` no entity; `>` and quotes are then harmless."""


_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()
"""Credential values registered this process (and their JSON-escaped forms); never written anywhere."""
SHORTEST_SECRET = 4
"""Shorter values are not redacted: `***` for every `abc` in a results file would destroy it, and a
credential that short protects nothing."""


def keep_secret(value: str) -> None:
    """Register a credential: from now on `redact` (so `clean` and every JSON writer) writes `***` for it, for
    each of its space-separated parts (`Bearer TOKEN`: the token alone too) and for their JSON-escaped forms."""
    import json

    with _SECRETS_LOCK:
        for part in {value.strip(), *value.split()}:
            if len(part) >= SHORTEST_SECRET:
                _SECRETS.update((part, json.dumps(part, ensure_ascii=False)[1:-1], json.dumps(part)[1:-1]))


_URL_PASSWORD = re.compile(r"(?<![\w+.-])([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)([^@\s/]+)@")
"""`scheme://user:password@`: a password in a URL, whoever wrote it and whether or not it was registered."""
_SCHEME_MARK = re.compile("://")
"""What such a URL must hold, looked for first: the regex engine finds it in 100 MB in half the time of `in`
(issue 23: a results file of 220 MB, where every question's metrics hold an `@`)."""


def redact(text: str) -> str:
    """`text` with every registered credential and every password in a URL (`http://user:***@host`) written
    as `***`, the longest first (a token inside a header value is covered by the whole value)."""
    if "@" in text and _SCHEME_MARK.search(text) is not None:
        text = _URL_PASSWORD.sub(r"\1***@", text)
    if not _SECRETS:
        return text
    with _SECRETS_LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: object, *, limit: int | None = None, keep_newlines: bool = False) -> str:
    """`text` with every control character, bidi control and lone surrogate written as an escape."""
    text = redact(str(text))
    if limit is not None:
        text = cut(text, limit)
    pattern = _UNSAFE_KEEP_LINES if keep_newlines else _UNSAFE
    return pattern.sub(_escape, text)


def cut(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` up to `limit` characters, then how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


_RECORDERS: list[list[str]] = []


def warn(message: str) -> None:
    """Print `goldeval: warning: <message>` on stderr, cleaned (one line) and cut; a `recording` block
    keeps it too."""
    text = clean(message, limit=4 * MESSAGE_LIMIT)
    print(f"goldeval: warning: {text}", file=sys.stderr)
    for said in _RECORDERS:
        said.append(text)


@contextmanager
def recording() -> Iterator[list[str]]:
    """Every warning `warn` prints inside the block, also kept in the list it yields: what a result read
    back later (a stored run) says again, as computing it did."""
    said: list[str] = []
    _RECORDERS.append(said)
    try:
        yield said
    finally:
        _RECORDERS.remove(said)


def tsv_row(*fields: object) -> str:
    """One TSV row for the terminal or a pipe: each field cleaned, so a tab or newline inside a question
    stays inside its field (written `\\x09`, `\\x0a`) and no escape sequence reaches the terminal."""
    return "\t".join(clean(field) for field in fields)


def md_text(text: object, *, table: bool = False) -> str:
    """Text for a Markdown paragraph, one line: no HTML tag, entity, code span, link or image can start
    in it (emphasis may, which changes nothing but looks); `table=True` also escapes `|` for a table
    cell written by hand (a renderer's own cell helper may do that instead)."""
    shown = clean(str(text).replace("\r\n", " ").replace("\n", " "))
    shown = _MARKDOWN_SPECIAL.sub(r"\\\1", "".join(_HTML.get(c, c) for c in shown))
    return shown.replace("|", "\\|") if table else shown


def md_code(text: object, *, table: bool = False) -> str:
    """A Markdown code span showing `text` verbatim (cleaned), whatever backticks it holds.

    CommonMark closes a code span at a run of backticks as long as the one that opened it, so the
    fence is one longer than the longest run inside, with a space either side when the text starts
    or ends with a backtick. `table=True` escapes `|` (GitHub reads `\\|` as `|` even in a code span
    of a table cell, and would split the cell at a bare one).
    """
    shown = clean(str(text))
    shown = shown.replace("|", "\\|") if table else shown
    runs = [len(r) for r in re.findall(r"`+", shown)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def may_hold_surrogate(text: str) -> bool:
    """Whether JSON `text` could parse to a string holding a lone surrogate: only a `\\uD800`..`\\uDFFF`
    escape makes one (UTF-8 text decodes to none), so a file without such an escape needs no
    `lone_surrogate` walk per value (issue 23: that walk cost a third of loading a 10k-question set).
    A false alarm (an escaped backslash before `ud8`) only means the walk runs."""
    if not text.isascii() and _SURROGATE.search(text) is not None:  # an ASCII text holds none (and says so at once)
        return True
    return "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None  # no `\\u` at all: no escape (one pass)


def lone_surrogate(value: Any, where: str = "") -> str | None:
    """Where the first lone surrogate in a parsed JSON value is (`question`, `tags[2]`, with the
    character escaped), or None. JSON's `"\\ud800"` escape makes one; it is not Unicode text, and
    encoding it later (to the terminal, to a results file) fails, so inputs refuse it up front.
    Iterative, so a deeply nested value cannot exhaust the stack."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                return f"{at or 'text'} (\\u{ord(found.group(0)):04x} at character {found.start() + 1})"
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                stack.append((inner, f"{at}.{key}" if at else str(key)))
                stack.append((key, f"{at}.{key!s:.40}" if at else f"{key!s:.40}"))
        elif isinstance(item, list):
            stack.extend((inner, f"{at}[{i}]") for i, inner in reversed(list(enumerate(item))))
    return None


def safe_console(**kwargs: Any) -> Console:
    """A rich Console that cleans every piece of text it prints (newlines and tabs kept)."""
    return _safe_console_class()(**kwargs)


@cache
def _safe_console_class() -> type[Console]:
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """Cleans the text of each segment just before output; rich's own control sequences and styles
        are separate segments (or added after this step), so they pass unchanged."""

        def _render_buffer(self, buffer: Any) -> str:
            safe = [segment if segment.control else Segment(clean(segment.text, keep_newlines=True),
                                                            segment.style, segment.control)
                    for segment in buffer]
            return str(super()._render_buffer(safe))

        def on_broken_pipe(self) -> None:
            """rich exits with 1 when stdout's reader goes away (`| head`); 1 means a failed gate here,
            so the pipe error goes to the CLI's guard instead, which ends quietly (cli.guard)."""
            self.quiet = True
            raise BrokenPipeError

    return SafeConsole
