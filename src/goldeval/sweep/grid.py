"""The grid of a sweep: every dial and the values it takes, expanded into configurations (cells).

Dials (docs/sweep.md):
- `chunking`: `none` (whole documents) or `SIZE[:OVERLAP]` (`goldeval.corpus.chunking`);
- `retriever`: `bm25`, `dense` or `hybrid` (hybrid fuses bm25 with dense:MODEL);
- `model`: the embedding models of `dense` and `hybrid` (`goldeval models`);
- `fusion`: `rrf` or `norm` (`goldeval.retrievers.fusion`), hybrid only;
- `weight`: the weight bm25 gets in a hybrid, dense gets 1 - weight (`none`: equal weights);
- `rerank`: how many results a reranker re-scores (0: no reranking), with `reranker` (one spec).
A dial only multiplies the cells where it means something: bm25 has no model, dense no fusion weight.
`k` is not a dial: every cell is scored at every k from one stored run, so a new k searches nothing.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldeval.errors import InputError

DIALS = ("chunking", "retriever", "model", "fusion", "weight", "rerank")
"""The dials, in the order labels and tables show them."""
RETRIEVERS = ("bm25", "dense", "hybrid")
DEFAULT_RERANKER = "dense:minilm"
MAX_CELLS = 500
"""Refuse larger grids unless asked (`--max-cells`): a typo in a list should not start a day of searching."""

Dial = str | int | float | None
"""A dial's value in one cell; None where the dial does not apply (bm25 has no model)."""


@dataclass(frozen=True)
class Cell:
    """One configuration of the grid: a value for every dial that applies to it."""

    chunking: str
    retriever: str
    model: str | None = None
    fusion: str | None = None
    weight: float | None = None
    rerank: int = 0
    reranker: str | None = None

    @property
    def parts(self) -> list[str]:
        """The base retriever specs whose runs this cell reads (each searched once per chunking)."""
        dense = f"dense:{self.model}"
        return {"bm25": ["bm25"], "dense": [dense], "hybrid": ["bm25", dense]}[self.retriever]

    @property
    def base_spec(self) -> str:
        """The retriever spec before reranking, in goldeval's spec grammar (docs/retrieval.md)."""
        if self.retriever != "hybrid":
            return self.parts[0]
        spec = f"hybrid:bm25+dense:{self.model}?method={self.fusion}"
        return spec + (f"&weight={self.weight:g}" if self.weight is not None else "")

    @property
    def spec(self) -> str:
        """The whole retriever spec: `rerank:(BASE)>RERANKER?top=N` when this cell reranks (`&top=N` after a
        reranker's own options, `api:MODEL?url=URL`: a second `?` would end up inside the URL)."""
        if not self.rerank:
            return self.base_spec
        joined = "&" if "?" in (self.reranker or "") else "?"
        return f"rerank:({self.base_spec})>{self.reranker}{joined}top={self.rerank}"

    @property
    def label(self) -> str:
        """A short unique name: `600:100 · hybrid minilm-l3 norm w=0.3 · rerank 50`."""
        what = {"bm25": "bm25", "dense": f"dense {self.model}",
                "hybrid": f"hybrid {self.model} {self.fusion} " + (f"w={self.weight:g}" if self.weight is not None
                                                                  else "equal")}[self.retriever]
        tail = f" · rerank {self.rerank}" if self.rerank else ""
        return f"{self.chunking} · {what}{tail}"

    def dials(self) -> dict[str, Dial]:
        return {"chunking": self.chunking, "retriever": self.retriever, "model": self.model,
                "fusion": self.fusion, "weight": self.weight, "rerank": self.rerank}


@dataclass(frozen=True)
class Grid:
    """The values of each dial. `cells()` expands them; a dial only multiplies the cells it applies to."""

    chunking: tuple[str, ...] = ("none",)
    retriever: tuple[str, ...] = ("bm25",)
    model: tuple[str, ...] = ()
    fusion: tuple[str, ...] = ("rrf",)
    weight: tuple[float | None, ...] = (None,)
    rerank: tuple[int, ...] = (0,)
    reranker: str = DEFAULT_RERANKER

    def cells(self) -> list[Cell]:
        """Every configuration, chunking outermost, in the order the dials list their values."""
        out: list[Cell] = []
        for chunking, retriever in itertools.product(self.chunking, self.retriever):
            models: Sequence[str | None] = self.model if retriever != "bm25" else (None,)
            fusions: Sequence[str | None] = self.fusion if retriever == "hybrid" else (None,)
            weights: Sequence[float | None] = self.weight if retriever == "hybrid" else (None,)
            for model, fusion, weight, rerank in itertools.product(models, fusions, weights, self.rerank):
                out.append(Cell(chunking, retriever, model, fusion, weight, rerank,
                                self.reranker if rerank else None))
        return out

    def values(self) -> dict[str, list[Dial]]:
        """Each dial's values as given (the report's `dials`)."""
        return {"chunking": list(self.chunking), "retriever": list(self.retriever), "model": list(self.model),
                "fusion": list(self.fusion), "weight": list(self.weight), "rerank": list(self.rerank)}

    def check(self, *, max_cells: int = MAX_CELLS, where: str = "the grid") -> list[Cell]:
        """The cells, after refusing what cannot run: a dense retriever with no model, an empty grid,
        more than `max_cells` configurations, a reranker with nothing to rerank."""
        if any(r in ("dense", "hybrid") for r in self.retriever) and not self.model:
            raise InputError(f"{where}: dense and hybrid retrievers need a model", value=list(self.retriever),
                             hint="add model = [\"minilm-l3\"] (or --model minilm-l3); `goldeval models` lists them")
        cells = self.cells()
        if not cells:
            raise InputError(f"{where} has no configuration", hint="give each dial at least one value")
        if len(cells) > max_cells:
            raise InputError(f"{where} expands to {len(cells)} configurations, more than {max_cells}",
                             value=len(cells), hint=f"narrow a dial, or raise the limit with --max-cells {len(cells)}")
        return cells


