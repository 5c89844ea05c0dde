"""BM25 through bm25s (Lù 2024, "BM25S: Orders of magnitude faster lexical search via eager sparse
scoring"), with a documented tokenizer.

Tokenizer: lower-case; split on runs of two or more word characters (bm25s' default pattern, Unicode
aware); drop English stopwords (`stopwords=none` keeps them); Snowball English stemming via PyStemmer
(`stem=none` turns it off). The title, when present, is indexed with the text.
Scoring: Lucene's BM25 variant with k1=1.5, b=0.75 by default (`bm25?k1=1.2&b=0.75`).
Passages with no query term in common score 0 and are not returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.spec import check_known, float_option, split_options
from goldeval.run import Run
from goldeval.types import QuestionId

OPTIONS = {
    "stem": "english (default) or none",
    "stopwords": "en (default) or none",
    "k1": "term saturation, default 1.5",
    "b": "length normalisation, default 0.75",
}


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
        import bm25s
        from bm25s.tokenization import Tokenizer

        self.name = name
        self._ids = [p.id for p in passages]
        self._tokenizer = Tokenizer(
            lower=True, stopwords="english" if stopwords else [], stemmer=_stemmer() if stem else None
        )
        texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages]
        tokens = self._tokenizer.tokenize(texts, update_vocab=True, return_as="tuple", show_progress=False)
        self._model = bm25s.BM25(k1=k1, b=b)
        self._model.index(tokens, show_progress=False)
        self._inverse: dict[int, str] | None = None
        self._unk: int | None = None

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        run = Run(self.name)
        if not queries or not self._ids:
            return run
        qids = list(queries)
        token_ids = self._tokenizer.tokenize(
            [queries[q] for q in qids], update_vocab=False, return_as="ids", show_progress=False
        )
        k = min(top_k, len(self._ids))
        docs, scores = self._model.retrieve(self._as_vocab_tokens(token_ids), k=k, show_progress=False)
        for row, qid in enumerate(qids):
            keep = scores[row] > 0
            run.add(qid, zip((self._ids[i] for i in docs[row][keep]), scores[row][keep].tolist(), strict=True))
        return run

    def _as_vocab_tokens(self, token_ids: list[list[int]]) -> list[list[str]]:
        """bm25s retrieves by token strings; map ids back, dropping tokens the index never saw."""
        if self._inverse is None:  # the vocabulary is fixed once indexed: invert it once
            vocab = self._tokenizer.get_vocab_dict()
            self._unk = vocab.get("")
            self._inverse = {i: t for t, i in vocab.items()}
        inverse = self._inverse
        return [[inverse[i] for i in row if i != self._unk and i in inverse] or [""] for row in token_ids]


def _choice(spec: str, options: dict[str, str], key: str, allowed: tuple[str, ...]) -> str:
    value = options.get(key, allowed[0])
    if value not in allowed:
        raise InputError(f"option {key}={value!r} in {spec!r} is not one of {', '.join(allowed)}",
                         value=value, hint=f"{key}={allowed[0]} (default) or {key}={allowed[1]}")
    return value


def _stemmer() -> Callable[[str], str]:
    import Stemmer

    stemmer: Callable[[str], str] = Stemmer.Stemmer("english").stemWord
    return stemmer


def build(rest: str, ctx: BuildContext) -> BM25Retriever:
    """Factory for the `bm25[?options]` spec."""
    spec = "bm25" + rest
    _, options = split_options(spec)
    check_known(spec, options, OPTIONS)
    return BM25Retriever(
        ctx.passages,
        stem=_choice(spec, options, "stem", ("english", "none")) == "english",
        stopwords=_choice(spec, options, "stopwords", ("en", "none")) == "en",
        k1=float_option(spec, options, "k1", 1.5),
        b=float_option(spec, options, "b", 0.75),
        name="bm25" if not options else spec,
    )

