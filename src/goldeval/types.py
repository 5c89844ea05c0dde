"""Type aliases shared across goldeval."""

from __future__ import annotations

from collections.abc import Mapping

from goldeval._lazy import exports

DocId = str
"""A document id: for a folder corpus, the path relative to the folder with `/` separators."""

PassageId = str
"""The id of a retrievable unit: a document id, or a chunk id such as `library/json.rst.txt#3`."""

QuestionId = str
"""A golden question's id, unique within its golden set."""

QrelsDict = Mapping[QuestionId, Mapping[DocId, int]]
"""Graded judgments as plain dicts: question id -> {doc id: relevance} (the noun is `goldeval.Qrels`,
which holds `Judgment`s; its `to_dict()` is a QrelsDict). Relevance >= 1 is relevant; 0 or less is
judged non-relevant. An empty inner mapping marks an off-topic question."""

RunDict = Mapping[QuestionId, Mapping[PassageId, float]]
"""A run as plain dicts: question id -> {passage id: score}. Order is given by the ranking rule in
`goldeval.ranking`, never by dict order."""

# goldeval 0.2 called QrelsDict `Qrels`, which clashed with `goldeval.Qrels` (the noun); the old name works,
# with a warning, until 0.4.
__getattr__ = exports(__name__, {}, renamed={"Qrels": "goldeval.types.QrelsDict"})
