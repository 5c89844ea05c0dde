"""BM25 through bm25s (Lù 2024, "BM25S: Orders of magnitude faster lexical search via eager sparse
scoring"), with a documented tokenizer.

Tokenizer: lower-case; split on runs of two or more word characters (bm25s' default pattern, Unicode
aware); drop English stopwords (`stopwords=none` keeps them); Snowball English stemming via PyStemmer
(`stem=none` turns it off). The title, when present, is indexed with the text. A passage with no
words has no tokens (length 0 in the average length), as `bm25s.tokenize` + `BM25.index` count it.
Scoring: Lucene's BM25 variant with k1=1.5, b=0.75 by default (`bm25?k1=1.2&b=0.75`, or
`--option k1=1.2`; `OPTIONS` declares them).
Passages with no query term in common score 0 and are not returned.
Index and search: `goldeval.retrievers.bm25_kernel` builds bm25s' index (the same float32 scores) with
numpy and searches its postings (numba when the `fast` extra is installed, compiled once and cached in
the user cache, once per machine; numpy otherwise), the same top k.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.bm25_kernel import Postings
from goldeval.retrievers.bm25_kernel import top_k as search_postings
from goldeval.retrievers.options import Option, OptionSet, split_spec
from goldeval.run import Run
from goldeval.types import QuestionId

OPTIONS = OptionSet("bm25", "bm25[?stem=none&stopwords=none&k1=1.2&b=0.75]", (
    Option("stem", "choice", "Snowball English stemming of passages and questions", "english", choices=("english", "none")),
    Option("stopwords", "choice", "drop English stopwords", "en", choices=("en", "none")),
    Option("k1", "float", "term-frequency saturation (0: a term counts once)", 1.5, low=0.0),
    Option("b", "float", "length normalisation (0: none, 1: full)", 0.75, low=0.0, high=1.0),
))


class BM25Retriever:
    """Lexical retrieval over passages with bm25s."""

    def __init__(
        self,
        passages: Sequence[Passage],
        *,
        stem: bool = True,
        stopwords: bool = True,
        k1: float = 1.5,
        b: float = 0.75,
        name: str = "bm25",
    ) -> None:
        from bm25s.tokenization import Tokenizer

        self.name = name
        self.config: dict[str, object] = config(
            name, {"stem": "english" if stem else "none", "stopwords": "en" if stopwords else "none", "k1": k1, "b": b}
        )
        self._ids = [p.id for p in passages]
        self._id_array = np.array(self._ids, dtype=object)
        self._tokenizer = Tokenizer(
            lower=True, stopwords="english" if stopwords else [], stemmer=_stemmer() if stem else None
        )
        texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages]
        # allow_empty=False: a passage with no words is no tokens (length 0), as `bm25s.tokenize` +
        # `BM25.index` count it; the Tokenizer's default makes it one "" token, length 1, which moved
        # the average length and so every score (issue 23)
        tokens = self._tokenizer.tokenize(texts, update_vocab=True, return_as="tuple", show_progress=False,
                                          allow_empty=False)  # fmt: skip
        vocab = self._tokenizer.get_vocab_dict()
        self._postings = Postings.build(tokens.ids, max(vocab.values(), default=-1) + 1, self._ids, k1, b)
        self.index_bytes = self._postings.nbytes
        self._unk = vocab.get("")  # None now; kept so that a query's "" (a question with no words) never counts

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        if not queries or not self._ids:
            return Run(self.name)
        qids = list(queries)
        token_ids = self._tokenizer.tokenize(
            [queries[q] for q in qids], update_vocab=False, return_as="ids", show_progress=False
        )
        k = min(top_k, len(self._ids))
        # Token ids index bm25s' columns directly; words the index never saw are dropped.
        terms = token_ids if self._unk is None else [[i for i in row if i != self._unk] for row in token_ids]
        docs, scores, counts = search_postings(self._postings, terms, k)
        # Ranked by the kernel (no sort); every passage id and score at once, then one (id, score) pair per
        # result through Run.ranked_from, which pauses the cyclic GC: its passes over the 100k pairs of
        # 1,000 questions cost as much as making them (issue 23).
        kept = np.arange(k) < counts[:, None]
        bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
        return Run.ranked_from(self.name, qids, bounds, self._id_array[docs[kept]].tolist(), scores[kept].tolist())


def _stemmer() -> Callable[[str], str]:
    import Stemmer

    stemmer: Callable[[str], str] = Stemmer.Stemmer("english").stemWord
    return stemmer


def config(spec: str, options: dict[str, object]) -> dict[str, object]:
    """The resolved configuration the results record: spec, kind, implementation, every option."""
    from importlib.metadata import version

    return {"spec": spec, "kind": "bm25", "implementation": f"bm25s {version('bm25s')}", "options": dict(options)}


def build(rest: str, ctx: BuildContext) -> BM25Retriever:
    """Factory for the `bm25[?options]` spec; `--option` keys it declares apply too."""
    spec = "bm25" + (f":{rest}" if rest and not rest.startswith("?") else rest)
    body, own = split_spec(rest)
    if body:
        raise InputError(f"{spec!r}: bm25 takes options after '?', not a ':' part", value=spec, hint=OPTIONS.usage)
    options = OPTIONS.resolve(own, ctx.options, spec=spec)
    retriever = BM25Retriever(
        ctx.passages,
        stem=options["stem"] == "english",
        stopwords=options["stopwords"] == "en",
        k1=options.number("k1") or 0.0,
        b=options.number("b") or 0.0,
        name="bm25" if not own else spec,
    )
    retriever.config = config(spec, options)
    return retriever
