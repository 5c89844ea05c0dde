"""Type aliases shared across goldeval."""

from __future__ import annotations

from collections.abc import Mapping

DocId = str
"""A document id: for a folder corpus, the path relative to the folder with `/` separators."""

PassageId = str
"""The id of a retrievable unit: a document id, or a chunk id such as `library/json.rst.txt#3`."""

QuestionId = str
"""A golden question's id, unique within its golden set."""

Qrels = Mapping[QuestionId, Mapping[DocId, int]]
"""Graded judgments: question id -> {doc id: relevance}. Relevance >= 1 is relevant; 0 or less is
judged non-relevant. An empty inner mapping marks an off-topic question."""

RunDict = Mapping[QuestionId, Mapping[PassageId, float]]
"""A run as plain dicts: question id -> {passage id: score}. Order is given by the ranking rule in
`goldeval.ranking`, never by dict order."""
