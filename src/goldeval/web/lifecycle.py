"""What a served scorecard page gets beside the results (issue 11): the run history's trend, and label
fixes from a miss written into the golden set.

`GET /lifecycle.json` answers `{"version", "trend", "fixes"}`: the trend of the headline metrics over the
workspace's recorded runs on one frozen golden-set version (`goldeval.report.lifecycle.trend_view`), and,
when `goldeval serve` was given the golden set (`--golden G`), the label fixes recorded in its changelog.
`POST /api/fix` applies one fix through `goldeval.judging.edits.GoldenFile`, the helper `goldeval pool`
uses (under the set's lock, an atomic write, a changelog line with who, when and why):

    {"action": "also_answers", "question": "q07", "doc": "python/re.md", "grade": 1, "reason": "..."}
    {"action": "not_covered", "question": "q07", "reason": "..."}        (a content gap: off-topic; every
                                                                          passage retrieved for it judged not relevant)
    {"action": "wrong_expected", "question": "q07", "doc": "python/os.md", "reason": "..."}

A fix must name a question of the served results and, for `also_answers`, a passage retrieved for it
there (at the results' level: a document, or a chunk); every fix needs a reason. The server's checks
(session token, Origin, Host) are the one server's, `goldeval.web.app`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldeval.errors import InputError
from goldeval.report.lifecycle import ResultsMeta, results_meta
from goldeval.web.live import ResultsSource

FIX_ACTIONS = ("also_answers", "not_covered", "wrong_expected")
MAX_REASON = 2000
MAX_SHOWN = 1000
"""Recorded fixes sent to the page (the newest)."""
GRADES = (1, 2, 3)


class PageLifecycle:
    """The trend and the label fixes of one served page."""

    def __init__(self, results: ResultsSource, *, workspace: str | Path | None = None,
                 golden: str | Path | None = None, judge: str | None = None) -> None:
        from goldeval.judging.edits import GoldenFile

        self.results = results
        self.workspace = Path(workspace) if workspace is not None else None
        self.file = GoldenFile(golden, judge=judge) if golden is not None else None
        self._lock = threading.Lock()
        self._meta: tuple[str, ResultsMeta] | None = None
        self._body: tuple[str, bytes] | None = None

    @property
    def fixes_enabled(self) -> bool:
        return self.file is not None

    def signature(self) -> str:
        """Changes when the results, the history or the golden set (or its changelog) change; empty when the
        page gets neither a history nor label fixes."""
        from goldeval.golden.changelog import changelog_path
        from goldeval.history.db import DB_NAME

        if self.workspace is None and self.file is None:
            return ""  # nothing beside the results: nothing to follow
        paths: list[Path] = []
        if self.workspace is not None:
            paths += [self.workspace / DB_NAME, self.workspace / f"{DB_NAME}-wal"]
        if self.file is not None:
            paths += [self.file.path, changelog_path(self.file.path)]
        stats = []
        for path in paths:
            try:
                st = path.stat()
                stats.append(f"{st.st_mtime_ns}.{st.st_size}")
            except OSError:
                stats.append("-")
        return ":".join([self.results.current()[1], *stats])

    def meta(self) -> ResultsMeta:
        body, version, _ = self.results.current()
        with self._lock:
            if self._meta is None or self._meta[0] != version:
                self._meta = (version, results_meta(json.loads(body)))
            return self._meta[1]

    def body(self) -> bytes:
        """`/lifecycle.json`, rebuilt only when `signature()` changed."""
        from goldeval.report.lifecycle import trend_view
        from goldeval.report.page import payload_json

        signature = self.signature()
        with self._lock:
            if self._body is not None and self._body[0] == signature:
                return self._body[1]
        meta = self.meta()
        trend = trend_view(self.workspace, meta.headline, version=meta.golden_version) if self.workspace else None
        body = payload_json({"version": signature, "trend": trend, "fixes": self.fixes()}).encode("utf-8")
        with self._lock:
            self._body = (signature, body)
        return body

    def fixes(self) -> dict[str, Any]:
        """Whether fixes are on, for which golden set, the fixes its changelog records (newest last), and
        `changes`: the set's changelog summary now (`changes_summary`), which the page header shows in
        place of the one the results recorded when they were scored, so it counts the fixes made since."""
        from goldeval.golden.changelog import FIXES, changes_summary, read_changes
        from goldeval.golden.versions import frozen_version

        if self.file is None:
            return {"enabled": False}
        done = [c.to_dict() for c in read_changes(self.file.path) if c.action in FIXES]
        return {"enabled": True, "golden": self.file.path.name, "path": str(self.file.path), "judge": self.file.judge,
                "done": done[-MAX_SHOWN:], "count": len(done),
                "changes": changes_summary(self.file.path, frozen_version(self.file.load())) or None}

    def apply(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """Apply one label fix (see the module docstring); returns the page's new `fixes` block."""
        if self.file is None:
            raise InputError("label fixes are off", hint="start goldeval serve RESULTS.json --golden GOLDEN.jsonl")
        name, qid = action.get("action"), action.get("question")
        if name not in FIX_ACTIONS:
            raise InputError(f"unknown label fix {name!r}", value=name, hint=", ".join(FIX_ACTIONS))
        if not isinstance(qid, str) or qid not in self.meta().passages:
            raise InputError(f"question {qid!r} is not in the served results", value=qid, hint="reload the page")
        reason = action.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(f"question `{qid}`: a label fix needs a reason", value=qid,
                             hint="say why, e.g. 'the corpus has no page about Word documents'")
        if len(reason) > MAX_REASON:
            raise InputError(f"the reason is {len(reason)} characters long, more than {MAX_REASON}", value=reason[:80])
        doc = action.get("doc")
        if name == "also_answers":
            self._also_answers(qid, doc, action.get("grade", 1), reason)
        elif name == "wrong_expected":
            if not isinstance(doc, str):
                raise InputError("`doc` must be the expected document's id", value=doc)
            self.file.wrong_expected(qid, doc, reason)
        else:  # as in `goldeval pool`: if the corpus does not answer it, no passage retrieved for it does
            self.file.not_covered(qid, reason, passages=tuple(sorted(self.meta().passages[qid])))
        return self.fixes()

    def _also_answers(self, qid: str, doc: Any, grade: Any, reason: str) -> None:
        assert self.file is not None
        if not isinstance(doc, str) or doc not in self.meta().passages[qid]:
            raise InputError(f"question `{qid}`: {doc!r} was not retrieved for it in these results", value=doc,
                             hint="choose a passage from the question's retrieved list")
        if type(grade) is not int or grade not in GRADES:
            raise InputError(f"grade must be 1, 2 or 3, not {grade!r}", value=grade)
        if self.file.load().grades(qid).get(doc, 0) > 0:
            raise InputError(f"question `{qid}`: `{doc}` is already an expected answer", value=doc,
                             hint="re-run the evaluation to see it scored")
        self.file.judge_passage(qid, doc, grade, reason=reason, fix=True)
