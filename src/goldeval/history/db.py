"""The run history: every evaluation, in an embedded SQLite database in the workspace.

`goldeval eval` records each run in `.goldeval/history.sqlite` (stdlib sqlite3, write-ahead log, one
transaction per run, so a crash records the whole run or nothing and readers never wait for a writer):

- `runs`: the run identity (golden fingerprint and frozen version, corpus fingerprint, goldeval
  version, when) and the whole scorecard as compressed results JSON, so `compare @last` gets back
  exactly what was written;
- `metrics`: each retriever's mean and interval per metric (the trend);
- `question_ranks`: each retriever's rank of every question (the first correct result, and every
  expected id's rank), to see which questions moved without unpacking a scorecard. A view: each retriever's
  ranks are one JSON text in `rank_lists` (`[[question, off_topic, rank, ranks], ...]`), which SQLite's
  `json_each` spreads into rows; a row per question cost 0.34 CPU s per 100k questions to build and insert,
  the text 0.05 s (issue 23). Histories of schema 1 (a table of rows) move to the view when first written
  (SQLite's JSON functions, built in since SQLite 3.38 and in the common builds before; goldeval 0.2 writing
  into a moved history cannot insert into the view: it warns and records nothing);
- `tags`: named baselines (`goldeval history tag 12 baseline`, then `compare @baseline @last`).

References: `@last` is the newest run, `@last~N` the N-th before it, `@12` run 12, `@NAME` a tag.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldeval.errors import InputError, optional
from goldeval.limits import check_int
from goldeval.scorecard.model import Scorecard
from goldeval.textsafe import redact

DB_NAME = "history.sqlite"
ENV_OFF = "GOLDEVAL_NO_HISTORY"
"""Set to 1 to keep `goldeval eval` from recording runs (e.g. throwaway evaluations)."""
SCHEMA_VERSION = 2
PAGE_SIZE = 65536
"""The page size of a history made new (SQLite's largest): each run is mostly one blob, its results file
compressed (38 MB at 100k questions), which 4 KiB pages wrote at twice the CPU (issue 23: 0.16 -> 0.09 s).
SQLite fixes it when the file is made (and in WAL mode for good): older histories keep 4 KiB."""
RANKS_VIEW = """
CREATE VIEW IF NOT EXISTS question_ranks AS
SELECT l.run_id AS run_id, l.retriever AS retriever, json_extract(q.value, '$[0]') AS question,
       json_extract(q.value, '$[1]') AS off_topic, json_extract(q.value, '$[2]') AS rank,
       json_extract(q.value, '$[3]') AS ranks
FROM rank_lists AS l, json_each(l.questions) AS q;
"""
SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    recorded TEXT NOT NULL,
    golden_path TEXT NOT NULL,
    golden_fingerprint TEXT NOT NULL,
    golden_version INTEGER,
    corpus_fingerprint TEXT NOT NULL,
    level TEXT NOT NULL,
    depth INTEGER NOT NULL,
    goldeval_version TEXT NOT NULL,
    identity TEXT NOT NULL,
    scorecard BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_version ON runs (golden_version, golden_fingerprint);
CREATE TABLE IF NOT EXISTS retrievers (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    n_answerable INTEGER NOT NULL,
    n_errors INTEGER NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    retriever TEXT NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    low REAL,
    high REAL,
    PRIMARY KEY (run_id, retriever, metric)
);
CREATE TABLE IF NOT EXISTS rank_lists (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    retriever TEXT NOT NULL,
    questions TEXT NOT NULL,
    PRIMARY KEY (run_id, retriever)
);
CREATE TABLE IF NOT EXISTS tags (
    name TEXT PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    at TEXT NOT NULL
);
"""
"""The tables (the view, `RANKS_VIEW`, is made after them)."""
TO_VIEW = """
INSERT INTO rank_lists
SELECT run_id, retriever, json_group_array(json_array(question, json(CASE off_topic WHEN 0 THEN 'false' ELSE 'true' END),
                                                      rank, json(ranks)))
FROM (SELECT * FROM question_ranks ORDER BY run_id, retriever, rowid) GROUP BY run_id, retriever;
DROP TABLE question_ranks;
"""
"""Schema 1 -> 2, between the tables and the view: the rows of `question_ranks` become one JSON text per
retriever in `rank_lists`, and the table gives way to the view of them."""
REF = re.compile(r"^@(?:(last)(?:~(\d+))?|(\d+)|([A-Za-z_][\w.-]*))$")


@dataclass(frozen=True)
class RunRow:
    """One recorded run, as `goldeval history` lists it."""

    id: int
    created: str
    golden_path: str
    golden_fingerprint: str
    golden_version: int | None
    corpus_fingerprint: str
    retrievers: list[str]
    tags: list[str]


class History:
    """The history database of one workspace (created on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def of(cls, workspace: str | Path) -> History:
        return cls(Path(workspace) / DB_NAME)

    @contextmanager
    def connect(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        if not write and not self.path.exists():
            raise InputError("no run history yet", path=self.path,
                             hint="every `goldeval eval` records its run here; evaluate first (or pass --workspace)")
        if self.path.exists() and not self.path.is_file():  # sqlite3 would say only "unable to open database file"
            raise InputError("the run history is a folder or a device, not a database file", path=self.path,
                             hint="move it away to start a new history, or pass another --workspace")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA foreign_keys = ON")
            if write:
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file's; an existing one keeps its own
                conn.execute("PRAGMA journal_mode = WAL")
                if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                    _migrate(conn)
            yield conn
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot use the run history: {exc}", path=self.path,
                             hint="the file is not a goldeval history database; move it away to start a new one") from None
        finally:
            conn.close()

    def record(self, card: Scorecard, *, written: Path | None = None) -> int:
        """Record one run in a single transaction; returns its id. `written`: the results file just saved from
        `card` (`Scorecard.save`), whose bytes are kept rather than written again."""
        from goldeval.scorecard.writer import rank_list, scorecard_chunks

        packer, blob = _packer(), bytearray()  # the results file's bytes
        for chunk in _read_back(written) if written else scorecard_chunks(card):  # streamed (issue 23)
            blob += packer.compress(chunk)
        blob += packer.flush()  # read by goldeval only
        identity = card.identity
        with self.connect(write=True) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                run_id = int(conn.execute(
                    "INSERT INTO runs (created, recorded, golden_path, golden_fingerprint, golden_version, "
                    "corpus_fingerprint, level, depth, goldeval_version, identity, scorecard) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (identity.created or _now(), _now(), _absolute(str(card.golden.get("path") or "")),
                     identity.golden_fingerprint, identity.golden_version, identity.corpus_fingerprint,
                     card.level, card.depth, identity.goldeval_version, redact(json.dumps(identity.to_dict())), blob),
                ).lastrowid or 0)
                for r in card.retrievers:
                    name = redact(r.name)  # the blob is redacted by dumps_strict; the columns the same way
                    conn.execute("INSERT INTO retrievers VALUES (?, ?, ?, ?, ?)",
                                 (run_id, name, redact(json.dumps(r.config, default=str)), r.n_answerable, r.n_errors))
                    conn.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", [
                        (run_id, name, str(m), v, *(r.intervals.get(m) or (None, None))) for m, v in r.metrics.items()])
                    conn.execute("INSERT INTO rank_lists VALUES (?, ?, ?)", (run_id, name, rank_list(r)))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return run_id

    def runs(self, limit: int | None = None) -> list[RunRow]:
        """Recorded runs, newest first. A run's golden version is read from its set's versions sidecar by
        content (`goldeval.golden.versions.version_of`): a run made before the set was frozen belongs to
        the version frozen later with the same content; without the sidecar, the version it recorded."""
        known: dict[str, dict[str, int] | None] = {}
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT id, created, golden_path, golden_fingerprint, golden_version, corpus_fingerprint "
                "FROM runs ORDER BY id DESC" + (f" LIMIT {int(limit)}" if limit else "")).fetchall()
            names = _group(conn.execute("SELECT run_id, name FROM retrievers ORDER BY rowid").fetchall())
            tags = _group(conn.execute("SELECT run_id, name FROM tags ORDER BY name").fetchall())
        return [RunRow(r[0], r[1], r[2], r[3], _version(r[2], r[3], r[4], known), r[5], names.get(r[0], []),
                       tags.get(r[0], [])) for r in rows]

    def scorecard(self, run_id: int) -> Scorecard:
        with self.connect() as conn:
            row = conn.execute("SELECT scorecard FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise InputError(f"no run {run_id} in the history", path=self.path, value=run_id,
                             hint="`goldeval history` lists the runs")
        return _stored_scorecard(row[0], run_id, self.path)

    def resolve(self, ref: str) -> int:
        """The run id a reference names: `@last`, `@last~N`, `@ID` or `@NAME` (a tag)."""
        match = REF.match(ref.strip())
        if match is None:
            raise InputError(f"cannot read history reference {ref!r}", value=ref,
                             hint="use @last, @last~1, a run id such as @12, or a tag such as @baseline")
        last, back, number, name = match.groups()
        if back is not None:  # SQLite holds 64-bit integers: @99999999999999999999999 overflowed it (issue 20)
            check_int("back", back, what=f"{ref}: the N of @last~N")
        if number is not None:
            check_int("run", number, what=f"{ref}: the run id")
        with self.connect() as conn:
            if last:
                row = conn.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (int(back or 0),)).fetchone()
                total = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
                if row is None:
                    raise InputError(f"{ref}: the history holds {total} run(s)", path=self.path, value=ref,
                                     hint="`goldeval history` lists the runs")
                return int(row[0])
            if number:
                if conn.execute("SELECT 1 FROM runs WHERE id = ?", (int(number),)).fetchone() is None:
                    raise InputError(f"{ref}: no run {number} in the history", path=self.path, value=ref,
                                     hint="`goldeval history` lists the runs")
                return int(number)
            row = conn.execute("SELECT run_id FROM tags WHERE name = ?", (name,)).fetchone()
            known = [t for (t,) in conn.execute("SELECT name FROM tags ORDER BY name")]
        if row is None:
            raise InputError(f"{ref}: no run is tagged {name!r}", path=self.path, value=ref,
                             hint=("tags: " + ", ".join(known)) if known else "tag one: goldeval history tag @last NAME")
        return int(row[0])

    def tag(self, ref: str, name: str) -> int:
        """Name a run (moving the name if another run had it); returns the run id."""
        if not re.fullmatch(r"[A-Za-z_][\w.-]*", name) or name == "last":
            raise InputError(f"cannot use {name!r} as a tag", value=name,
                             hint="letters, digits, _ . -, starting with a letter (and not `last`), e.g. baseline")
        run_id = self.resolve(ref if ref.startswith("@") else f"@{ref}")
        with self.connect(write=True) as conn:
            conn.execute("INSERT INTO tags VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, "
                         "at = excluded.at", (name, run_id, _now()))
        return run_id

    def metric_rows(self, run_ids: list[int], metric: str) -> list[tuple[int, str, float, float | None, float | None]]:
        """(run, retriever, value, low, high) of one metric for these runs, in run order."""
        if not run_ids:
            return []
        marks = ",".join("?" * len(run_ids))
        with self.connect() as conn:
            return [tuple(r) for r in conn.execute(  # type: ignore[misc]
                f"SELECT run_id, retriever, value, low, high FROM metrics WHERE metric = ? AND run_id IN ({marks}) "
                "ORDER BY run_id, rowid", (metric, *run_ids))]


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a new or older history to `SCHEMA_VERSION` in one transaction (another process may be doing the
    same: the version is read again once this one holds the write lock)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version < SCHEMA_VERSION:
            known = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'question_ranks' AND type = 'table'")
            script = SCHEMA + (TO_VIEW if version == 1 and known.fetchone() is not None else "") + RANKS_VIEW
            for statement in script.split(";"):  # one by one: executescript would commit the transaction first
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def record_run(card: Scorecard, workspace: str | Path, *, written: Path | None = None) -> int | None:
    """What `goldeval eval` calls after an evaluation: record it, unless $GOLDEVAL_NO_HISTORY is set.
    `written`: the results file the command just saved from `card` (its bytes are the history's blob).

    A history that cannot be written (a damaged file, a read-only workspace) is a warning, never a lost
    evaluation: the scorecard is still printed and saved."""
    if os.environ.get(ENV_OFF, "").strip() not in ("", "0"):
        return None
    try:
        return History.of(workspace).record(card, written=written)
    except (InputError, OSError, sqlite3.Error) as exc:
        from goldeval.textsafe import warn

        where = Path(workspace) / DB_NAME
        detail = exc.reason if isinstance(exc, InputError) else exc  # its path is `where`; its hint, not a line
        warn(f"the run was not recorded in the history {where}: {detail}")  # a path is the user's text: cleaned
        return None


def load_results(ref: str, workspace: str | Path) -> tuple[Scorecard, str]:
    """A results file or a history reference -> (scorecard, label for it)."""
    if ref.startswith("@"):
        history = History.of(workspace)
        run_id = history.resolve(ref)
        return history.scorecard(run_id), f"{ref.lstrip('@')}" if not ref[1:].isdigit() else f"run{run_id}"
    return Scorecard.load(Path(ref)), Path(ref).stem


def _packer() -> Any:
    """The compressor of a run's results JSON: a zlib stream at level 1 (3x faster than 6, 20% larger), made by
    ISA-L's deflate where it is installed (`isal`, in the `fast` extra: 3-4x faster again, and smaller) or by
    the zlib module; `zlib.decompress` reads either, so runs recorded either way read back the same."""
    isal_zlib = optional("isal.isal_zlib")
    return (zlib if isal_zlib is None else isal_zlib).compressobj(1)


def _read_back(path: Path) -> Iterator[bytes]:
    """The bytes of a file just written, a MiB at a time."""
    with path.open("rb") as handle:
        yield from iter(lambda: handle.read(1 << 20), b"")


def _stored_scorecard(blob: object, run_id: int, path: Path) -> Scorecard:
    """The scorecard a run stored (compressed results JSON), or one InputError naming the run when the row was
    damaged or written by something else (not bytes, not zlib, not JSON, not a scorecard)."""
    from goldeval.corpus.files import json_value

    source = f"{path} run {run_id}"
    hint = f"the history's copy of run {run_id} is damaged; its results JSON, if you kept it, can be compared instead"
    try:
        if not isinstance(blob, bytes):
            raise TypeError(f"a {type(blob).__name__}, not compressed results JSON")
        text = zlib.decompress(blob).decode("utf-8")
    except (TypeError, zlib.error, UnicodeDecodeError) as exc:
        raise InputError(f"run {run_id} cannot be read: {exc}", path=path, value=run_id, hint=hint) from None
    data = json_value(text, path=path, line=None, what=f"run {run_id}", hint=hint)
    try:
        return Scorecard.from_dict(data, source=source)
    except InputError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(f"run {run_id} is not a scorecard: {type(exc).__name__}: {str(exc)[:100]}", path=path,
                         value=run_id, hint=hint) from None


def _group(rows: list[tuple[int, str]]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for run_id, name in rows:
        out.setdefault(run_id, []).append(name)
    return out


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def describe(row: RunRow) -> dict[str, Any]:
    return {"id": row.id, "created": row.created, "golden": row.golden_path, "golden_version": row.golden_version,
            "golden_fingerprint": row.golden_fingerprint, "corpus_fingerprint": row.corpus_fingerprint,
            "retrievers": row.retrievers, "tags": row.tags}


def _version(golden_path: str, fingerprint: str, recorded: int | None,
             known: dict[str, dict[str, int] | None]) -> int | None:
    """The frozen version a run's golden content is (see `History.runs`); `known` caches each sidecar."""
    from goldeval.golden.versions import sidecar_path, versions_by_fingerprint

    if golden_path not in known:
        try:
            found = sidecar_path(golden_path).is_file() if golden_path else False
            known[golden_path] = versions_by_fingerprint(golden_path) if found else None
        except (OSError, InputError):
            known[golden_path] = None  # unreadable now: what the run recorded stands
    versions = known[golden_path]
    return recorded if versions is None else versions.get(fingerprint, recorded)


def _absolute(path: str) -> str:
    """The golden set's path as recorded: absolute, so its versions are found from any folder later."""
    return str(Path(path).resolve()) if path else ""
