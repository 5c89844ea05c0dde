"""Golden set validation: find every problem in one pass, each naming file, line, value and fix.

A typo in an expected id must never score as a silent miss, so every judged id is checked against
the corpus and an unknown one is reported with the closest existing ids ("did you mean ...?").
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Collection, Iterable, Sequence

import numpy as np

from goldeval.corpus.model import Corpus
from goldeval.errors import InputError
from goldeval.golden.model import INTENTS, PROVENANCE_KINDS, GoldenSet, Judgment, Qrels, Question
from goldeval.ids import CHUNK_SEP, split_chunk_id
from goldeval.types import DocId, PassageId

"""Chunk ids are `<doc id>#<position>`; the doc id is everything before the last `#`."""

Problem = tuple[str, object, str]
"""(message, bad value, hint) of one problem, before a file and line are attached."""


def validate_golden(golden: GoldenSet, corpus: Corpus | Collection[str] | None = None) -> list[InputError]:
    """Every problem of an in-memory golden set, sorted by line; an empty list means it is valid.

    Checks ids (non-empty, unique), question texts (non-empty), intents against the judgments (an
    off-topic question judged relevant, an answerable one never judged), provenance kinds, grades,
    judgments of questions the set lacks, and, when `corpus` is given (a Corpus or a collection of
    doc ids), that every judged id is a doc id of the corpus or a chunk id (`doc#3`) of one of its
    documents.
    """
    problems: list[InputError] = []
    for q in golden:
        problems.extend(question_problems(q, golden.qrels.judgments(q.id), golden.path))
    problems.extend(duplicate_problems(golden.questions, golden.path))
    problems.extend(_orphan_problems(golden))
    if corpus is not None:
        first = {q.id: q for q in reversed(golden.questions)}  # a repeated id's judgments: checked once
        pairs = [(q, list(golden.grades(q.id))) for q in golden.questions if first[q.id] is q]
        problems.extend(corpus_problems(pairs, corpus, golden.path))
    return sort_problems(problems)


def question_problems(q: Question, judgments: Sequence[Judgment], path: str) -> list[InputError]:
    """Problems of one question and its judgments taken on their own (no corpus, no other questions)."""
    out: list[InputError] = []

    def problem(message: str, value: object, hint: str) -> None:
        out.append(InputError(message, path=path or None, line=q.line, value=value, hint=hint))

    if not isinstance(q.id, str) or not q.id.strip():
        problem(f"question id {q.id!r} is empty or not a string", q.id,
                "give every question a unique non-empty string id")
    why = question_text_problem(q.question)
    if why:
        problem(f"question `{q.id}`: {why}", q.question, "write the question as a user would ask it")
    bad_source = source_problem(q.source)
    if bad_source:
        problem(f"question `{q.id}`: {bad_source[0]}", q.source, bad_source[1])
    if q.intent not in INTENTS:
        problem(f"question `{q.id}`: unknown intent {q.intent!r}", q.intent, INTENT_HINT)
    for j in judgments:
        if not isinstance(j.doc_id, str) or not j.doc_id:
            problem(f"question `{q.id}`: judged id {j.doc_id!r} is empty or not a string", j.doc_id,
                    "judged ids are doc ids or chunk ids (strings)")
        if isinstance(j.grade, bool) or not isinstance(j.grade, int):
            problem(f"question `{q.id}`: relevance {j.grade!r} of `{j.doc_id}` is not an integer", j.grade,
                    GRADE_HINT)
    for message, value, hint in intent_problems(f"question `{q.id}`: ", q.intent, judgments):
        problem(message, value, hint)
    return out


INTENT_HINT = 'intent is "answerable" (the corpus answers it) or "off_topic" (it does not)'
GRADE_HINT = "graded relevance is an integer: 1 relevant, 2 or more more relevant, 0 judged not relevant"


def intent_problems(label: str, intent: str, judgments: Sequence[Judgment]) -> list[Problem]:
    """An off-topic question judged relevant, or an answerable question with no judgment at all.

    An answerable question whose judged documents are all not relevant is no problem here: TREC
    topics often are, and `nothing_relevant_warning` reports them instead.
    """
    relevant = [j for j in judgments if isinstance(j.grade, int) and j.grade > 0]
    if intent == "off_topic" and relevant:
        j = relevant[0]
        more = f" (and {len(relevant) - 1} more)" if len(relevant) > 1 else ""
        return [(f"{label}intent is off_topic but `{j.doc_id}` is judged relevant (grade {j.grade}){more}",
                 j.doc_id, 'an off-topic question has no relevant document: give these ids grade 0, or '
                 'drop "intent": "off_topic" if the corpus does answer it')]
    if intent == "answerable" and not judgments:
        return [(f"{label}intent is answerable but no document is judged for it", intent,
                 'add the doc or chunk ids that answer it to `expected`, or write "intent": "off_topic" '
                 "if the corpus does not answer it")]
    return []


def nothing_relevant_warning(questions: Iterable[Question], qrels: Qrels, where: str) -> list[str]:
    """A warning naming the answerable questions judged with nothing relevant, or none.

    They stay answerable (intent is never inferred from grades for an import): a retriever can
    find nothing right for them, which the evaluation reports rather than hides.
    """
    answerable = [q.id for q in questions if not q.off_topic]
    ids = [qid for qid, grades in zip(answerable, qrels.graded(answerable), strict=True)
           if grades and max(grades.values()) <= 0]
    if not ids:
        return []
    shown = ", ".join(f"`{i}`" for i in ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    return [f"{len(ids)} answerable question(s) of {where} have judged documents but none relevant (kept as "
            f"answerable; nothing relevant can be found for them): {shown}"]


def _orphan_problems(golden: GoldenSet) -> list[InputError]:
    """Judgments of a question id the set does not hold: they would never be scored."""
    known = {q.id for q in golden.questions}
    orphans = sorted({j.question_id for j in golden.qrels} - known)
    return [InputError(f"judgments for question `{qid}`, which is not in the golden set", path=golden.path or None,
                       value=qid, hint="add the question, or drop its judgments") for qid in orphans]


def question_text_problem(text: object) -> str | None:
    """Why a question text is unusable, or None when it is fine."""
    if not isinstance(text, str):
        return f"question must be a string, found {json_type(text)}"
    if not text.strip():
        return "question is empty"
    return None


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for messages about the file the user wrote."""
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number",
             float: "number", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


