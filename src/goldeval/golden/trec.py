"""TREC golden sets: qrels (`qid 0 docno rel`) and topics (classic SGML or `qid<TAB>text`).

In TREC a topic without judgments is unjudged, not off-topic: `load_trec_golden` drops it with a
warning (kept in `GoldenSet.warnings`). Every imported topic is an answerable question: TREC has no
off-topic intent, and a topic's intent is never implied from its grades (`implied_intent` is for JSONL
records only), so a topic whose judged documents are all non-relevant stays answerable (with a warning). Judged-non-relevant grades are kept.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from goldeval.corpus.files import read_input_text
from goldeval.errors import InputError, InputErrors
from goldeval.golden.io import atomic_write_text
from goldeval.golden.model import GoldenSet, Qrels, Question, headline_split
from goldeval.golden.validate import nothing_relevant_warning
from goldeval.types import DocId, QuestionId

TOPIC_FIELDS = ("title", "desc")
"""Which part of a TREC topic becomes the question text: the short title (or `<query>`) or the
description (`<desc>`, `<description>` or `<question>`)."""

_TOP = re.compile(r"<top>(.*?)(?:</top>|(?=<top>)|\Z)", re.S | re.I)
_TOPIC_XML = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_NUMBER_ATTR = re.compile(r"""number\s*=\s*["']?([^"'\s>]+)""", re.I)
_TAG_TEXT = r"<{tag}\b[^>]*>(.*?)(?=<|\Z)"
_PREFIXES = re.compile(r"^\s*(?:Number|Topic|Description|Narrative)\s*:\s*", re.I)


def load_trec_qrels(path: str | Path) -> dict[QuestionId, dict[DocId, int]]:
    """Read TREC qrels, `qid iter docno rel` per line, with goldeval's one TREC reader
    (`goldeval.trecio`, trec_eval's rules: iter ignored, `#` comments, a (qid, docno) judged twice
    refused). Relevance is kept graded: >= 1 relevant, 0 or less judged not relevant. Every
    malformed line is reported at once (InputErrors, file, line, value and fix).
    """
    from goldeval.trecio import read_qrels

    return read_qrels(path)


def load_trec_topics(path: str | Path, *, field: str = "title") -> dict[QuestionId, tuple[str, int]]:
    """Read TREC topics: qid -> (question text, line), in file order.

    Accepts the classic SGML format (`<top> <num> Number: 301 <title> ... <desc> ... </top>`), the
    XML-like `<topic number="1"><query>...</query><description>...</description></topic>`, and a
    TSV of `qid<TAB>text` lines. `field` picks the text: "title" (or `<query>`) or "desc".
    """
    if field not in TOPIC_FIELDS:
        raise InputError(f"unknown topic field {field!r}", value=field,
                         hint="use " + " or ".join(repr(f) for f in TOPIC_FIELDS))
    path = Path(path)
    text = read_input_text(path, "topics file")
    if re.search(r"<top>", text, re.I):
        topics, problems = _classic_topics(text, path, field)
    elif re.search(r"<topic\b", text, re.I):
        topics, problems = _xml_topics(text, path, field)
    else:
        topics, problems = _tsv_topics(text, path)
    if problems:
        raise InputErrors(problems, summary=f"{len(problems)} problem(s) in topics file {path}")
    if not topics:
        raise InputError("the topics file has no topics", path=path,
                         hint="expected `<top>` blocks or `qid<TAB>text` lines")
    return topics


def load_trec_golden(qrels_path: str | Path, topics_path: str | Path, *, field: str = "title") -> GoldenSet:
    """A golden set from TREC qrels and topics; topics keep the topics file's order and lines.

    Graded relevance is kept, judged-non-relevant (0 or less) included. Every topic is an answerable
    question. A topic with no judgments is unjudged in TREC: it is dropped with a warning in
    `GoldenSet.warnings`, as are judgments for topics the topics file lacks; a topic judged with
    nothing relevant is kept, with a warning.
    """
    qrels = load_trec_qrels(qrels_path)
    topics = load_trec_topics(topics_path, field=field)
    common = [qid for qid in topics if qid in qrels]
    if not common:
        raise InputError(
            "no topic of the topics file has judgments in the qrels file", path=topics_path,
            hint=f"topic ids look like {_sample(topics)}; qrels topic ids look like {_sample(qrels)}",
        )
    questions = [Question(qid, topics[qid][0], "answerable", line=topics[qid][1]) for qid in common]
    judged = Qrels.from_grades({qid: qrels[qid] for qid in common})
    warnings = []
    unjudged = [qid for qid in topics if qid not in qrels]
    if unjudged:
        warnings.append(f"{len(unjudged)} topic(s) of {topics_path} have no judgments in {qrels_path} and "
                        f"were dropped (unjudged in TREC terms): {_sample(unjudged, 10)}")
    textless = [qid for qid in qrels if qid not in topics]
    if textless:
        warnings.append(f"{len(textless)} judged topic(s) of {qrels_path} are missing from {topics_path} "
                        f"and were dropped: {_sample(textless, 10)}")
    warnings.extend(nothing_relevant_warning(questions, judged, str(qrels_path)))
    return GoldenSet(questions, judged, path=str(topics_path), warnings=warnings,
                     notes=f"Imported from TREC qrels {qrels_path} and topics {topics_path} ({field}).")


def write_trec_qrels(golden: GoldenSet, path: str | Path) -> list[QuestionId]:
    """Write `qid 0 docno rel` lines for every judgment of the headline questions, grade 0 and below
    included, atomically; return the off-topic questions left out.

    TREC has no notion of intent: an off-topic question's judged-not-relevant documents would come back
    as an answerable topic that scores 0, so `trec_eval` would average it in where `goldeval eval`
    never does (issue 18). Nor of provenance: synthetic questions, which `goldeval eval` reports beside
    the headline (`headline_split`), are left out too, so the file gives back the headline numbers. Their
    grades stay in the golden set; the caller says what was left out.
    """
    headline = headline_split(golden)[0]
    judged = {q.id: golden.grades(q.id) for q in headline}
    check_trec_ids([(q.id, list(judged[q.id]), q.line) for q in headline], path, source=golden.path)
    atomic_write_text(path, qrels_text(judged))
    return [q.id for q in golden.off_topic]


def qrels_text(judged: Mapping[QuestionId, Mapping[DocId, int]]) -> str:
    """`qid 0 docno grade` lines, questions and documents in the order given (ids checked by the caller)."""
    return "".join(f"{qid} 0 {doc} {grade}\n" for qid, grades in judged.items() for doc, grade in grades.items())


def write_trec_topics(golden: GoldenSet, path: str | Path) -> None:
    """Write the questions as `qid<TAB>text` topics, atomically (whitespace runs become one space)."""
    check_trec_ids([(q.id, [], q.line) for q in golden], path, source=golden.path)
    atomic_write_text(path, "".join(f"{q.id}\t{' '.join(q.question.split())}\n" for q in golden))


def check_trec_ids(rows: Iterable[tuple[QuestionId, Sequence[str], int | None]], path: str | Path, *,
                   source: str | Path | None = None) -> None:
    """TREC files are whitespace-separated: refuse (every problem at once) a question id or document id
    of `rows` (question id, its ids, its line in `source`) that is empty or holds whitespace."""
    problems = []
    for qid, docs, line in rows:
        for value in (qid, *docs):
            if not value or len(value.split()) != 1 or value.split()[0] != value:
                problems.append(InputError(
                    f"id {value!r} of question `{qid}` is empty or contains whitespace, which TREC "
                    "files cannot hold", path=source or None, line=line, value=value,
                    hint="rename it without spaces",
                ))
    if problems:
        raise InputErrors(problems, summary=f"cannot write {path}: {len(problems)} id(s) not TREC-safe")


def _classic_topics(text: str, path: Path, field: str) -> tuple[dict[str, tuple[str, int]], list[InputError]]:
    topics: dict[str, tuple[str, int]] = {}
    problems: list[InputError] = []
    for match in _TOP.finditer(text):
        block, line = match.group(1), text.count("\n", 0, match.start()) + 1
        num = _tag(block, "num")
        qid = num.split()[0] if num else ""
        body = _tag(block, "title") if field == "title" else _tag(block, "desc")
        _add_topic(topics, problems, qid, body, line, path, field)
    return topics, problems


def _xml_topics(text: str, path: Path, field: str) -> tuple[dict[str, tuple[str, int]], list[InputError]]:
    topics: dict[str, tuple[str, int]] = {}
    problems: list[InputError] = []
    for match in _TOPIC_XML.finditer(text):
        attrs, block = match.group(1), match.group(2)
        line = text.count("\n", 0, match.start()) + 1
        number = _NUMBER_ATTR.search(attrs)
        qid = number.group(1) if number else _tag(block, "num")
        tags = ("query", "title") if field == "title" else ("description", "question", "desc")
        body = next((found for tag in tags if (found := _tag(block, tag))), "")
        _add_topic(topics, problems, html.unescape(qid), html.unescape(body), line, path, field)
    return topics, problems


def _tag(block: str, tag: str) -> str:
    """The text after `<tag>` up to the next tag, whitespace collapsed, `Number:`-style prefix removed."""
    found = re.search(_TAG_TEXT.format(tag=tag), block, re.S | re.I)
    return _PREFIXES.sub("", " ".join(found.group(1).split())) if found else ""


def _add_topic(topics: dict[str, tuple[str, int]], problems: list[InputError], qid: str, body: str,
               line: int, path: Path, field: str) -> None:
    if not qid:
        problems.append(InputError("topic without a number", path=path, line=line,
                                   hint="each topic needs `<num> Number: 301` or number=\"301\""))
    elif not body:
        problems.append(InputError(f"topic `{qid}` has no {field} text", path=path, line=line, value=qid,
                                   hint="fill it in, or load the other field (title or desc)"))
    elif qid in topics:
        problems.append(InputError(f"duplicate topic number `{qid}`: already used on line {topics[qid][1]}",
                                   path=path, line=line, value=qid, hint="topic numbers must be unique"))
    else:
        topics[qid] = (body, line)


def _tsv_topics(text: str, path: Path) -> tuple[dict[str, tuple[str, int]], list[InputError]]:
    topics: dict[str, tuple[str, int]] = {}
    problems: list[InputError] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        qid, tab, body = line.partition("\t")
        if not tab:
            problems.append(InputError(
                "expected `qid<TAB>text`, found no tab", path=path, line=lineno, value=line,
                hint="separate the topic id from its text with a tab, or use the SGML `<top>` format",
            ))
            continue
        _add_topic(topics, problems, qid.strip(), " ".join(body.split()), lineno, path, "title")
    return topics, problems


def _sample(ids: Iterable[str], n: int = 3) -> str:
    items = list(ids)
    shown = ", ".join(f"`{i}`" for i in items[:n])
    return shown + (f" and {len(items) - n} more" if len(items) > n else "")
