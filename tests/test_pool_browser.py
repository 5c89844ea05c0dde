"""Pooled judging end to end on the demo-like data (examples/data/corpus), in a real Chromium.

bm25, dense:minilm and hybrid are evaluated for real; their pooled top 5 holds passages the golden set
never judged; a person judges a few with the keyboard; the verdicts land in the golden-set file with
provenance (who, when, which pool) and in its changelog; re-scoring shows judged@k and metric ranges.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_fixtures import browser, page, screenshot  # noqa: F401 - fixtures
from goldeval.corpus import load_corpus
from goldeval.evaluation import evaluate
from goldeval.golden.changelog import read_changes
from goldeval.golden.io import load_golden
from goldeval.golden.versions import freeze
from goldeval.judging.edits import GoldenFile
from goldeval.judging.pool import Pool, build_pool
from goldeval.judging.prelabel import prelabel
from goldeval.metrics.definitions import Metric
from goldeval.report.markdown import scorecard_markdown
from goldeval.scorecard.model import Scorecard
from goldeval.web.app import make_server, start_in_thread
from goldeval.web.pool import PoolStore
from hang_guard import HANG_GUARD

pytestmark = [pytest.mark.browser, pytest.mark.models]

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "data" / "corpus"
RETRIEVERS = ["bm25", "dense:minilm", "hybrid:bm25+dense:minilm"]
JUDGE_MODULE = '''
def judge(prompt):
    """A stand-in model: grades a passage about stashing 2, anything else 0 (the judge's 0-3 prompt)."""
    passage = prompt.split("Passage (", 1)[1].split(")", 1)[0]
    return "2" if "stash" in passage else "0"
'''


@pytest.fixture()
def judged_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    golden_path = tmp_path / "golden.jsonl"
    shutil.copy(REPO / "examples" / "data" / "golden_example.jsonl", golden_path)
    freeze(load_golden(golden_path), by="ana")
    corpus = load_corpus(CORPUS)
    card = evaluate(RETRIEVERS, load_golden(golden_path), corpus=corpus, k=(1, 5), workspace=tmp_path / "ws")
    results = tmp_path / "results.json"
    card.save(results)
    pool = build_pool([Scorecard.load(results)], ["results"], load_golden(golden_path), k=5,
                      texts={d.id: (d.title, d.text) for d in corpus})
    (tmp_path / "stand_in_judge.py").write_text(JUDGE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    suggestions = prelabel(pool.items, "stand_in_judge:judge", tmp_path / "ws")
    store = PoolStore(pool, GoldenFile(golden_path, judge="ana"), suggestions)
    server = make_server(pool=store, port=0)
    thread = start_in_thread(server)
    yield {"golden": golden_path, "card": card, "pool": pool, "url": server.page_url("pool"), "corpus": corpus, "ws": tmp_path / "ws"}
    server.shutdown()
    server.server_close()
    thread.join(timeout=HANG_GUARD)


def _check_pool(pool: Pool, card: Scorecard) -> None:
    """Every pooled passage is unjudged for its question and in the top 5 of the retrievers named."""
    golden_ids = {q.id for q in card.retrievers[0].questions}
    systems = {r.name: {q.id: q for q in r.questions} for r in card.retrievers}
    assert set(pool.systems) == set(RETRIEVERS)
    for item in pool.items:
        assert item.question_id in golden_ids
        for found in item.found_by:
            q = systems[found.system][item.question_id]
            docs = list(dict.fromkeys(h.doc for h in q.top))[:5]
            assert docs[found.rank - 1] == item.passage
            assert item.passage not in q.expected and item.passage not in q.nonrelevant
    assert any(len(item.found_by) == 3 for item in pool.items)  # found by all three
    assert any(len(item.found_by) == 1 for item in pool.items)  # found by one only: pooling's point


def test_pool_judge_in_chromium_writes_back_with_provenance_and_rescores(
    judged_setup: dict[str, Any], page: Any,  # noqa: F811
) -> None:
    pool: Pool = judged_setup["pool"]
    _check_pool(pool, judged_setup["card"])
    assert all(pool.items[i].question_id == pool.items[0].question_id for i in range(3))
    page.goto(judged_setup["url"])
    page.wait_for_selector("#main:not([hidden])")
    first = pool.items[0]
    assert page.locator("#question").inner_text() == first.question
    assert page.locator("#passage-id").inner_text() == first.passage
    assert page.locator("#passage-text mark").count() > 0  # the question's words highlighted
    assert "dense:minilm #" in page.locator("#found").inner_text() or "bm25 #" in page.locator("#found").inner_text()

    def press(key: str, saved: int) -> None:
        page.keyboard.press(key)
        page.wait_for_selector(f'body[data-saved="{saved}"]')

    press("2", 1)  # first passage: relevant, grade 2
    press("n", 2)  # second: not relevant
    third = pool.items[2]
    assert page.locator("#passage-id").inner_text() == third.passage
    assert page.locator("#suggestion").is_visible()
    expected = 2 if "stash" in third.passage else 0  # the stand-in's grade, shown as the machine gave it
    assert f"grade {expected}, {'relevant' if expected else 'not relevant'} (a machine's grade" in \
        page.locator("#suggestion").inner_text()
    press("s", 3)  # third: the stand-in model's suggestion, accepted
    gap = next(i for i in pool.items if i.question_id == "o01")  # off-topic question: mark the gap on a miss-free item
    index = pool.items.index(gap)
    for _ in range(index - 3):
        page.keyboard.press("j")
    assert page.locator("#qid").inner_text() == "o01"
    page.keyboard.press("x")  # needs a reason first: the reason field takes the focus
    page.keyboard.type("the corpus has no page about Word documents")
    page.keyboard.press("Enter")
    page.wait_for_selector('body[data-saved="4"]')
    n_gap = sum(1 for i in pool.items if i.question_id == "o01")
    assert f"{n_gap} not covered" in page.locator("#counts").inner_text()  # every pooled passage of o01
    page.keyboard.press("k")
    assert page.locator("#qid").inner_text() == "o01" and page.locator("#status").inner_text().lower() == "not covered"
    screenshot(page, "pool-judging.png")
    assert page.page_errors == []

    golden = load_golden(judged_setup["golden"])
    assert golden.version is None  # edited since version 1: unversioned until frozen again
    by_doc = {(j.question_id, j.doc_id): j for j in golden.qrels}
    one = by_doc[(first.question_id, first.passage)]
    two = by_doc[(pool.items[1].question_id, pool.items[1].passage)]
    three = by_doc[(third.question_id, third.passage)]
    assert (one.grade, two.grade) == (2, 0)
    assert three.grade == (2 if "stash" in third.passage else 0) and "suggested by stand_in_judge:judge" in three.note
    for j in (one, two, three):
        assert j.judge == "ana" and j.at.startswith("20") and pool.id in j.note
    assert golden["o01"].off_topic
    for item in (i for i in pool.items if i.question_id == "o01"):  # none of its pooled passages answers it
        assert by_doc[("o01", item.passage)].grade == 0 and "not covered" in by_doc[("o01", item.passage)].note
    changes = read_changes(judged_setup["golden"])
    n_gap = sum(1 for i in pool.items if i.question_id == "o01")
    assert [c.action for c in changes] == ["judged"] * (3 + n_gap)  # o01 was off-topic already: no label fixed
    assert changes[-1].reason == "not covered: the corpus has no page about Word documents" and changes[-1].version == 1
    raw = [json.loads(line) for line in judged_setup["golden"].read_text().splitlines()]
    assert any(j.get("judge") == "ana" for r in raw for j in r.get("judgments", []))

    rescored = evaluate(RETRIEVERS, golden, corpus=judged_setup["corpus"], k=(1, 5), workspace=judged_setup["ws"])
    before = {r.name: r for r in judged_setup["card"].retrievers}
    assert Metric("bpref") in rescored.metrics
    for r in rescored.retrievers:
        assert r.judged[4] > before[r.name].judged[4]  # more of each top 5 is judged now
        # every metric but bpref has its judged range (bpref's would not contain bpref: issue 18, item 8)
        assert set(r.ranges) == set(rescored.metrics) - {Metric("bpref")}
    text = scorecard_markdown(rescored)
    assert "judged@5:" in text and "if the unjudged were all not relevant / all relevant" in text