def grid_from_mapping(data: Mapping[str, Any], *, where: str = "[grid]") -> Grid:
    """A Grid from a TOML `[grid]` table or the CLI's lists; every value checked, unknown keys refused."""
    known = (*DIALS, "reranker")
    unknown = [key for key in data if key not in known]
    if unknown:
        near = difflib.get_close_matches(unknown[0], known, n=1)
        raise InputError(f"{where}: unknown dial {unknown[0]!r}" + (f"; did you mean {near[0]!r}?" if near else ""),
                         value=unknown[0], hint="dials: " + ", ".join(known))
    fields: dict[str, Any] = {}
    if "chunking" in data:
        fields["chunking"] = tuple(_chunking(v, where) for v in _list(data["chunking"], "chunking", where))
    if "retriever" in data:
        fields["retriever"] = tuple(_choice(v, RETRIEVERS, "retriever", where) for v in _list(data["retriever"], "retriever", where))
    if "model" in data:
        fields["model"] = tuple(_model(v, where) for v in _list(data["model"], "model", where, empty=True))
    if "fusion" in data:
        from goldeval.retrievers.fusion import FUSIONS

        fields["fusion"] = tuple(_choice(v, tuple(FUSIONS), "fusion", where) for v in _list(data["fusion"], "fusion", where))
    if "weight" in data:
        fields["weight"] = tuple(_weight(v, where) for v in _list(data["weight"], "weight", where))
    if "rerank" in data:
        fields["rerank"] = tuple(_rerank(v, where) for v in _list(data["rerank"], "rerank", where))
    if "reranker" in data:
        if not isinstance(data["reranker"], str) or not data["reranker"].strip():
            raise InputError(f"{where}: reranker must be one spec", value=data["reranker"], hint="e.g. dense:minilm")
        fields["reranker"] = data["reranker"].strip()
    return Grid(**fields)


def parse_list(text: str) -> list[str]:
    """The CLI's comma-separated list: `--weight 0.3,0.5,0.7`."""
    return [part.strip() for part in text.split(",") if part.strip()]


def _list(value: object, dial: str, where: str, *, empty: bool = False) -> list[object]:
    """The values of a dial; only `model` may be empty (bm25 needs none; `Grid.check` says when one is)."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items and not empty:
        raise InputError(f"{where}: {dial} has no value", value=value, hint=f"give {dial} at least one value")
    if len(set(map(str, items))) != len(items):
        raise InputError(f"{where}: {dial} lists a value twice: {items}", value=items, hint="give each value once")
    return items


def _choice(value: object, choices: tuple[str, ...], dial: str, where: str) -> str:
    text = str(value).strip().lower()
    if text not in choices:
        raise InputError(f"{where}: {dial} {value!r} is not one of {', '.join(choices)}", value=value,
                         hint=f"{dial} = [{', '.join(repr(c) for c in choices)}]")
    return text


def _chunking(value: object, where: str) -> str:
    from goldeval.corpus.chunking import parse_chunk_spec

    spec = parse_chunk_spec(str(value))
    return "none" if spec is None else str(spec)


def _model(value: object, where: str) -> str:
    from goldeval.retrievers.encoders.api import is_api_name
    from goldeval.retrievers.encoders.registry import registry

    name = str(value).strip()
    models = registry()
    if name in models or Path(name).expanduser().is_dir() or is_api_name(name):  # openai:/ollama: API models
        return name
    near = difflib.get_close_matches(name, list(models), n=1)
    raise InputError(f"{where}: unknown model {name!r}" + (f"; did you mean {near[0]!r}?" if near else ""),
                     value=name, hint=f"use one of {', '.join(models)} (`goldeval models`) or a sentence-transformers folder")


def _weight(value: object, where: str) -> float | None:
    if value is None or str(value).strip().lower() in ("none", "equal"):
        return None
    try:
        weight = float(str(value))
    except ValueError:
        raise InputError(f"{where}: weight {value!r} is not a number", value=value,
                         hint="weights in [0, 1]: bm25 gets w, dense 1 - w; `equal` for equal weights") from None
    if not 0.0 <= weight <= 1.0:
        raise InputError(f"{where}: weight {weight:g} is outside [0, 1]", value=value,
                         hint="bm25 gets w and dense 1 - w, so w is in [0, 1]")
    return weight


def _rerank(value: object, where: str) -> int:
    text = str(value).strip()
    if not text.isdigit():
        raise InputError(f"{where}: rerank {value!r} is not a whole number >= 0", value=value,
                         hint="how many results the reranker re-scores; 0 for no reranking")
    return int(text)
