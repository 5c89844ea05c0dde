"""Repeated (topic, doc) pairs in a TREC file: trec_eval refuses them ("duplicate docs"), so does goldeval.

Candidates are rows with the same topic and doc id hash as an earlier row; each is then compared
byte for byte with it. numba finds them with one small hash table per topic when the file keeps each
topic's lines together (`kernels.repeated_pairs`); numpy sorts every (topic, doc) key otherwise.
"""

from __future__ import annotations

import numpy as np

from goldeval import jit
from goldeval.errors import InputError
from goldeval.trecio.fields import pair_keys, text
from goldeval.trecio.table import TrecTable


def duplicates(table: TrecTable) -> list[InputError]:
    """A problem for each later line repeating a (topic, doc) pair (trec_eval: "duplicate docs")."""
    if len(table) < 2:
        return []
    found = _candidates_compiled(table)
    first, later = _candidates_numpy(table) if found is None else found
    equal = table.same_docs(first, table, later)
    return [_duplicate(table, i, j) for i, j in zip(first[equal].tolist(), later[equal].tolist(), strict=True)]


def _candidates_compiled(table: TrecTable) -> tuple[np.ndarray, np.ndarray] | None:
    """(earlier row, later row) of equal topic and doc hash, by numba; None without numba (or when it is
    not loaded: see `jit.wanted`), or when a topic's rows are not together."""
    if not jit.wanted(0):  # numba if the reader loaded it (its file's bytes are counted there)
        return None
    from goldeval.trecio import kernels

    status, first, later = jit.compiled(kernels.repeated_pairs)(table.topic, table.doc_hash, len(table.topics))
    return None if status else (first, later)


def _candidates_numpy(table: TrecTable) -> tuple[np.ndarray, np.ndarray]:
    """(earlier row, later row) of equal (topic, doc hash) keys, by sorting the keys."""
    keys = pair_keys(table.doc_hash, table.topic)
    ordered = np.sort(keys)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(repeated):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    rows = np.flatnonzero(np.isin(keys, repeated))
    rows = rows[np.lexsort((rows, keys[rows]))]  # equal keys together, each group in file order
    first, later = rows[:-1], rows[1:]
    same = (keys[first] == keys[later]) & (table.topic[first] == table.topic[later])
    return first[same], later[same]


def _duplicate(table: TrecTable, first: int, later: int) -> InputError:
    doc = text(table.source, table.doc_start[later], table.doc_stop[later])
    topic, line, again = table.topics[table.topic[later]], table.line_at(first), table.line_at(later)
    if table.kind == "qrels":
        a, b = int(table.value[first]), int(table.value[later])
        detail = f" with different grades ({a} and {b})" if a != b else f" (also on line {line})"
        return InputError(f"`{doc}` is judged twice for topic `{topic}`{detail}", path=table.path, line=again,
                          value=doc, hint="keep one judgment per topic and document (trec_eval refuses duplicates)")
    return InputError(f"`{doc}` is retrieved twice for topic `{topic}` (also on line {line})", path=table.path,
                      line=again, value=doc, hint="keep one line per topic and document (trec_eval refuses duplicates)")
