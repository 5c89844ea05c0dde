"""The benchmark tables, rebuilt from bench/results/*.json: issue 23's (each row on realistic inputs, with
the easy inputs beside where a benchmark has both) and issue 12's ("measured side by side").

`python -m bench` prints them after the benchmarks it ran; `python -m bench.table` prints them from the last
results (Markdown, as the README's benchmark tables). In issue 23's table a row whose benchmark has not run
says which command runs it; issue 12's leaves such rows out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bench import RESULTS_DIR


def _load(area: str) -> dict[str, Any] | None:
    path = RESULTS_DIR / f"{area}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _load_all(area: str) -> dict[str, Any] | None:
    """`<area>.json` and any `<area>_*.json` beside it, merged (a key of a later file, in name order, wins; a
    benchmark may write its parts to several files)."""
    paths = sorted(RESULTS_DIR.glob(f"{area}_*.json"))
    data: dict[str, Any] = {}
    for path in [RESULTS_DIR / f"{area}.json", *paths]:
        if path.exists():
            data.update(json.loads(path.read_text(encoding="utf-8")))
    return data or None


def rows() -> list[tuple[str, str, str, str]]:
    """(work, goldeval, what a user could pick instead, ratio) per row of issue 12's table; what issue 23 measured
    on realistic inputs (17-digit TREC files, a new str per id, BM25 on real text, the sweep re-run, eval on a
    run file) is in its own table (`rows_issue23`), not here again."""
    out: list[tuple[str, str, str, str]] = []
    metrics, bm25, embed = _load("metrics"), _load("bm25"), _load("embed")
    if metrics:
        d = metrics["dicts"].get("100000") or metrics["dicts"].get(100000)
        small = metrics["dicts"].get("10000") or metrics["dicts"].get(10000) or {}
        ranx = f"; ranx at 10k {small['ranx_ranx_s']:.2f} s (first call {small['ranx_ranx_first_s']:.1f} s)" if "ranx_ranx_s" in small else ""
        out.append((
            "metrics from Python dicts, 100k questions x 100 results",
            f"{d['goldeval_s']:.2f} s (first call {d['goldeval_first_s']:.2f} s)",
            f"pytrec_eval {d['pytrec_eval_s']:.2f} s{ranx}; just walking the dicts {d['walk_s']:.2f} s",
            f"{d['pytrec_eval_s'] / d['goldeval_s']:.1f}x pytrec_eval; {d['goldeval_s'] / d['walk_s']:.2f}x the walk "
            f"(ids shared as a retriever returns them; a new str per id: issue 23's table); first call "
            f"{d['goldeval_first_s'] / d['goldeval_s']:.2f}x a warm one",
        ))
        trec = metrics.get("trec_files")  # full-precision scores: issue 23's table
        if trec:
            sizes = sorted(trec, key=int)
            out.append((
                f"`trec` on TREC files of 4-decimal scores, {' / '.join(f'{int(n) // 1000}k' for n in sizes)} questions x 100",
                " / ".join(f"{trec[n]['goldeval_s']:.2f} s" for n in sizes),
                "pytrec_eval parse+evaluate " + " / ".join(f"{trec[n]['pytrec_s']:.2f} s" for n in sizes),
                " / ".join(f"{trec[n]['ratio']:.1f}x" for n in sizes)
                + ("; CPU seconds " + " / ".join(f"{trec[n]['cpu_ratio']:.1f}x" for n in sizes) if all("cpu_ratio" in trec[n] for n in sizes) else ""),
            ))
    if bm25:
        q, i, unit = bm25["queries_per_s"], bm25["index_docs_per_s"], _bm25_unit(bm25)
        out.append((f"BM25 queries, {bm25['corpus']}", f"{q['goldeval']:,} queries per {unit}",
                    f"bm25s, numba backend, one thread: {q['bm25s_numba_1_thread']:,} queries per {unit}",
                    f"{bm25['query_ratio_vs_numba']:.2f}x; same top 10, bit for bit: {bm25['same_top10']:.0%}"))
        out.append(("BM25 indexing, same corpus", f"{i['goldeval']:,} docs per {unit}",
                    f"bm25s directly {i['bm25s']:,} docs per {unit}", f"{bm25['index_ratio']:.2f}x"))
    if embed and "minilm" in embed and "best_peer" in embed["minilm"]:
        m = embed["minilm"]
        out.append((f"embedding {m['texts']} passages, `dense:minilm` ({m['runs_as']})", f"{m['goldeval_per_s']:.1f} passages/s",
                    f"best other path for the same model: {m['best_peer']} {m['best_peer_per_s']:.1f} passages/s",
                    f"{m['goldeval_per_s'] / m['best_peer_per_s']:.2f}x"))
    from bench.bench_embed_limit import OURS

    limit = _load("embed_limit")
    if limit:
        best = max(limit["rows"].items(), key=lambda kv: kv[1]["per_cpu_s"])
        ours = next(v for k, v in limit["rows"].items() if k.startswith(OURS))
        out.append((f"embedding the demo's windows ({limit['texts']} of {limit['windows']}, {limit['tokens']:,} tokens), "
                    "`dense:minilm`", f"{ours['per_s']:.1f} passages/s, {ours['per_cpu_s']:.1f} per CPU s",
                    f"this CPU's float32 sgemm limit for the model's products on the same tokens: "
                    f"{limit['limit_per_cpu_s']:.1f} per CPU s ({limit['cores']} cores: {limit['limit_per_s']:.1f} "
                    f"passages/s); fastest path measured: {best[0]} {best[1]['per_cpu_s']:.1f} per CPU s",
                    f"{ours['of_limit_cpu']:.2f} of the limit per CPU s (load {limit['load']})"))
    demo = _load("demo")
    if demo:
        for label, row in demo.items():
            if isinstance(row, dict):
                out.append((f"the first `make demo` from an empty workspace and user cache, {label}",
                            f"first scorecard after {row['first_scorecard_s']} s wall, {row['cpu_s']} CPU s",
                            f"{demo['cores']} cores, load {demo['load_before']} to {row['load_after']}",
                            f"exit {row['exit']}"))
    rerun = _load("rerun")
    if rerun:
        out.append(("re-running an unchanged evaluation (`goldeval demo`: stdlib docs, bm25 + minilm + hybrid, "
                    "140 questions, every statistic)",
                    f"{rerun['unchanged_s']:.2f} s wall, {rerun['unchanged_cpu_s']:.2f} CPU s",
                    f"the same with `--no-cache` (index, search, resample again): {rerun['no_cache_s']:.2f} s wall, "
                    f"{rerun['no_cache_cpu_s']:.2f} CPU s",
                    f"{rerun['no_cache_cpu_s'] / rerun['unchanged_cpu_s']:.1f}x less CPU; same scorecard: "
                    f"{'yes' if rerun['same_scorecard'] else 'NO'}"))
    if metrics:
        peaks = [metrics.get("bench_process_peak_mb", 0)]
        peaks += [r.get(key, 0) for r in metrics["dicts"].values() for key in ("peak_mb", "fresh_peak_mb")]
        peaks += [r.get("goldeval_peak_mb", 0) for r in metrics["trec_files"].values()]
        out.append(("`python -m bench metrics stats`, peak memory", f"{max(peaks):,} MB (largest goldeval process)",
                    "-", "-"))
    return out


# --- issue 23: realistic inputs -------------------------------------------------------------------------

COLUMNS_23 = ("work (issue 23)", "realistic inputs", "goldeval", "the peer", "ratio", "on the easy inputs")
Row = tuple[str, str, str, str, str, str]
PEER_NAMES = {"pytrec_eval": "pytrec_eval", "pytrec": "pytrec_eval (parse + evaluate)", "ranx_ranx": "ranx",
              "ranx": "ranx", "ir_measures": "ir_measures", "trec_eval": "trec_eval (C)", "walk": "the walk"}
"""How a tool's key in a results file reads in the table (bench_metrics writes ranx's time as `ranx_ranx_s`)."""


def _not_run(work: str, inputs: str, command: str) -> Row:
    return (work, inputs, f"not measured yet: `{command}`", "-", "-", "-")


def _times(row: dict[str, Any], prefix: str, suffix: str = "_s") -> dict[str, float]:
    """{tool: seconds} of the keys `<prefix><tool><suffix>` of a results row: medians, not a first call, a peak
    or (for `_s`) CPU seconds; with no prefix, not the realistic (`fresh_`) keys either."""
    out = {}
    for key, value in row.items():
        if not (key.startswith(prefix) and key.endswith(suffix)) or not isinstance(value, int | float):
            continue
        name = key[len(prefix):-len(suffix)]
        if not name or any(w in name for w in ("first", "peak")) or (suffix == "_s" and name.endswith("_cpu")):
            continue
        if not prefix and name.startswith("fresh_"):
            continue
        out[PEER_NAMES.get(name, name)] = float(value)
    return out


Timing = tuple[str, float, float]
"""(a peer, its seconds, goldeval's seconds on the same inputs)."""


def _timings(row: dict[str, Any], prefix: str, suffix: str = "_s", smaller: dict[str, Any] | None = None,
             at: str = "") -> tuple[float | None, list[Timing]]:
    """goldeval's seconds and each peer's in a results row; with `smaller`, also the peers measured only at a
    smaller size (ranx: minutes at 100k), named with `at` and set against goldeval's time at that size."""
    times = _times(row, prefix, suffix)
    ours = times.pop("goldeval", None)
    out = [(name, t, ours) for name, t in times.items()] if ours else []
    if smaller:
        small = _times(smaller, prefix, suffix)
        theirs = small.pop("goldeval", None)
        out += [(f"{name} {at}", t, theirs) for name, t in small.items() if name not in times and theirs]
    return ours, out


def _against(ours: float | None, timings: list[Timing], fmt: str = "{:.2f} s") -> tuple[str, str, str]:
    """(goldeval, the peers, the ratios): each peer as how many times goldeval's time it takes; the walk (a
    bare Python loop over the dicts: the floor of any reader of them) as how many walks goldeval takes."""
    if ours is None:
        return "not measured", "-", "-"
    peers = "; ".join(f"{name} {fmt.format(t)}" + (f" (goldeval {fmt.format(g)} there)" if g != ours else "")
                      for name, t, g in timings) or "none measured"
    ratios = "; ".join(f"{g / t:.2f}x the walk's time" if name == "the walk" else f"{t / g:.1f}x faster than {name}"
                       for name, t, g in timings) or "-"
    return fmt.format(ours), peers, ratios


def _size(table: dict[str, Any], n: int) -> dict[str, Any]:
    """A results row by size (JSON keys are strings; a row written from Python before dumping may be an int)."""
    return dict(table.get(str(n)) or table.get(n) or {})  # type: ignore[call-overload]


def _unmeasured(real: list[Timing], easy: list[Timing], peers: tuple[str, ...]) -> str:
    """"; not measured on these inputs: ..." for the issue's peers without a realistic timing (and where they
    were measured on the easy inputs only, say so), or ""."""
    def has(timings: list[Timing], peer: str) -> bool:
        return any(name.startswith(peer) for name, _, _ in timings)

    missing = [f"{p} (easy inputs only)" if has(easy, p) else p for p in peers if not has(real, p)]
    return "; not measured on these inputs: " + ", ".join(missing) if missing else ""


def _dicts_row(metrics: dict[str, Any] | None) -> Row:
    work, inputs = "metrics from Python dicts, 100k questions x 100 results (CPU seconds)", "a new str per doc id, the qrels' others again (as a database's rows give them)"
    if not metrics or "fresh_walk_cpu_s" not in _size(metrics.get("dicts", {}), 100_000):
        return _not_run(work, inputs, "python -m bench metrics")
    d, small = _size(metrics["dicts"], 100_000), _size(metrics["dicts"], 10_000)
    ours, walk = d["fresh_run_goldeval_cpu_s"], d["fresh_walk_cpu_s"]
    peers = [(name, d[f"fresh_run_{fn}_cpu_s"], ours) for name, fn in (("pytrec_eval", "pytrec"), ("ir_measures", "ir_measures"))
             if f"fresh_run_{fn}_cpu_s" in d]
    if "fresh_run_ranx_cpu_s" in small:
        peers.append(("ranx at 10k", small["fresh_run_ranx_cpu_s"], small["fresh_run_goldeval_cpu_s"]))
    theirs = "; ".join(f"{name} {t:.2f} s" + (f" (goldeval {g:.3f} s there)" if g != ours else "") for name, t, g in peers)
    python = d.get("fresh_run_goldeval_python_reader_cpu_s")
    ratios = (f"{ours / walk:.2f}x the walk's time (the target 1.3x"
              + (f"; with the Python reader, where no C compiler built the C one, {python / walk:.2f}x" if python else "")
              + "); " + "; ".join(f"{t / g:.1f}x faster than {name}" for name, t, g in peers))
    if "json_walk_cpu_s" in d:  # the same dicts as the json module reads them back from files
        ratios += (f"; read back by the json module: goldeval {d['json_run_goldeval_cpu_s']:.2f} s, the walk "
                   f"{d['json_walk_cpu_s']:.2f} s, {d['json_run_goldeval_cpu_s'] / d['json_walk_cpu_s']:.2f}x the walk's time")
    easy = f"one str per id, shared as a retriever returns them: goldeval {d['goldeval_s']:.2f} s; {d['goldeval_s'] / d['walk_s']:.2f}x the walk's time"
    if "pytrec_eval_s" in d:
        easy += f"; {d['pytrec_eval_s'] / d['goldeval_s']:.1f}x faster than pytrec_eval"
    return (work, inputs, f"{ours:.2f} s", f"the walk {walk:.2f} s; {theirs or 'no peer measured'}", ratios, easy)


def _trec_row(metrics: dict[str, Any] | None) -> Row:
    work, inputs = "`goldeval trec`, 10k questions x 100 (CPU seconds)", "scores in full precision as Python writes them (17 digits)"
    real = _size((metrics or {}).get("trec_files_full_precision", {}), 10_000)
    if not real:
        return _not_run(work, inputs, "python -m bench metrics")
    timings = _timings(real, "", "_cpu_s")
    ours, peers, ratios = _against(*timings, "{:.2f} CPU s")
    easy = _size(metrics.get("trec_files", {}), 10_000) if metrics else {}
    easy_text, easy_timings = "-", list[Timing]()
    if easy:
        easy_ours, easy_timings = _timings(easy, "", "_cpu_s")
        goldeval, _, easy_ratios = _against(easy_ours, easy_timings, "{:.2f} CPU s")
        easy_text = f"4-decimal scores: goldeval {goldeval}; {easy_ratios}"
    peers += _unmeasured(timings[1], easy_timings, ("trec_eval (C)", "pytrec_eval"))
    return work, inputs, ours, peers, ratios, easy_text


def _eval_row(evaluation: dict[str, Any] | None) -> Row:
    work = "`eval --retriever run:FILE --no-stats --json OUT`, 10k / 100k (/ 1M) questions x 100"
    inputs = "a golden set in JSONL and a TREC run of 17-digit scores, fresh processes"
    sizes = sorted((n for n in (evaluation or {}) if _size(evaluation or {}, int(n))), key=int)
    if not _size(evaluation or {}, 10_000):
        return _not_run(work, inputs, "python -m bench eval")
    rows = [_size(evaluation or {}, int(n)) for n in sizes]
    history = all("history_cpu_ratio" in r for r in rows)
    return (work, inputs,
            " / ".join(f"{r['eval_cpu_s']:.1f} CPU s, {r['eval_peak_mb']:,.0f} MB" for r in rows),
            "`goldeval trec -q` on the same judgments and run: "
            + " / ".join(f"{r['trec_cpu_s']:.1f} CPU s, {r['trec_peak_mb']:,.0f} MB" for r in rows),
            "eval takes " + " / ".join(f"{r['cpu_ratio']:.2f}x" for r in rows) + " trec's CPU (target 1.5x)"
            + ("; with the history on (the default): " + " / ".join(f"{r['history_cpu_ratio']:.2f}x" for r in rows)
               if history else "") + _eval_growth(rows),
            "-")


def _count(n: int) -> str:
    """10k, 100k, 1M: a number of questions as the table writes it."""
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


def _eval_growth(rows: list[dict[str, Any]]) -> str:
    """From each size to the next (10x the questions): how eval's CPU grew, its user and system parts apart
    (`bench_eval.growth`), and at the largest size the system CPU beside the machine's prices (`memory_line`)."""
    from bench.bench_eval import growth, memory_line

    steps = "".join(
        f"; {_count(small)} -> {_count(large)}: eval CPU {grew['eval']['cpu_s']:.1f}x (user {grew['eval']['user_s']:.1f}x, "
        f"system {grew['eval']['sys_s']:.1f}x), trec {grew['trec']['cpu_s']:.1f}x" for small, large, grew in growth(rows))
    largest = memory_line(rows[-1]) if rows else ""
    return steps + (f"; at {_count(rows[-1]['questions'])}, {largest}" if largest else "")


def _bm25_unit(bm25: dict[str, Any]) -> str:
    """What the BM25 rates count: CPU seconds since the bench says how it timed (issue 23), wall seconds before."""
    return "CPU s" if "timing" in bm25 else "s (wall)"


def _bm25_ratio(row: dict[str, Any]) -> str:
    rounds = row.get("query_ratio_per_round")
    spread = f" (per round {rounds['low']:.2f}-{rounds['high']:.2f}x)" if rounds else ""
    return f"{row['query_ratio_vs_numba']:.2f}x{spread}"


def _bm25_row(bm25: dict[str, Any] | None) -> Row:
    work = "BM25 queries, 1,000 queries, top 100, one thread"
    real = (bm25 or {}).get("real")
    if not bm25 or not real:
        return _not_run(work, "real text", "python -m bench bm25")
    q, unit, lines = real["queries_per_s"], _bm25_unit(bm25), bm25.get("real_lines")
    beside = f"{bm25['corpus']}: {_bm25_ratio(bm25)}; same top 10: {bm25['same_top10']:.0%}"
    if lines:
        beside = f"{lines['corpus']}: {_bm25_ratio(lines)}; same top 10: {lines['same_top10']:.0%}. {beside}"
    return (work, f"real text: {real['corpus']}", f"{q['goldeval']:,} queries per {unit}",
            f"bm25s, numba backend, one thread, returning ids and scores: {q['bm25s_numba_1_thread']:,} queries per {unit}",
            f"{_bm25_ratio(real)} bm25s' rate; same top 10 and scores, bit for bit: {real['same_top10']:.0%}", beside)


def _sweep_rerun_row(rerun: dict[str, Any] | None, sweep: dict[str, Any] | None) -> Row:
    work = "re-running an unchanged sweep, 12 Cranfield configurations (`examples/sweep_cranfield.toml`)"
    inputs = "Cranfield: 1,400 abstracts, 225 questions, 10,000 resamples; `goldeval sweep` in a fresh process"
    if not rerun:
        return _not_run(work, inputs, "python -m bench sweep_rerun")
    kept = (rerun.get("statistics") or {}).get("cached") == 1
    same_sweep = str((sweep or {}).get("sweep", "")).endswith("sweep_cranfield.toml")
    cold = ((sweep or {}).get("medians") or {}).get("one process") if same_sweep else None
    peer, ratio = "-", ""
    if cold:
        peer = f"the same sweep from an empty workspace (`python -m bench sweep`, one process): {cold['cpu_s']:.0f} CPU s"
        ratio = f"{cold['cpu_s'] / rerun['rerun_cpu_s']:.1f}x less CPU; "
    return (work, inputs, f"{rerun['rerun_cpu_s']:.2f} CPU s", peer,
            f"{ratio}statistics read back: {'yes' if kept else 'NO'}; same numbers: {'yes' if rerun['same_numbers'] else 'NO'}",
            "-")


def _ray_row(sweep: dict[str, Any] | None) -> Row:
    work = "`goldeval sweep --workers 2` (Ray) from an empty workspace, 12 Cranfield configurations"
    inputs = "Cranfield, `examples/sweep_cranfield.toml`: every text embedded, 6 base runs searched"
    if not sweep or "medians" not in sweep:
        return _not_run(work, inputs, "python -m bench sweep")
    inputs = inputs.replace("every text", f"{sweep['texts_embedded']:,} texts")
    m, r = sweep["medians"], sweep["ratios"]
    two, one_p, one_w = m["ray, 2 workers"], m["one process"], m["ray, 1 worker"]

    def x(name: str) -> str:
        return f"{r[name]['median']:.2f}x ({r[name]['min']:.2f}-{r[name]['max']:.2f})"

    return (work, inputs, f"{two['wall_s']:.0f} s wall, {two['cpu_s']:.0f} CPU s",
            f"the same sweep in one process: {one_p['wall_s']:.0f} s wall, {one_p['cpu_s']:.0f} CPU s; on 1 worker "
            f"{one_w['wall_s']:.0f} s wall, {one_w['cpu_s']:.0f} CPU s",
            f"speed-up against one process {x('speedup_2_workers_vs_one_process')}, at {x('cpu_2_workers_vs_one_process')} "
            f"the CPU; against 1 worker {x('speedup_2_vs_1_worker')} (embedding {x('embed_speedup_2_vs_1_worker')}); "
            f"medians of {sweep['rounds']} round(s) on {sweep['cores']} cores at load {sweep['load_average'][0]:.1f}-"
            f"{sweep['load_average'][1]:.1f}; metrics, intervals and p-values identical: "
            f"{'yes' if sweep['metrics_identical'] else 'NO'}", "-")


def rows_issue23() -> list[Row]:
    """(work, realistic inputs, goldeval, the peer, ratio, on the easy inputs) per row of issue 23's table."""
    metrics, sweep = _load_all("metrics"), _load("sweep")
    builders: list[tuple[str, Callable[[], Row]]] = [
        ("metrics", lambda: _dicts_row(metrics)), ("metrics", lambda: _trec_row(metrics)),
        ("eval", lambda: _eval_row(_load("eval"))), ("bm25", lambda: _bm25_row(_load("bm25"))),
        ("sweep_rerun", lambda: _sweep_rerun_row(_load("sweep_rerun"), sweep)), ("sweep", lambda: _ray_row(sweep))]
    out = []
    for area, build in builders:
        try:
            out.append(build())
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:  # a results file of an older shape
            out.append((f"(the {area} row)", "-", f"bench/results/{area}.json has another shape ({type(exc).__name__}: "
                        f"{exc}): run `python -m bench {area}` again", "-", "-", "-"))
    return out


def markdown() -> str:
    """Issue 12's table."""
    lines = ["| work | goldeval | what a user could pick instead | ratio |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows()]
    return "\n".join(lines)


def markdown_issue23() -> str:
    """Issue 23's table: realistic inputs first, easy ones beside."""
    lines = ["| " + " | ".join(COLUMNS_23) + " |", "|" + "---|" * len(COLUMNS_23)]
    lines += ["| " + " | ".join(row) + " |" for row in rows_issue23()]
    return "\n".join(lines)


def main() -> None:
    print("Issue 23's table: realistic inputs (the easy ones beside), from bench/results/:")
    print(markdown_issue23())
    print("\nIssue 12's table, from bench/results/ (rows of benchmarks not run yet are left out):")
    print(markdown())


if __name__ == "__main__":
    main()