def source_problem(source: object, name: str = "source") -> tuple[str, str] | None:
    """(message, hint) when `source` (or a provenance `kind`) is not a known kind, else None."""
    if isinstance(source, str) and source in PROVENANCE_KINDS:
        return None
    close = difflib.get_close_matches(str(source).lower(), PROVENANCE_KINDS, n=1, cutoff=0.5)
    hint = f"did you mean `{close[0]}`? " if close else ""
    return (f"unknown {name} {source!r}",
            hint + f"{name} is `hand` (written by a person, the default), `synthetic` (generated), `log` "
            "(taken from a search log) or `incident` (added after an incident)")


def duplicate_problems(questions: Iterable[Question], path: str) -> list[InputError]:
    """One problem per repeated question id, naming the line of its first use."""
    first: dict[str, Question] = {}
    out: list[InputError] = []
    for q in questions:
        if not isinstance(q.id, str) or not q.id:
            continue
        if q.id not in first:
            first[q.id] = q
            continue
        before = first[q.id]
        where = f" on line {before.line}" if before.line is not None else ""
        out.append(InputError(
            f"duplicate question id `{q.id}`: already used{where}",
            path=path or None, line=q.line, value=q.id,
            hint="question ids must be unique; rename one of them",
        ))
    return out


def corpus_problems(
    pairs: Sequence[tuple[Question, Collection[PassageId]]], corpus: Corpus | Collection[str], path: str
) -> list[InputError]:
    """Every judged id that is neither a doc id of the corpus nor a chunk id of one of its docs.

    `pairs` holds each question with the ids judged for it (relevant or not: a typo is a typo).
    """
    ids = corpus_ids(corpus)
    where = path or None
    if not ids:
        return [InputError("the corpus is empty, so no expected id can be found in it", path=where,
                           hint="check the corpus path and that it holds .md, .rst, .txt or .html files")]
    missing: list[tuple[Question, PassageId]] = []
    total = 0
    for q, judged in pairs:
        for pid in judged:
            total += 1
            if resolve_doc_id(pid, ids) is None:
                missing.append((q, pid))
    if not missing:
        return []
    suggester = IdSuggester(ids)
    out = [_missing_problem(q, pid, suggester, where) for q, pid in missing]
    if len(missing) >= 5 and len(missing) * 2 > total:
        out.insert(0, _wrong_corpus_problem(len(missing), total, corpus, ids, missing, where))
    return out


def corpus_ids(corpus: Corpus | Collection[str]) -> Collection[str]:
    """The doc ids of a Corpus, or the collection itself when given plain ids."""
    if isinstance(corpus, Corpus):
        return corpus.documents.keys()
    return corpus if isinstance(corpus, (set, frozenset, dict)) else set(corpus)


def resolve_doc_id(pid: PassageId, ids: Collection[DocId]) -> DocId | None:
    """The corpus doc id an expected id stands for, or None when it names nothing in the corpus.

    An exact doc id wins (doc ids may themselves contain `#`); otherwise `doc#3` resolves to `doc`
    when `doc` is in the corpus. The chunk position is not checked here: how many chunks a document
    has depends on the chunking chosen at evaluation time.
    """
    if pid in ids:
        return pid
    doc, position = split_chunk_id(pid)  # `doc#x` is a typo, not a chunk (goldeval.ids)
    return doc if position is not None and doc in ids else None


