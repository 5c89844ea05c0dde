"""The demo corpus: the Python standard library's own documentation, rendered by pydoc on this machine.

`build_stdlib_corpus()` renders a fixed, curated list of stdlib modules (`data/stdlib_modules.txt`)
with `pydoc.render_doc(module, renderer=pydoc.plaintext)`. Nothing is downloaded. Doc id = the
module name (`json`, `os.path`); title = the first line of the module's docstring.

Rendering runs in child processes (`_pydoc_render.py`), a fixed list of modules per child, so that
importing ~200 modules never touches the caller's process and the text is the same on every run.
It takes about 4 s of CPU, so the result is cached in the workspace as
`stdlib-<python version>-<key>.jsonl`, where the key hashes the module list and the renderer's
source. The cache is written atomically (temp file + os.replace) and carries a header with a
SHA-256 of its body; a cache that fails the check is rebuilt, never trusted.

The golden set for this corpus, and the rule that drops its questions whose modules this Python
lacks, are in `goldeval.golden.demo` (the corpus layer does not import the golden layer).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from goldeval.corpus.model import Corpus, Document
from goldeval.errors import GoldevalError
from goldeval.fingerprint import file_fingerprint, fingerprint, text_fingerprint
from goldeval.store.atomic import write_atomic

_DATA = Path(__file__).resolve().parents[1] / "data"
_RENDERER = Path(__file__).with_name("_pydoc_render.py")
_MODULE_LIST = _DATA / "stdlib_modules.txt"
_CACHE_FORMAT = "goldeval-stdlib-corpus/1"
_BATCH = 25
"""Modules per child process. Fixed (not derived from the CPU count) because pydoc's page of `sys`
shows the child's own imports; a fixed batch keeps the text identical on every machine size."""
_CHILD_TIMEOUT_S = 300

Progress = Callable[[int, int], None]
"""Called as `progress(done, total)` with the number of modules rendered so far."""


def read_module_list(path: Path | None = None) -> list[str]:
    """Module names from a list file: one per line, `#` starts a comment, duplicates kept once."""
    names: list[str] = []
    for raw in (path or _MODULE_LIST).read_text(encoding="utf-8").splitlines():
        name = raw.split("#", 1)[0].strip()
        if name and name not in names:
            names.append(name)
    return names


def build_stdlib_corpus(
    *,
    workspace: Path | None = None,
    progress: Progress | None = None,
    modules: Sequence[str] | None = None,
) -> Corpus:
    """Build the demo corpus from the pydoc text of the standard library on this Python.

    `workspace` is the folder for goldeval's caches (usually `.goldeval/`); None renders afresh
    and writes nothing. `modules` overrides the packaged module list (tests use a short one).
    Modules that do not import on this Python are skipped, each with a line in `corpus.warnings`.
    """
    names = list(modules) if modules is not None else read_module_list()
    cache = _cache_path(Path(workspace), names) if workspace is not None else None
    problems: list[str] = []
    records: list[dict[str, str]] | None = None
    if cache is not None and cache.exists():
        records, problem = _read_cache(cache)
        if problem:
            problems.append(f"demo corpus cache {cache} is unusable ({problem}); rebuilt it")
    if records is None:
        records = _render(names, progress)
        if cache is not None:
            _write_cache(cache, records)
    elif progress is not None:
        progress(len(names), len(names))
    return _to_corpus(records, problems, cache)


def _to_corpus(records: list[dict[str, str]], problems: list[str], cache: Path | None) -> Corpus:
    documents: dict[str, Document] = {}
    for record in records:
        if "error" in record:
            problems.append(f"module {record['id']} skipped: it does not import here ({record['error']})")
            continue
        doc_id = record["id"]
        documents[doc_id] = Document(doc_id, record["text"], record["title"], source=f"pydoc:{doc_id}")
    if not documents:
        raise GoldevalError(
            "no standard-library module could be rendered for the demo corpus (each is imported by "
            f"a child process run as {sys.executable!r}):\n" + "\n".join(problems[:5])
        )
    where = str(cache) if cache is not None else "pydoc"
    return Corpus(documents, name="stdlib", path=where, warnings=problems)


# --- rendering --------------------------------------------------------------------------------


def _render(names: list[str], progress: Progress | None) -> list[dict[str, str]]:
    """Render every module in child processes, batches in parallel, results in list order."""
    batches = [names[i : i + _BATCH] for i in range(0, len(names), _BATCH)]
    done = 0
    results: list[list[dict[str, str]]] = []
    workers = max(1, min(len(batches), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for batch_records in pool.map(_render_batch, batches):
            results.append(batch_records)
            done += len(batch_records)
            if progress is not None:
                progress(done, len(names))
    return [record for batch_records in results for record in batch_records]


def _render_batch(names: list[str]) -> list[dict[str, str]]:
    """One child renders `names`; if it dies (a module that crashes the interpreter on import),
    each module is retried alone so that only the culprit is skipped."""
    records = _run_child(names)
    if records is not None:
        return records
    if len(names) == 1:
        return [{"id": names[0], "error": "the interpreter failed while importing or rendering it"}]
    return [record for name in names for record in _render_batch([name])]


def _run_child(names: list[str]) -> list[dict[str, str]] | None:
    # -P: the child's cwd (the user's folder) must not shadow stdlib modules; PYTHONHASHSEED=0:
    # pydoc prints set and frozenset reprs, whose order otherwise changes from run to run.
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
    source = _RENDERER.read_text(encoding="utf-8")
    try:
        proc = subprocess.run(
            [sys.executable, "-P", "-c", source],
            input="\n".join(names),
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            timeout=_CHILD_TIMEOUT_S,
            check=False,
        )
        records = [json.loads(line) for line in proc.stdout.splitlines()]
    except (subprocess.TimeoutExpired, json.JSONDecodeError, OSError):
        return None
    if proc.returncode != 0 or [r.get("id") for r in records] != names:
        return None
    return records


# --- the cache --------------------------------------------------------------------------------


def _cache_path(workspace: Path, names: list[str]) -> Path:
    # another venv of the same version may differ in `sys`: its executable is in the key
    key = fingerprint([_CACHE_FORMAT, names, file_fingerprint(_RENDERER), sys.executable], length=16)
    return workspace / f"stdlib-{platform.python_version()}-{key}.jsonl"


def _body(records: list[dict[str, str]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)


def _write_cache(path: Path, records: list[dict[str, str]]) -> None:
    body = _body(records)
    header = {
        "format": _CACHE_FORMAT,
        "python": platform.python_version(),
        "records": len(records),
        "sha256": text_fingerprint(body),
    }
    write_atomic(path, json.dumps(header, sort_keys=True) + "\n" + body)


def _read_cache(path: Path) -> tuple[list[dict[str, str]] | None, str]:
    """The cached records, or None and why the cache cannot be trusted."""
    try:
        text = path.read_text(encoding="utf-8")
        first, _, body = text.partition("\n")
        header = json.loads(first)
        if not isinstance(header, dict) or header.get("format") != _CACHE_FORMAT:
            return None, "unknown format"
        if text_fingerprint(body) != header.get("sha256"):
            return None, "checksum mismatch"
        records = [json.loads(line) for line in body.splitlines()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, type(exc).__name__
    if len(records) != header.get("records") or not all(_valid_record(r) for r in records):
        return None, "malformed records"
    return records, ""


def _valid_record(record: object) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        return False
    if "error" in record:
        return isinstance(record["error"], str)
    return isinstance(record.get("text"), str) and isinstance(record.get("title"), str)
