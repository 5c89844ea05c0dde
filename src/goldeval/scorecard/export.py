"""TREC files of an evaluation that give back its numbers (issue 18, item 4).

`goldeval eval --qrels Q --run R` writes what the metric engine scored: per answerable question the
judged ids at the evaluation's level (`qid 0 docno grade`) and the whole ranking to the retrieved
depth (`qid Q0 docno rank score tag`), so `goldeval trec -c Q R`, trec_eval or pytrec_eval on them give
the evaluation's hit@k (success_k), recall@k (recall_k), precision@k (P_k), nDCG@k (ndcg_cut_k), MRR
(recip_rank) and MAP (map). The results JSON keeps only the top max(k) of each question for the
reports; the full-depth ranking lives in the run file (and in the workspace's stored runs).

What TREC files cannot hold is left out and said (they have no comment syntax: trec_eval refuses any
line that is not a judgment or a result):
- off-topic questions: TREC has no intent, and their judged-not-relevant ids would read back as an
  answerable topic scoring 0 (`golden.answerable` decides, as everywhere);
- synthetic questions beside the headline (`RetrieverResult.headline_questions`): TREC has no
  provenance, and trec_eval would pool them into the numbers the headline keeps them out of;
- a retriever that cut its lists short (`goldeval.scorecard.depth`): the run holds what it returned, and
  the note names the metrics past it, which trec_eval computes but the evaluation shows `n/a`;
- a question whose retriever returned nothing or errored has no line in the run: `goldeval trec -c`
  (trec_eval -c) scores it 0 as the evaluation does; without -c it is skipped;
- where the retriever's scores would not give back the scored order under trec_eval's rule (score
  descending, ties by docno descending: a later chunk written under its own id, or ids mapped to
  documents), the score column is the reverse rank instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from goldeval.golden.trec import check_trec_ids, qrels_text
from goldeval.run import run_text
from goldeval.scorecard.model import RetrieverResult, Scorecard
from goldeval.store.atomic import write_atomic


def write_qrels(card: Scorecard, path: str | Path) -> list[str]:
    """Write the evaluation's qrels (its headline questions at its level); return what was left out."""
    first = card.retrievers[0]
    judged = {q.id: first.scored[q.id][0] for q in first.headline_questions if q.id in first.scored}
    check_trec_ids([(qid, list(grades), None) for qid, grades in judged.items()], path)
    write_atomic(path, qrels_text(judged))
    return left_out(card)


def write_run(result: RetrieverResult, path: str | Path) -> list[str]:
    """Write one retriever's full-depth ranking as scored; return what the file cannot say."""
    headline = result.headline_questions
    ranking = {q.id: result.scored[q.id][1] for q in headline if q.id in result.scored and result.scored[q.id][1]}
    text, rescored = run_text(ranking, result.name, path)
    write_atomic(path, text)
    notes = []
    empty = [q.id for q in headline if not ranking.get(q.id)]
    if empty:
        notes.append(f"{len(empty)} question(s) with no result ({_few(empty)}) have no line in {path}: "
                     "`goldeval trec -c` scores them 0, as the evaluation does")
    if (got := result.returned) is not None and (gone := result.unmeasurable):
        notes.append(f"{result.name} returned at most {got.max} results per question of the {got.asked} asked: in "
                     f"{path}, {', '.join(str(m) for m in gone)} are past what it returned (the evaluation shows "
                     "them n/a, and compares and gates none of them); raise the retriever's own k")
    if rescored:
        notes.append(f"{len(rescored)} question(s) of {path} have reverse ranks as scores ({_few(rescored)}): their "
                     "ids at this level would re-sort the retriever's tied or repeated scores")
    return notes


def left_out(card: Scorecard) -> list[str]:
    """What TREC files of this evaluation cannot hold: its off-topic questions and the synthetic ones
    beside its headline."""
    off = [q.id for q in card.retrievers[0].off_topic] if card.retrievers else []
    beside = [q.id for q in card.retrievers[0].synthetic_questions] if card.retrievers else []
    notes = [f"{len(off)} off-topic question(s) left out ({_few(off)}): TREC has no intent, and the evaluation "
             "never averages them in"] if off else []
    if beside:
        notes.append(f"{len(beside)} synthetic question(s) left out ({_few(beside)}): the evaluation reports them "
                     "beside the headline, never pooled in")
    return notes


def run_paths(path: Path, names: Sequence[str]) -> list[Path]:
    """One run file per retriever: `path` itself for one, `stem.NAME.suffix` for several."""
    if len(names) == 1:
        return [path]
    safe = ["".join(c if c.isalnum() or c in "-_" else "_" for c in name) for name in names]
    return [path.with_name(f"{path.stem}.{s}{path.suffix}") for s in safe]


def _few(ids: Sequence[str], limit: int = 5) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
