"""The table of issue 12 ("measured side by side"), rebuilt from bench/results/*.json.

`python -m bench` prints it after the benchmarks it ran; `python -m bench.table` prints it from the last
results (Markdown, as the README's benchmark table). A row whose benchmark has not run says so.
"""

from __future__ import annotations

import json
from typing import Any

from bench import RESULTS_DIR


def _load(area: str) -> dict[str, Any] | None:
    path = RESULTS_DIR / f"{area}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def rows() -> list[tuple[str, str, str, str]]:
    """(work, goldeval, what a user could pick instead, ratio) per row of the issue's table."""
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
            f"(ids shared as a retriever returns them; realistic, a new str per id and others in the qrels, as read "
            f"from files: {d['fresh_goldeval_s'] / d['fresh_walk_s']:.2f}x the walk, {d['fresh_goldeval_s']:.2f} s against "
            f"{d['fresh_walk_s']:.2f} s); first call {d['goldeval_first_s'] / d['goldeval_s']:.2f}x a warm one"
            if "fresh_walk_s" in d else
            f"{d['pytrec_eval_s'] / d['goldeval_s']:.1f}x pytrec_eval; {d['goldeval_s'] / d['walk_s']:.2f}x the walk; "
            f"first call {d['goldeval_first_s'] / d['goldeval_s']:.2f}x a warm one",
        ))
        for key, what in (("trec_files", "4-decimal scores"), ("trec_files_full_precision", "full-precision scores "
                                                                    "as Python writes them (17 digits)")):
            trec = metrics.get(key)
            if not trec:
                continue
            sizes = sorted(trec, key=int)
            out.append((
                f"`trec` on TREC files of {what}, {' / '.join(f'{int(n) // 1000}k' for n in sizes)} questions x 100",
                " / ".join(f"{trec[n]['goldeval_s']:.2f} s" for n in sizes),
                "pytrec_eval parse+evaluate " + " / ".join(f"{trec[n]['pytrec_s']:.2f} s" for n in sizes),
                " / ".join(f"{trec[n]['ratio']:.1f}x" for n in sizes)
                + ("; CPU seconds " + " / ".join(f"{trec[n]['cpu_ratio']:.1f}x" for n in sizes) if all("cpu_ratio" in trec[n] for n in sizes) else ""),
            ))
    if bm25:
        q, i = bm25["queries_per_s"], bm25["index_docs_per_s"]
        out.append((f"BM25 queries, {bm25['corpus']}", f"{q['goldeval']:,} queries/s",
                    f"bm25s, numba backend, one thread: {q['bm25s_numba_1_thread']:,} queries/s",
                    f"{bm25['query_ratio_vs_numba']:.2f}x; same top 10, bit for bit: {bm25['same_top10']:.0%}"))
        out.append(("BM25 indexing, same corpus", f"{i['goldeval']:,} docs/s", f"bm25s directly {i['bm25s']:,} docs/s",
                    f"{bm25['index_ratio']:.2f}x"))
        real = bm25.get("real")
        if real:
            rq = real["queries_per_s"]
            out.append((f"BM25 queries on real text: {real['corpus']}", f"{rq['goldeval']:,} queries/s",
                        f"bm25s, numba backend, one thread: {rq['bm25s_numba_1_thread']:,} queries/s",
                        f"{real['query_ratio_vs_numba']:.2f}x; same top 10 and float32 scores, bit for bit: "
                        f"{real['same_top10']:.0%}"))
    if embed and "minilm" in embed and "best_peer" in embed["minilm"]:
        m = embed["minilm"]
        out.append((f"embedding {m['texts']} passages, `dense:minilm` ({m['runs_as']})", f"{m['goldeval_per_s']:.1f} passages/s",
                    f"best other path for the same model: {m['best_peer']} {m['best_peer_per_s']:.1f} passages/s",
                    f"{m['goldeval_per_s'] / m['best_peer_per_s']:.2f}x"))
    limit = _load("embed_limit")
    if limit:
        best = max(limit["rows"].items(), key=lambda kv: kv[1]["per_cpu_s"])
        ours = next(v for k, v in limit["rows"].items() if k.startswith("goldeval"))
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
    sweep_rerun = _load("sweep_rerun")
    if sweep_rerun:
        kept = (sweep_rerun.get("statistics") or {}).get("cached") == 1
        out.append(("re-running an unchanged sweep (`examples/sweep_cranfield.toml`: 12 configurations, 225 "
                    "questions, 10,000 resamples; issue 23)", f"{sweep_rerun['rerun_cpu_s']:.2f} CPU s",
                    "-", f"statistics read back: {'yes' if kept else 'NO'}; same numbers: "
                    f"{'yes' if sweep_rerun['same_numbers'] else 'NO'}"))
    evaluation = _load("eval")
    if evaluation:
        sizes = sorted(evaluation, key=int)
        out.append((
            "`eval --retriever run:FILE --no-stats --json OUT`, " + " / ".join(f"{int(n) // 1000}k" for n in sizes)
            + " questions x 100, 17-digit scores (issue 23)",
            " / ".join(f"{evaluation[n]['eval_cpu_s']:.1f} CPU s, {evaluation[n]['eval_peak_mb']:,.0f} MB" for n in sizes),
            "`goldeval trec -q` on the same judgments and run " + " / ".join(
                f"{evaluation[n]['trec_cpu_s']:.1f} CPU s, {evaluation[n]['trec_peak_mb']:,.0f} MB" for n in sizes),
            "eval / trec: " + " / ".join(f"{evaluation[n]['cpu_ratio']:.1f}x" for n in sizes) + " (CPU; target 1.5x)"
            + ("; with the history on (the default): " + " / ".join(
                f"{evaluation[n]['history_cpu_ratio']:.1f}x" for n in sizes) if all(
                "history_cpu_ratio" in evaluation[n] for n in sizes) else ""),
        ))
    if metrics:
        peaks = [metrics.get("bench_process_peak_mb", 0)]
        peaks += [r.get(key, 0) for r in metrics["dicts"].values() for key in ("peak_mb", "fresh_peak_mb")]
        peaks += [r.get("goldeval_peak_mb", 0) for r in metrics["trec_files"].values()]
        out.append(("`python -m bench metrics stats`, peak memory", f"{max(peaks):,} MB (largest goldeval process)",
                    "-", "-"))
    return out


def markdown() -> str:
    lines = ["| work | goldeval | what a user could pick instead | ratio |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows()]
    return "\n".join(lines)


def main() -> None:
    print(markdown())


if __name__ == "__main__":
    main()

