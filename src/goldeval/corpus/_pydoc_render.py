"""Render standard-library modules to plain text with pydoc, in a child process.

Run by `goldeval.corpus.stdlib` as `python -P -c <this file's source>`, never imported by goldeval:
importing ~200 modules has side effects on the importing process (readline, signal handlers,
logging), and pydoc's text of `sys` shows the importing process's own state. A fresh child with a
fixed command line and PYTHONHASHSEED=0 renders the same text on every run (set reprs included).

Protocol: module names on stdin, one per line; on stdout one JSON object per line, in input order:
`{"id", "title", "text"}` for a rendered module, `{"id", "error"}` for one that did not import.
Anything the modules print while importing goes to stderr, so it cannot corrupt the protocol.
No goldeval imports here: this file runs as a standalone script.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pydoc
import re
import sys
import warnings

# Sections of pydoc's module page that are boilerplate or machine-specific (FILE is a local path).
_DROP_SECTIONS = {"MODULE REFERENCE", "FILE"}
# "Methods inherited from builtins.object:" blocks repeat the base class's docs in every subclass
# (they are most of `builtins` and `ast`); the base class has its own page.
_INHERITED = re.compile(
    r"^(?P<prefix>[ |]*\|  )(?:Methods|Class methods|Static methods|Readonly properties|Data descriptors|"
    r"Data and other attributes) inherited from [^\n]*:$"
)
# Memory addresses and library handles differ on every run; the corpus must not.
_TEXT = getattr(pydoc, "plaintext", None) or pydoc.TextDoc()  # plaintext: no bold overstrike
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+|(?<=, handle )[0-9a-fA-F]+")


def clean(text: str) -> str:
    """Plain text without overstrike, boilerplate sections, inherited-member blocks or addresses."""
    text = pydoc.plain(text)  # removes "X\bX" bold overstrike if a renderer added any
    lines = _drop_sections(text.splitlines())
    lines = _drop_inherited(lines)
    out = "\n".join(line.rstrip() for line in lines)
    return _ADDRESS.sub(_strip_address, out).strip() + "\n"


def _strip_address(match: re.Match[str]) -> str:
    return "" if match.group(0).startswith(" at ") else "..."


def _drop_sections(lines: list[str]) -> list[str]:
    out: list[str] = []
    skipping = False
    for index, line in enumerate(lines):
        if index == 0:  # pydoc's title line ("Help on module json:")
            continue
        if line and not line[0].isspace():  # a top-level section heading such as "FUNCTIONS"
            skipping = line.strip() in _DROP_SECTIONS
        if not skipping:
            out.append(line)
    return out


def _drop_inherited(lines: list[str]) -> list[str]:
    out: list[str] = []
    prefix: str | None = None
    separator: re.Pattern[str] | None = None
    for line in lines:
        if prefix is not None:
            assert separator is not None
            if line.startswith(prefix.rstrip()) and not separator.match(line):
                continue
            prefix = None
        match = _INHERITED.match(line)
        if match:
            prefix = match.group("prefix")
            separator = re.compile(re.escape(prefix) + r"-{10,}$")
            if out and separator.match(out[-1]):
                out.pop()
            continue
        out.append(line)
    return out


def render(name: str) -> dict[str, str]:
    """One module as a JSON-ready record; an import failure becomes an `error` record."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(name)
            text = pydoc.render_doc(module, renderer=_TEXT)
    except Exception as exc:  # any failure to import or render means "skip this module"
        return {"id": name, "error": f"{type(exc).__name__}: {exc}"}
    return {"id": name, "title": title_of(name, inspect.getdoc(module) or ""), "text": clean(text)}


def title_of(name: str, doc: str) -> str:
    """The docstring's first line, skipping a heading that only repeats the name (`ast`, `~~~`)."""
    for line in doc.splitlines():
        line = line.strip()
        if line and line != name and line.strip("~=-*#") and line.strip(" .") != name:
            return line
    return name


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # modules that print on import must not corrupt the protocol
    for raw in sys.stdin.read().splitlines():
        name = raw.strip()
        if name:
            out.write(json.dumps(render(name), ensure_ascii=False) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