def _missing_problem(q: Question, pid: PassageId, suggester: IdSuggester, where: str | None) -> InputError:
    doc, sep, pos = pid.rpartition(CHUNK_SEP)
    if sep and doc and not pos.isdigit() and doc in suggester.ids:
        message = (f"question `{q.id}`: expected id `{pid}`: `{pos}` after `#` is not a chunk number")
        return InputError(message, path=where, line=q.line, value=pid,
                          hint=f"chunk ids count from 0, e.g. `{doc}#0`; or write the document id `{doc}`")
    if sep and doc:
        close = [c + sep + pos for c in suggester.suggest(doc)]
        what = f"expected chunk id `{pid}`: its document `{doc}` is not in the corpus"
    else:
        close = suggester.suggest(pid)
        what = f"expected id `{pid}` is not in the corpus"
    message = f"question `{q.id}`: {what}" if q.id else what
    if close:
        message += "; did you mean " + " or ".join(f"`{c}`" for c in close) + "?"
        hint = "fix the id in the golden set; a wrong id would score as a miss"
        if any(unicodedata.normalize("NFC", c) == unicodedata.normalize("NFC", pid) for c in close):
            hint = ("the two differ only in Unicode normalisation (composed vs decomposed accents, as "
                    "macOS file names often are): retype the id, or normalise both to NFC")
    else:
        sample = ", ".join(f"`{i}`" for i in suggester.ids[:3])
        hint = (f"corpus ids look like {sample}: for a folder, the path relative to the folder with `/` "
                "separators, extension kept")
    return InputError(message, path=where, line=q.line, value=pid, hint=hint)


def _wrong_corpus_problem(
    n_missing: int, total: int, corpus: Corpus | Collection[str], ids: Collection[str],
    missing: list[tuple[Question, PassageId]], where: str | None,
) -> InputError:
    name = f" `{corpus.path or corpus.name}`" if isinstance(corpus, Corpus) else ""
    ours = ", ".join(f"`{pid}`" for _, pid in missing[:3])
    theirs = ", ".join(f"`{i}`" for i in list(ids)[:3])
    return InputError(
        f"{n_missing} of {total} expected ids are not in the corpus{name}",
        path=where,
        hint=f"is this golden set meant for this corpus? golden ids look like {ours}; corpus ids look "
             f"like {theirs}",
    )


def sort_problems(problems: list[InputError]) -> list[InputError]:
    """File-level problems first, then by line; stable, so each line keeps its own order."""
    return sorted(problems, key=lambda p: -1 if p.line is None else p.line)


class IdSuggester:
    """Closest existing ids for an unknown one: trigram prefilter, then difflib.

    Running difflib against every id costs O(ids) per unknown id (10k ids x 1k questions is minutes);
    a character-trigram inverted index shortlists the `shortlist` ids sharing the most trigrams, and
    only those are scored with `difflib.SequenceMatcher.ratio` (case-insensitive).
    """

    def __init__(self, ids: Iterable[str], *, shortlist: int = 40, margin: float = 0.05) -> None:
        self.ids = list(ids)
        self.shortlist = shortlist
        self.margin = margin
        self._lower = [i.lower() for i in self.ids]
        postings: dict[str, list[int]] = {}
        for n, text in enumerate(self._lower):
            for gram in _trigrams(text):
                postings.setdefault(gram, []).append(n)
        self._postings = {g: np.asarray(v, dtype=np.int64) for g, v in postings.items()}
        self._cache: dict[str, list[str]] = {}

    def suggest(self, value: str, n: int = 3, cutoff: float = 0.6) -> list[str]:
        """Up to n existing ids whose similarity ratio to `value` is at least `cutoff` and within
        `margin` of the best one's, best first."""
        if value not in self._cache:
            self._cache[value] = self._suggest(value, n, cutoff)
        return self._cache[value]

    def _suggest(self, value: str, n: int, cutoff: float) -> list[str]:
        lowered = value.lower()
        hits = [self._postings[g] for g in _trigrams(lowered) if g in self._postings]
        if not hits:
            return []
        counts = np.bincount(np.concatenate(hits), minlength=len(self.ids))
        k = min(self.shortlist, len(self.ids))
        shortlist = np.argpartition(-counts, k - 1)[:k]
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(lowered)
        scored = []
        for i in shortlist.tolist():
            if counts[i] == 0:
                continue
            matcher.set_seq1(self._lower[i])
            ratio = matcher.ratio()
            if ratio >= cutoff:
                scored.append((-ratio, self.ids[i]))
        scored.sort()
        if scored and scored[0][0] == -1.0:
            return [scored[0][1]]  # the same id up to case: nothing else is as likely
        # Only ids about as close as the best one: "did you mean a or b?" helps only when both fit.
        return [i for ratio, i in scored[:n] if ratio <= scored[0][0] + self.margin]


def _trigrams(text: str) -> set[str]:
    padded = f"\x02{text}\x03"
    return {padded[i:i + 3] for i in range(len(padded) - 2)}
