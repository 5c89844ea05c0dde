"""Golden set loading and validation speed, goldeval beside the plain-Python way.

1. Loading a 10k-question JSONL golden set with every check, beside a bare `json.loads` loop.
2. Suggesting ids for unknown expected ids against a 10k-id corpus: goldeval's trigram shortlist +
   difflib beside plain `difflib.get_close_matches` over every id (timed on a sample, per id), and how
   often both agree on the best suggestion.

Prints the timings and ratios and writes bench/results/golden.json.
"""

from __future__ import annotations

import difflib
import json
import random
import tempfile
import time
from pathlib import Path

from bench import write_results
from goldeval.golden import GoldenSet, Question, load_golden, validate_golden

N_IDS = 10_000
N_QUESTIONS = 10_000
N_UNKNOWN = 1_000
PEER_SAMPLE = 20
WORDS = ["install", "config", "stash", "commit", "branch", "merge", "json", "http", "socket", "thread",
         "async", "path", "logging", "pickle", "regex", "datetime"]


def corpus_ids(rng: random.Random) -> list[str]:
    return [f"{rng.choice(WORDS)}/{rng.choice(WORDS)}-{rng.choice(WORDS)}-{n}.md" for n in range(N_IDS)]


def typo(rng: random.Random, text: str) -> str:
    i = rng.randrange(len(text) - 4)
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]


def bench_load(ids: list[str], rng: random.Random) -> dict[str, float]:
    lines = [json.dumps({"id": f"q{n}", "question": f"how do I use {rng.choice(WORDS)} number {n}?",
                         "expected": rng.sample(ids, 2), "tags": [rng.choice(WORDS)]}) for n in range(N_QUESTIONS)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "golden.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        started = time.perf_counter()
        load_golden(path, corpus=set(ids))
        goldeval_s = time.perf_counter() - started
        started = time.perf_counter()
        with path.open(encoding="utf-8") as handle:
            [json.loads(line) for line in handle if line.strip()]
        peer_s = time.perf_counter() - started
    return {"goldeval_s": round(goldeval_s, 3), "json_loads_s": round(peer_s, 3),
            "ratio_goldeval_over_peer": round(goldeval_s / peer_s, 2)}


def bench_suggest(ids: list[str], rng: random.Random) -> dict[str, float]:
    known = set(ids)
    unknown: list[str] = []
    while len(unknown) < N_UNKNOWN:
        candidate = typo(rng, rng.choice(ids))
        if candidate not in known:  # swapping two equal letters changes nothing
            unknown.append(candidate)
    golden = GoldenSet([Question(f"q{n}", "q?", {u: 1}, line=n + 1) for n, u in enumerate(unknown)])
    started = time.perf_counter()
    problems = validate_golden(golden, known)
    goldeval_s = time.perf_counter() - started
    ours = {p.value: p.reason for p in problems if p.value is not None}
    sample = unknown[:PEER_SAMPLE]
    agree = 0
    started = time.perf_counter()
    for value in sample:
        best = difflib.get_close_matches(value, ids, n=1)
        agree += bool(best) and f"did you mean `{best[0]}`" in ours.get(value, "")
    peer_per_id = (time.perf_counter() - started) / len(sample)
    return {"goldeval_s": round(goldeval_s, 3), "goldeval_per_id_ms": round(1000 * goldeval_s / N_UNKNOWN, 3),
            "difflib_per_id_ms": round(1000 * peer_per_id, 3),
            "difflib_estimated_s": round(peer_per_id * N_UNKNOWN, 1),
            "speedup": round(peer_per_id * N_UNKNOWN / goldeval_s, 1),
            "same_best_suggestion": f"{agree}/{len(sample)}"}


def main() -> None:
    rng = random.Random(7)
    ids = corpus_ids(rng)
    load = bench_load(ids, rng)
    suggest = bench_suggest(ids, rng)
    result = {"setup": {"corpus_ids": N_IDS, "questions": N_QUESTIONS, "unknown_ids": N_UNKNOWN},
              "load_and_validate": load, "did_you_mean": suggest}
    print(f"golden: load + validate {N_QUESTIONS} questions against {N_IDS} ids: goldeval {load['goldeval_s']} s, "
          f"bare json.loads {load['json_loads_s']} s, ratio {load['ratio_goldeval_over_peer']}")
    print(f"golden: did-you-mean for {N_UNKNOWN} unknown ids among {N_IDS}: goldeval {suggest['goldeval_s']} s "
          f"({suggest['goldeval_per_id_ms']} ms/id), plain difflib {suggest['difflib_per_id_ms']} ms/id "
          f"(~{suggest['difflib_estimated_s']} s), speedup {suggest['speedup']}x, same best suggestion "
          f"{suggest['same_best_suggestion']}")
    print(f"wrote {write_results('golden', result)}")


if __name__ == "__main__":
    main()
