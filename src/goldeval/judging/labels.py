"""What a machine judge is asked, and the golden sets its labels make, kept apart from the people's.

`collect_asks` takes every passage of every retriever's top k (at the results' level, as the pool does:
`goldeval.judging.pool`), the unjudged ones to fill the gaps and, unless asked not to, those people
judged too: only they can say how far the judge agrees with people. The golden set on disk is never
touched; the three golden sets of the ranking check are built in memory:

- `people`: the set as it is;
- `filled`: the people's judgments, and a machine label wherever no person judged (`judge: machine:MODEL`);
- `machine`: the machine's labels only, on the same questions with the same intents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from goldeval.golden.model import GoldenSet, Judgment, Qrels
from goldeval.judging.grader import PROMPT_VERSION, Ask
from goldeval.judging.pool import judged_keys, passage_keys, read_cards
from goldeval.scorecard.model import Scorecard

Key = tuple[str, str]
"""(question id, passage at the results' level)."""


def collect_asks(cards: Sequence[Scorecard], golden: GoldenSet, *, k: int,
                 texts: Mapping[str, tuple[str, str]] | None = None,
                 judged_too: bool = True) -> tuple[list[Ask], dict[Key, int]]:
    """The passages to grade, in golden-set order, and the people's grade of those people judged."""
    level = cards[0].level if cards else "doc"
    document_of, snippets = read_cards(cards)
    known = golden.by_id()
    found: dict[str, dict[str, tuple[str, str]]] = {}
    people: dict[Key, int] = {}
    for card in cards:
        for r in card.retrievers:
            for q in r.questions:
                if q.id not in known:
                    continue
                judged = judged_keys(golden, q.id, level, document_of)
                for key, hit in passage_keys(q.top[:k], level):
                    if key in judged:
                        if not judged_too:
                            continue
                        people[(q.id, key)] = judged[key]
                    found.setdefault(q.id, {}).setdefault(key, (texts or {}).get(key) or snippets.get(hit.id, ("", "")))
    asks = [Ask(q.id, q.question, key, text, title)
            for q in golden for key, (title, text) in found.get(q.id, {}).items()]
    return asks, people


def filled(golden: GoldenSet, machine: Mapping[Key, int], model: str, people: Mapping[Key, int]) -> GoldenSet:
    """The people's set with a machine label on every graded passage no person judged."""
    qrels = Qrels(list(golden.qrels))
    for (qid, passage), grade in machine.items():
        if (qid, passage) not in people and not golden.qrels.is_judged(qid, passage):
            qrels.add(_judgment(qid, passage, grade, model))
    return GoldenSet(list(golden.questions), qrels, path=golden.path, version=golden.version)


def machine_only(golden: GoldenSet, machine: Mapping[Key, int], model: str) -> GoldenSet:
    """The same questions judged by the machine alone."""
    qrels = Qrels([_judgment(qid, passage, grade, model) for (qid, passage), grade in machine.items()])
    return GoldenSet(list(golden.questions), qrels, path=golden.path, version=golden.version)


def _judgment(qid: str, passage: str, grade: int, model: str) -> Judgment:
    return Judgment(qid, passage, grade, f"machine:{model}", "", f"prompt {PROMPT_VERSION}")
