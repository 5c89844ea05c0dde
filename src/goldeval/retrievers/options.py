"""Retriever options: each retriever kind declares them as data, and one parser reads both forms.

    spec form:  bm25?k1=0.9&b=0.4       the options of that one retriever
    CLI form:   --option k1=0.9         (repeatable) every retriever of the run that declares k1

A spec's own value wins over `--option`, which wins over the declared default. Values are parsed
and checked once, here: an unknown key, a value of the wrong type, out of range, NaN or infinite,
or a choice not in the list raises InputError naming the valid keys and what each means (issue 8:
`--option k1=0.1` used to be ignored without a word). `Option.when` marks an option that only means
something under another option's value (`k` for `method=rrf`): given in a spec it is an error there,
given by `--option` it is left out for that retriever, and either way it resolves to None.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from goldeval.errors import InputError

OptionType = Literal["int", "float", "floats", "bool", "choice", "str", "path"]
"""`floats` is a comma-separated list of numbers (hybrid's `weights=0.2,0.8`)."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Option:
    """One declared option: its name, type, default, allowed values and a one-line meaning."""

    name: str
    type: OptionType
    help: str
    default: object = None
    """None: unset; `help` says what happens then (e.g. "the model's own batch size")."""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    """True: the value must be strictly above `low` (a timeout of 0 s means nothing)."""
    choices: tuple[str, ...] = ()
    when: tuple[str, str] | None = None
    """(other option, value): this option only applies when the other one has that value."""

    def parse(self, raw: object, *, where: str) -> object:
        """The typed value of `raw` (a string from a spec or the CLI, or a Python value)."""
        if isinstance(raw, str):
            raw = raw.strip()
            if raw == "":
                raise self._error(raw, where, "has no value")
        if self.type == "bool":
            return self._bool(raw, where)
        if self.type == "choice":
            return self._choice(raw, where)
        if self.type in ("str", "path"):
            return str(Path(str(raw)).expanduser()) if self.type == "path" else str(raw)
        if self.type == "floats":
            parts = raw.split(",") if isinstance(raw, str) else list(raw) if isinstance(raw, Iterable) else [raw]
            return [self._number(p, where) for p in parts]
        return self._number(raw, where)

    def _number(self, raw: object, where: str) -> int | float:
        whole = self.type == "int"
        try:
            if isinstance(raw, bool):
                raise ValueError
            value: int | float = int(str(raw).strip()) if whole else float(str(raw).strip())
        except ValueError:
            raise self._error(raw, where, "is not a whole number" if whole else "is not a number") from None
        if not math.isfinite(value):
            raise self._error(raw, where, "must be a finite number")
        too_low = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        if too_low or (self.high is not None and value > self.high):
            bounds = self.bounds()
            problem = f"is outside {bounds}" if bounds[0] in "[(" else f"must be {bounds}"
            raise self._error(value, where, problem, shown=_num(value))
        return value

    def _bool(self, raw: object, where: str) -> bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise self._error(raw, where, "is not true or false")

    def _choice(self, raw: object, where: str) -> str:
        text = str(raw).strip()
        for choice in self.choices:
            if text.lower() == choice.lower():
                return choice
        raise self._error(raw, where, f"is not one of {', '.join(self.choices)}")

    def _error(self, raw: object, where: str, problem: str, shown: str | None = None) -> InputError:
        shown = repr(raw) if shown is None else shown
        return InputError(f"option {self.name}={shown} {where} {problem}", value=raw, hint=self.describe())

    def bounds(self) -> str:
        """`[0, 1]`, `>= 0`, `> 0`, or `` when unbounded."""
        low, high = _num(self.low), _num(self.high)
        if self.low is not None and self.high is not None:
            return f"{'(' if self.low_open else '['}{low}, {high}]"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {low}"
        return f"<= {high}" if self.high is not None else ""

    def kind(self) -> str:
        """The type as a reader wants it: `float [0, 1]`, `english|none`, `int >= 1`."""
        if self.type == "choice":
            return "|".join(self.choices)
        bounds = self.bounds()
        name = {"floats": "numbers, comma-separated", "bool": "true|false"}.get(self.type, self.type)
        return f"{name} {bounds}" if bounds and self.type != "floats" else name

    def shown_default(self) -> str:
        if self.default is None:
            return "unset"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        return _num(self.default) if isinstance(self.default, (int, float)) else str(self.default)

    def describe(self) -> str:
        """`k1 (float >= 0, default 1.5): term saturation`, the line errors and docs show."""
        when = f", only with {self.when[0]}={self.when[1]}" if self.when else ""
        return f"{self.name} ({self.kind()}, default {self.shown_default()}{when}): {self.help}"

    def applies(self, values: Mapping[str, object]) -> bool:
        return self.when is None or values.get(self.when[0]) == self.when[1]


class Values(dict[str, object]):
    """Resolved option values (JSON-safe), with typed getters for the factories."""

    def number(self, key: str) -> float | None:
        value = self[key]
        return None if value is None else float(value)  # type: ignore[arg-type]  # parsed as int or float

    def whole(self, key: str) -> int | None:
        value = self[key]
        return None if value is None else int(value)  # type: ignore[call-overload]  # parsed as int

    def text(self, key: str) -> str | None:
        value = self[key]
        return None if value is None else str(value)

    def flag(self, key: str) -> bool:
        return bool(self[key])


@dataclass(frozen=True)
class OptionSet:
    """The options a retriever kind declares, in the order its docs list them."""

    kind: str
    usage: str
    """The spec grammar, e.g. `bm25[?k1=1.5&b=0.75]`, shown with the options."""
    options: tuple[Option, ...] = ()

    @property
    def names(self) -> list[str]:
        return [o.name for o in self.options]

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __getitem__(self, name: str) -> Option:
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(name)

    def listing(self) -> str:
        """Every key with its meaning, on one line, for error hints."""
        if not self.options:
            return f"{self.kind} takes no options"
        return f"{self.kind} takes " + "; ".join(o.describe() for o in self.options)

    def resolve(self, own: Mapping[str, str], shared: Mapping[str, object], *, spec: str) -> Values:
        """Every declared option's value, defaults included: the spec's own, else `shared`
        (`--option` and the CLI's flags), else the default; None where it does not apply."""
        self.check_known(own, spec=spec)
        values = Values()
        for option in self.options:
            if option.name in own:
                values[option.name] = option.parse(own[option.name], where=f"in {spec!r}")
            elif shared.get(option.name) is not None:
                values[option.name] = option.parse(shared[option.name], where=f"(--option, for {spec!r})")
            else:
                values[option.name] = option.default
        for option in self.options:
            if not option.applies(values):
                if option.name in own:
                    other, wanted = option.when or ("", "")
                    raise InputError(
                        f"option {option.name} is for {other}={wanted}, not {other}={values.get(other)} ({spec!r})",
                        value=spec, hint=option.describe(),
                    )
                values[option.name] = None
        return values

    def effective(self, values: Mapping[str, object]) -> dict[str, object]:
        """The options that apply, with their values (defaults included): what `config` records."""
        return {o.name: values.get(o.name, o.default) for o in self.options if o.applies(values)}

    def check_known(self, own: Mapping[str, object], *, spec: str) -> None:
        unknown = [key for key in own if key not in self]
        if unknown:
            near = difflib.get_close_matches(unknown[0], self.names, n=1, cutoff=0.5)
            guess = f"; did you mean {near[0]}?" if near else ""
            raise InputError(f"unknown option(s) {', '.join(unknown)} in {spec!r}{guess}", value=spec, hint=self.listing())

    def markdown(self) -> str:
        """The docs' table of these options (docs/retrieval.md is checked against it)."""
        rows = [f"**`{self.usage}`**", ""]
        if not self.options:
            return "\n".join([*rows, "No options."])
        rows += ["| option | type | default | meaning |", "| --- | --- | --- | --- |"]
        for o in self.options:
            when = f"; only with `{o.when[0]}={o.when[1]}`" if o.when else ""
            kind = ", ".join(f"`{c}`" for c in o.choices) if o.type == "choice" else o.kind()
            default = "unset" if o.default is None else f"`{o.shown_default()}`"
            rows.append(f"| `{o.name}` | {kind} | {default} | {o.help}{when} |")
        return "\n".join(rows)


def _num(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` outside parentheses; raises on unbalanced parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise InputError(f"unbalanced ')' in retriever spec {text!r}", value=text)
        if char == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise InputError(f"unbalanced '(' in retriever spec {text!r}", value=text)
    parts.append("".join(current))
    return parts


def unwrap(part: str) -> str:
    """`(bm25?k1=1.2)` -> `bm25?k1=1.2`; other parts are returned stripped."""
    part = part.strip()
    while part.startswith("(") and part.endswith(")") and len(split_top(part[1:-1], "\0")) == 1:
        part = part[1:-1].strip()
    return part


def split_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split `body?k=v&k2=v2` at the first `?` outside parentheses; values stay strings."""
    pieces = split_top(text, "?")
    options: dict[str, str] = {}
    for part in filter(None, "?".join(pieces[1:]).split("&")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise InputError(f"cannot read option {part!r} in retriever spec {text!r}", value=text,
                             hint="options look like bm25?stem=none&k1=1.2")
        if key in options:
            raise InputError(f"option {key} is given twice in {text!r}", value=text, hint="give each option once")
        options[key] = value.strip()
    return pieces[0], options


def parse_option_args(items: Sequence[str]) -> dict[str, str]:
    """The CLI's repeated `--option KEY=VALUE` as a dict; a key given twice is an error."""
    options: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise InputError(f"cannot read --option {item!r}", value=item, hint="write it as KEY=VALUE, e.g. --option k1=0.9")
        if key in options and options[key] != value.strip():
            raise InputError(f"--option {key} is given twice ({options[key]!r} and {value.strip()!r})", value=item,
                             hint="give each option once; a spec's own ?key=value sets it for one retriever")
        options[key] = value.strip()
    return options
