"""Score a run with goldeval's metric engine: per-question arrays, several cut-offs in one pass.

Run: python examples/metrics_evaluate.py
"""

from goldeval.metrics import evaluate_ranked, evaluate_scores, parse_metric

# Graded judgments: >= 1 is relevant (higher is better), 0 judged non-relevant. An empty dict would
# be an off-topic question: leave those out of averages and report them apart.
qrels = {
    "q1": {"json.rst": 2, "pickle.rst": 1, "csv.rst": 0},
    "q2": {"re.rst": 1},
    "q3": {"asyncio.rst": 1},
}
# Scores per question; order comes from the one ranking rule (score desc, ties by id desc).
run = {
    "q1": {"pickle.rst": 9.1, "csv.rst": 7.0, "json.rst": 7.0},  # tie: "json.rst" ranks before "csv.rst"
    "q2": {"glob.rst": 3.2, "fnmatch.rst": 2.9, "re.rst": 2.5},
    # q3 retrieved nothing: it scores 0 everywhere, it is not dropped.
}
metrics = [parse_metric(m) for m in ("hit@1", "hit@3", "mrr", "ndcg@3", "recall@3", "precision@3", "map")]

values = evaluate_scores(qrels, run, metrics)
print("question  " + "  ".join(f"{str(m):>11}" for m in metrics))
for i, qid in enumerate(qrels):
    print(f"{qid:<8}  " + "  ".join(f"{values[m][i]:>11.4f}" for m in metrics))
print(f"{'mean':<8}  " + "  ".join(f"{values[m].mean():>11.4f}" for m in metrics))

# Lists already in rank order (a search API's top-k) go through evaluate_ranked; same numbers.
ranked = {"q1": ["pickle.rst", "json.rst", "csv.rst"], "q2": ["glob.rst", "fnmatch.rst", "re.rst"]}
same = evaluate_ranked(qrels, ranked, metrics)
assert all((same[m] == values[m]).all() for m in metrics)
