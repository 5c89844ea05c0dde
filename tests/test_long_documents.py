"""Passages longer than a dense model's window: a warning with how much is never seen, and by default
each passage ranked by its best window, stated in the configuration and the scorecard's title (issue 13)."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import goldeval
from golden_factory import make_golden
from goldeval.corpus.model import Corpus, Document, Passage
from goldeval.report.terminal import render_table
from goldeval.retrievers.dense import DenseRetriever
from goldeval.retrievers.encoders.base import BatchedEncoder, Kind
from goldeval.retrievers.long_documents import WINDOW_SEP, plan_windows
from goldeval.store.workspace import Workspace

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"


class WordWindow(BatchedEncoder):
    """A small real encoder with a window of 12 tokens: words hashed into 64 dimensions, first 12 read."""

    name, dim, key, max_tokens, special_tokens = "words12", 64, "words12-v1", 12, 2

    def token_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        out = []
        for text in texts:
            spans, pos = [], 0
            for word in text.split():
                start = text.index(word, pos)
                spans.append((start, start + len(word)))
                pos = start + len(word)
            out.append(spans)
        return out

    def _embed(self, texts: list[str], kind: Kind) -> np.ndarray:
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split()[: self.max_tokens - self.special_tokens]:  # the rest is never read
                rows[i, int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dim] += 1
        return rows


FILLER = " ".join(f"filler{i}" for i in range(40))
DOCS = {"long.md": FILLER + " zebra giraffe savanna", "short.md": "zebra crossing road", "other.md": "giraffe neck"}


def passages() -> list[Passage]:
    return Corpus({d: Document(d, t) for d, t in DOCS.items()}).passages()


def test_windows_follow_the_tokens_and_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(30))
    plan = plan_windows(["doc"], [text], WordWindow(), mode="max")
    assert plan.ids == [f"doc{WINDOW_SEP}{j}" for j in range(4)]
    assert plan.texts[0] == " ".join(f"w{i}" for i in range(10))  # 12 tokens less [CLS] and [SEP]
    assert plan.texts[1].startswith("w9 ")  # 10 - 10 // 8: one token shared with the previous window
    assert plan.texts[-1].endswith("w29") and set(plan.owner.values()) == {"doc"}
    assert plan.report is not None and (plan.report["long"], plan.report["unseen_if_truncated"]) == (1, 20)


def test_the_best_window_finds_what_truncation_never_sees(tmp_path: Path, capsys) -> None:
    queries = {"q": "zebra giraffe savanna"}
    cut = DenseRetriever(passages(), WordWindow(), workspace=Workspace.at(tmp_path), options={"long": "truncate"})
    assert cut.search(queries, top_k=3).results["q"][0][0] != "long.md"
    err = capsys.readouterr().err
    assert ("dense:words12: 1 of 3 passages are longer than the model's window of 12 tokens; truncated, 33 of their "
            "43 tokens (77%) would never be seen (long=truncate; long=max ranks each by its best window)") in err
    best = DenseRetriever(passages(), WordWindow(), workspace=Workspace.at(tmp_path))
    hits = best.search(queries, top_k=3).results["q"]
    assert hits[0][0] == "long.md" and [h[0] for h in hits].count("long.md") == 1
    assert "each is ranked by its best window instead (7 texts embedded" in capsys.readouterr().err
    report = best.config["long_documents"]
    assert report["scoring"] == "max" and report["long"] == 1 and report["texts_embedded"] == 7
    assert best.config["options"]["long"] == "max"


def test_best_window_ranking_is_exact_however_deep_the_windows_go(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    words = [f"t{i}" for i in range(30)]
    docs = {f"d{n}.md": " ".join(rng.choice(words, size=int(rng.integers(5, 60)))) for n in range(25)}
    ps = Corpus({d: Document(d, t) for d, t in docs.items()}).passages()
    encoder = WordWindow()
    retriever = DenseRetriever(ps, encoder, workspace=Workspace.at(tmp_path))
    query = "t1 t2 t3 t4"
    got = retriever.search({"q": query}, top_k=7).results["q"]
    # brute force: every window's cosine, each passage at its best
    q = encoder.encode([query], kind="query")[0]
    best: dict[str, float] = {}
    for wid, vector in zip(retriever.passage_ids, retriever.vectors, strict=True):
        pid = retriever.windows.owner.get(wid, wid)
        best[pid] = max(best.get(pid, -2.0), float(vector @ q))
    expected = sorted(best.items(), key=lambda x: (-x[1], [-ord(c) for c in x[0]]))[:7]
    assert [p for p, _ in got] == [p for p, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-6)


def test_the_scorecard_title_says_how_long_documents_were_ranked(tmp_path: Path) -> None:
    from goldeval.retrievers.base import register

    golden = make_golden([("q", "zebra giraffe savanna", {"long.md": 1})])
    corpus = Corpus({d: Document(d, t) for d, t in DOCS.items()})
    register("words12", f"{__name__}:_build_words12")
    card = goldeval.evaluate("words12", golden, corpus=corpus, k=(1,), workspace=tmp_path)
    assert card.retrievers[0].questions[0].rank == 1
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    render_table(card, console)
    text = " ".join(console.export_text().split())
    said = "words12: 1 of 3 passages are longer than words12's 12-token window: each is ranked by its best window (long=max)"
    assert said in text
    from goldeval.report.markdown import scorecard_markdown

    assert f"_{said}_" in scorecard_markdown(card)


def _build_words12(rest: str, ctx) -> DenseRetriever:
    return DenseRetriever(ctx.passages, WordWindow(), workspace=Workspace.at(ctx.workspace), name="words12")


@pytest.mark.models
def test_minilm_reads_past_its_256_tokens(tmp_path: Path, capsys) -> None:
    """A real page longer than minilm's window, with its answer at the end."""
    pages = {p.name: p.read_text() for p in (EXAMPLES / "corpus" / "git").glob("*.md")}
    stash = pages.pop("git-stash.md")
    other = [p.read_text() for p in sorted((EXAMPLES / "corpus").glob("[cp]*/*")) if p.is_file()]
    long_page = "\n\n".join(other * 2) + "\n\n" + stash  # thousands of tokens on Python, then git stash
    corpus = Corpus({"long.md": Document("long.md", long_page), **{n: Document(n, t) for n, t in pages.items()}})
    golden = make_golden([("q", "stash my changes away and bring them back later", {"long.md": 1})])
    cut = goldeval.evaluate("dense:minilm?long=truncate", golden, corpus=corpus, k=(1,), workspace=tmp_path)
    best = goldeval.evaluate("dense:minilm", golden, corpus=corpus, k=(1,), workspace=tmp_path)
    assert best.retrievers[0].questions[0].rank == 1
    assert (cut.retrievers[0].questions[0].rank or 99) > 1
    report = best.retrievers[0].config["long_documents"]
    assert report["window"] == 256 and report["long"] >= 1 and report["share_unseen_if_truncated"] > 0.5
    assert "dense:minilm: " in capsys.readouterr().err
