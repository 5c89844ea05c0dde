"""Review the demo golden set against plain BM25: for each question, the top modules and where each
expected module ranks. Read every miss and decide whether the label or the retriever is wrong.

    .venv/bin/python tools/review_demo.py                 # every question
    .venv/bin/python tools/review_demo.py --misses        # only questions whose first hit is below --k
    .venv/bin/python tools/review_demo.py --id q017 --top 10

Deliberately independent of goldeval's retriever and metrics code: it calls bm25s directly (same
tokenizer settings as goldeval's `bm25`: lower-case, English stopwords, Snowball English stemming,
title + text) and parses the JSONL itself, so a bug there cannot hide a bad label here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer

from goldeval.corpus.stdlib import build_stdlib_corpus
from goldeval.golden.demo import demo_golden_path


def load_questions(path: Path) -> list[dict]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            record = json.loads(line)
            record["line"] = number
            questions.append(record)
    return questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--golden", type=Path, default=demo_golden_path())
    parser.add_argument("--workspace", type=Path, default=Path(".goldeval"))
    parser.add_argument("--k", type=int, default=5, help="a question is a miss when no expected module is in the top k")
    parser.add_argument("--top", type=int, default=5, help="how many results to print per question")
    parser.add_argument("--misses", action="store_true", help="print only the misses (and the off-topic questions)")
    parser.add_argument("--id", action="append", help="print only these question ids")
    args = parser.parse_args(argv)

    corpus = build_stdlib_corpus(workspace=args.workspace)
    for warning in corpus.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    ids = list(corpus.documents)
    stemmer = Stemmer.Stemmer("english")
    tokenizer = Tokenizer(lower=True, stopwords="english", stemmer=stemmer.stemWord)
    texts = [f"{d.title}\n{d.text}" for d in corpus]
    model = bm25s.BM25(k1=1.5, b=0.75)
    model.index(tokenizer.tokenize(texts, update_vocab=True, return_as="tuple", show_progress=False), show_progress=False)
    vocab = tokenizer.get_vocab_dict()

    questions = load_questions(args.golden)
    first_ranks: list[int | None] = []
    for q in questions:
        tokens = [t for t in tokenizer.tokenize([q["question"]], update_vocab=False, return_as="string", show_progress=False)[0] if t in vocab]
        scores = model.get_scores(tokens) if tokens else np.zeros(len(ids))
        order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))  # ties: id, deterministic
        rank_of = {ids[i]: r for r, i in enumerate(order, 1) if scores[i] > 0}
        expected = q["expected"]
        ranks = {e: rank_of.get(e) for e in expected}
        found = [r for r in ranks.values() if r is not None]
        first = min(found) if found else None
        if expected:
            first_ranks.append(first)
        miss = bool(expected) and (first is None or first > args.k)
        if args.id and q["id"] not in args.id:
            continue
        if args.misses and not miss and expected:
            continue
        label = "OFF-TOPIC" if not expected else ("MISS" if miss else "ok")
        print(f"{q['id']} [{label}] {q['question']}   tags={','.join(q.get('tags', []))}")
        if expected:
            shown = ", ".join(f"{e}@{r if r is not None else '-'}" for e, r in ranks.items())
            print(f"    expected: {shown}")
        top = "  ".join(f"{ids[i]} ({scores[i]:.2f})" for i in order[: args.top] if scores[i] > 0)
        print(f"    top: {top or '(nothing scored)'}")
        if q.get("notes"):
            print(f"    notes: {q['notes']}")

    n = len(first_ranks)
    if n:
        hit1 = sum(1 for r in first_ranks if r == 1) / n
        hitk = sum(1 for r in first_ranks if r is not None and r <= args.k) / n
        mrr = sum(1 / r for r in first_ranks if r is not None and r <= 10) / n
        print(f"\n{n} answerable: hit@1 {hit1:.3f}  hit@{args.k} {hitk:.3f}  MRR@10 {mrr:.3f}; "
              f"{len(questions) - n} off-topic", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
