"""The prompt that asks a model for one question: a template with `{title}` and `{passage}`.

The default (`data/default_prompt.txt`) is written in our own words: a question a learner would type into
a search box that the passage answers, in their own words rather than the title's or the headings', about
a problem or a task, one sentence under 25 words, the question only. `--prompt FILE` replaces it; a
template must contain `{passage}` and may contain `{title}` (other braces are kept as written).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.fingerprint import text_fingerprint

_MARKER = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+")
"""A list marker before the question: `- `, `* `, `1. `, `2) `."""
MAX_PASSAGE_CHARS = 6000
"""Longer passages are cut (with a marker) so one huge document cannot make one call cost a fortune."""


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template and where it came from."""

    text: str
    origin: str = "default"

    @property
    def hash(self) -> str:
        """sha256 of the template text (first 16 hex digits): recorded on every question it produced."""
        return text_fingerprint(self.text, length=16)

    def render(self, passage: Passage) -> str:
        """The prompt for one passage: the template with its title and (possibly cut) text filled in."""
        text = passage.text
        if len(text) > MAX_PASSAGE_CHARS:
            text = text[:MAX_PASSAGE_CHARS] + "\n[...]"
        title = passage.title or passage.doc_id
        # str.replace, not str.format: a template may hold other braces (JSON examples, code).
        return self.text.replace("{title}", title).replace("{passage}", text)


def default_prompt() -> PromptTemplate:
    text = resources.files("goldeval.synth").joinpath("data", "default_prompt.txt").read_text(encoding="utf-8")
    return PromptTemplate(text, "default")


def load_prompt(path: str | Path | None) -> PromptTemplate:
    """The template in `path`, or the default one when `path` is None."""
    if path is None:
        return default_prompt()
    path = Path(path)
    if not path.is_file():
        raise InputError("prompt template not found", path=path, hint="give a text file containing {passage}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("prompt template is not UTF-8 text", path=path, hint="save it as UTF-8") from None
    if "{passage}" not in text:
        raise InputError("prompt template has no {passage} field", path=path,
                         hint="write {passage} where the passage's text goes (and optionally {title})")
    return PromptTemplate(text, str(path))


def clean_reply(reply: str) -> str:
    """The question in a model's reply: its first non-empty line, without a `Question:` label, list
    marker or surrounding quotes, whitespace collapsed. Empty when the reply holds no text."""
    for line in reply.strip().splitlines():
        text = " ".join(line.split())
        for label in ("question:", "q:"):
            if text.lower().startswith(label):
                text = text[len(label):].strip()
        text = _MARKER.sub("", text)
        if len(text) >= 2 and text[0] in "\"'“‘`" and text[-1] in "\"'”’`":
            text = text[1:-1].strip()
        if text:
            return text
    return ""
