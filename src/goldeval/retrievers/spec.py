"""Retriever spec options: `name?key=value&key=value`, e.g. `bm25?stem=none&k1=1.2`."""

from __future__ import annotations

from goldeval.errors import InputError


def split_options(spec: str) -> tuple[str, dict[str, str]]:
    """Split `body?k=v&k2=v2` into the body and its options (values stay strings)."""
    body, sep, query = spec.partition("?")
    options: dict[str, str] = {}
    if sep:
        for part in filter(None, query.split("&")):
            key, eq, value = part.partition("=")
            if not eq or not key:
                raise InputError(
                    f"cannot read option {part!r} in retriever spec {spec!r}",
                    value=spec,
                    hint="options look like bm25?stem=none&k1=1.2",
                )
            options[key.strip()] = value.strip()
    return body, options


def check_known(spec: str, options: dict[str, str], known: dict[str, str]) -> None:
    """Refuse unknown option names, listing the known ones with their meaning."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        listing = "; ".join(f"{k}: {v}" for k, v in known.items())
        raise InputError(f"unknown option(s) {', '.join(unknown)} in {spec!r}", value=spec, hint=listing)


def float_option(spec: str, options: dict[str, str], key: str, default: float) -> float:
    if key not in options:
        return default
    try:
        return float(options[key])
    except ValueError:
        raise InputError(f"option {key}={options[key]!r} in {spec!r} is not a number", value=options[key]) from None
