"""Content fingerprints: the one rule for turning what a value depends on into a stable hex digest.

Every content key, id and checksum goldeval makes (golden-set fingerprints and version digests, stored
runs and statistics, chunk and embedding caches, synthetic and log question ids, prompt hashes, pool ids,
model caches) is made here, so what a fingerprint covers is what its caller passes, and how it is
serialised is decided once:

- a **value** (`fingerprint`) is SHA-256 of its canonical JSON: keys sorted, no whitespace
  (`separators=(",", ":")`), non-ASCII kept as UTF-8 (`ensure_ascii=False`, lone surrogates passed
  through), tuples as lists, anything else JSON lacks (a Path, a datetime) as `str()`; a value of texts and
  integers only (`plain_fingerprint`: a golden set's) the same digest, its JSON written by orjson when installed;
- a **text** (`text_fingerprint`) is SHA-256 of its UTF-8 bytes: an id made of one string (a prompt
  template, a log query, a candidate's key) or the checksum of a file body; a **file**
  (`file_fingerprint`) is SHA-256 of its bytes, as `sha256sum` prints it, and raw bytes
  (`bytes_fingerprint`) likewise;
- a **long sequence** (`Fingerprinter`: a corpus, a folder of files) is fed record by record without being
  copied into one string: each record is its fields (texts as UTF-8, bytes as they are) joined by NUL and
  ended by 0x01.

`length` keeps the first hex digits (ids and file names use 6-16; 64, the default, is the whole digest).
Changing a serialisation here changes every persisted value that uses it: golden fingerprints and
question digests are compared across goldeval versions (see `goldeval.golden.versions`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from goldeval.errors import optional

_orjson = optional("orjson")  # the `fast` extra (`plain_fingerprint`)


def canonical_json(value: Any) -> str:
    """`value` as canonical JSON: sorted keys, no whitespace, UTF-8 kept, unknown types as `str()`. A value is
    a tree (one holding itself is a bug: RecursionError), so no container is looked up in a table of those
    seen (`check_circular`: half the time of a golden set's fingerprint at 100k questions, issue 23)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str,
                      check_circular=False)


def fingerprint(value: Any, *, length: int = 64) -> str:
    """SHA-256 hex digest of `canonical_json(value)` (its first `length` hex digits)."""
    return text_fingerprint(canonical_json(value), length=length)


def plain_fingerprint(value: Any, *, length: int = 64) -> str:
    """`fingerprint(value)` of a value made only of texts, integers, booleans, None, lists or tuples and objects
    with text keys (no float: orjson writes an exponent otherwise than repr), written by orjson where the
    `fast` extra installs it: a third of the json module's time (0.1 CPU s of a 100k-question golden set's
    fingerprint, issue 23). For such values orjson's bytes are `canonical_json`'s UTF-8 (keys sorted by code
    point, which UTF-8 keeps; the same escapes, tested over every code point); what it refuses (a lone
    surrogate, an integer past 64 bits, a key that is not text) goes the json module's way."""
    if _orjson is not None:
        try:
            return bytes_fingerprint(_orjson.dumps(value, option=_orjson.OPT_SORT_KEYS), length=length)
        except TypeError:  # orjson.JSONEncodeError
            pass
    return fingerprint(value, length=length)


def text_fingerprint(text: str, *, length: int = 64) -> str:
    """SHA-256 hex digest of the text's UTF-8 bytes (its first `length` hex digits)."""
    return bytes_fingerprint(_utf8(text), length=length)


def bytes_fingerprint(data: bytes | memoryview, *, length: int = 64) -> str:
    """SHA-256 hex digest of raw bytes: the checksum of a binary entry (an embedding cache's vectors)."""
    return hashlib.sha256(data).hexdigest()[:length]


def file_fingerprint(path: Path, *, length: int = 64) -> str:
    """SHA-256 hex digest of a file's bytes, streamed: what `sha256sum` prints for it."""
    digest = file_digest()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:length]


def file_digest() -> Any:
    """The running digest `file_fingerprint` takes of a file's bytes, for a reader that has them in pieces
    already (the TREC scanner's memory map): fed all of them in order, its `hexdigest()` is the file's."""
    return hashlib.sha256()


class Fingerprinter:
    """A fingerprint of a long sequence, fed as it is read (see the module docstring for the framing)."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def record(self, *fields: str | bytes) -> Fingerprinter:
        """Add one record: its fields joined by NUL, ended by 0x01."""
        self._digest.update(b"\x00".join(f if isinstance(f, bytes) else _utf8(f) for f in fields) + b"\x01")
        return self

    def value(self, value: Any) -> Fingerprinter:
        """Add one record holding `canonical_json(value)`."""
        return self.record(canonical_json(value))

    def hexdigest(self, *, length: int = 64) -> str:
        return self._digest.hexdigest()[:length]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
