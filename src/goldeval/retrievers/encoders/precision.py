"""Which precision of a model runs faster on this CPU: `dense:MODEL?precision=auto`, measured once per machine.

Why it is asked for, never chosen silently (issue 19): int8 and float32 give slightly different vectors
(all-MiniLM-L6-v2: within cosine 0.99 of each other), so a choice made per machine would give
`dense:minilm` different numbers on different machines. `dense:minilm` therefore runs its default
(int8) everywhere; `precision=int8|fp32` names a variant; `precision=auto` takes the faster one here, and
the results record which one ran (`config.options.precision`, the measurement in `config.precision_auto`),
so two scorecards made with different variants say so (`goldeval compare` lists it among the changes).

The measurement: both variants embed the same small fixed batch (`probe_texts`: `PROBE_TEXTS` cuts of
data/precision_probe.txt, about 20 to 256 tokens) on every core the process may use, `ROUNDS` rounds
interleaved, each variant's best round in CPU seconds of this process (on a shared machine wall seconds
measure the other work too). The variant other than the model's default is taken only when it is at least
`MARGIN` faster: a closer call is within the noise of a busy machine, and the default's numbers are the
ones the docs quote. The decision is kept in the user cache (goldeval.usercache:
`precision/<model>-<key>.json`), keyed by both variants' model keys (weights, package and onnxruntime
versions), the CPU (model name, vector extensions, cores) and the probe; it is made under a lock and kept
with a checksum (`store.kept`), so the first run on a machine measures (seconds, plus the int8 copy once)
and every later one, in any project, reads it.
"""

from __future__ import annotations

import contextlib
import platform
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldeval.fingerprint import fingerprint
from goldeval.retrievers.encoders.base import available_cores
from goldeval.retrievers.encoders.registry import ModelSpec, model_key
from goldeval.store.kept import read_kept, write_kept
from goldeval.store.workspace import file_lock, user_folder
from goldeval.usercache import user_cache

PROBE_FILE = Path(__file__).resolve().parents[2] / "data" / "precision_probe.txt"
PROBE_TEXTS = 16
"""Texts in the probe: the first 16, 32, ... 256 words of the probe file (the longer ones fill the window)."""
ROUNDS = 3
MARGIN = 0.05
"""How much faster (passages per CPU second) the non-default variant must be to be chosen."""
FORMAT = 1
EXTENSIONS = frozenset({"avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni",
                        "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16", "asimd", "asimddp", "i8mm", "sve"})
"""The CPU features int8 and float32 kernels are chosen by (x86 AVX, VNNI, AMX; Arm dot product, i8mm)."""


@dataclass(frozen=True)
class Decision:
    """The faster precision of one model on this machine, and what it was measured as."""

    model: str
    chosen: str
    per_cpu_s: dict[str, float]
    """Passages per CPU second of each precision on the probe."""
    cpu: dict[str, object]
    measured: str
    path: Path

    def to_config(self) -> dict[str, object]:
        """What the results record for `precision=auto` (no path: it names the user's home)."""
        return {"chose": self.chosen, "passages_per_cpu_s": dict(self.per_cpu_s), "cpu": self.cpu.get("cpu"),
                "cores": self.cpu.get("cores"), "measured": self.measured}


def probe_texts() -> list[str]:
    words = PROBE_FILE.read_text(encoding="utf-8").split()
    return [" ".join(words[: 16 * (i + 1)]) for i in range(PROBE_TEXTS)]


def cpu_identity() -> dict[str, object]:
    """What makes a CPU faster at one precision: its model name, its vector extensions, the cores used."""
    name, flags = platform.processor(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "CPU part") and not name:
                name = value.strip()
            elif key.strip() in ("flags", "Features"):
                flags.update(value.split())
    except OSError:  # not Linux: the processor name alone
        pass
    return {"machine": platform.machine(), "cpu": name, "extensions": sorted(flags & EXTENSIONS),
            "cores": available_cores()}


def decision_path(spec: ModelSpec) -> Path:
    """Where this model's decision is kept: a new CPU, model file, package or probe is a new file."""
    keys = [model_key(spec.variant(p).identity()) for p in spec.precisions]
    digest = fingerprint([FORMAT, keys, cpu_identity(), probe_texts(), ROUNDS, MARGIN], length=16)
    return user_cache() / "precision" / f"{spec.name}-{digest}.json"  # made by `faster_precision`, when it measures


def read_decision(spec: ModelSpec) -> Decision | None:
    """The kept decision for `spec` on this machine, None when it was never measured here."""
    path = decision_path(spec)
    return read_kept(path, "precision decision", "measuring again", lambda data: _decision(data, path, spec))


def faster_precision(spec: ModelSpec) -> Decision:
    """The kept decision, else measured now (under a lock: two processes measure once) and kept."""
    found = read_decision(spec)
    if found is not None:
        return found
    path = decision_path(spec)
    user_folder("precision")
    lock = path.with_suffix(".lock")
    try:
        with file_lock(lock):
            found = read_decision(spec)  # another process may have measured while this one waited
            if found is None:
                found = measure(spec, path)
                write_kept(path, _record(found), f"{spec.name}: the precision measurement was not kept for next time")
    finally:
        with contextlib.suppress(OSError):  # a waiter reads the decision again once it holds the lock
            lock.unlink()
    return found


def measure(spec: ModelSpec, path: Path) -> Decision:
    """Both precisions on the probe, interleaved, best of `ROUNDS` in CPU seconds (stderr says so)."""
    from goldeval.retrievers.encoders.registry import load_encoder

    precisions = spec.precisions
    print(f"goldeval: dense:{spec.name}?precision=auto: measuring {' and '.join(precisions)} on this CPU, once "
          f"(kept in {path.parent})", file=sys.stderr)
    texts = probe_texts()
    cores = available_cores()
    encoders = {p: load_encoder(spec.name, precision=p, threads=cores, progress=False) for p in precisions}
    for encoder in encoders.values():
        encoder.encode(texts[:2])  # loaded (the int8 copy made once per machine) outside the timing
    best = dict.fromkeys(precisions, float("inf"))
    for _ in range(ROUNDS):
        for precision, encoder in encoders.items():
            started = time.process_time()
            encoder.encode(texts)
            best[precision] = min(best[precision], time.process_time() - started)
    rates = {p: round(len(texts) / max(best[p], 1e-9), 1) for p in precisions}
    default, *others = precisions
    chosen = max(others, key=rates.__getitem__)
    if rates[chosen] < rates[default] * (1 + MARGIN):
        chosen = default
    print(f"goldeval: dense:{spec.name}: " + ", ".join(f"{p} {rates[p]} passages per CPU s" for p in precisions)
          + f": precision=auto runs {chosen} here", file=sys.stderr)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Decision(spec.name, chosen, rates, cpu_identity(), now, path)


def _record(decision: Decision) -> dict[str, object]:
    return {"format": FORMAT, "model": decision.model, "chosen": decision.chosen, "per_cpu_s": decision.per_cpu_s,
            "cpu": decision.cpu, "measured": decision.measured, "rounds": ROUNDS, "margin": MARGIN,
            "probe_texts": PROBE_TEXTS}


def _decision(data: dict[str, Any], path: Path, spec: ModelSpec) -> Decision:
    if data.get("format") != FORMAT or data.get("chosen") not in spec.precisions:
        raise ValueError(f"not a precision decision for {spec.name}")
    return Decision(str(data["model"]), str(data["chosen"]), {str(k): float(v) for k, v in data["per_cpu_s"].items()},
                    dict(data["cpu"]), str(data["measured"]), path)
