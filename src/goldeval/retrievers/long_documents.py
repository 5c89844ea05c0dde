"""Passages longer than a dense model's window: say so, and rank each by its best window.

A transformer encoder reads at most its window (all-MiniLM-L6-v2: 256 tokens) and silently drops the
rest: on the Python docs, minilm saw only the first 256 tokens of pages that run to tens of thousands
(issue 13). With `long=max` (the default) a passage over the window is split, along the model's own
tokens, into windows that fit (an eighth of each overlapping the next, so a sentence on a boundary is
whole in one of them); every window is embedded, and the passage scores the best similarity of its
windows (max-passage aggregation, as in Dai & Callan 2019, "Deeper Text Understanding for IR with
Contextual Neural Language Modeling"). With `long=truncate` the passage is embedded as the model
alone would: its start. Either way the count of long passages and of the tokens a truncating model
never reads is printed and recorded in the retriever's configuration (`long_documents`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from goldeval.retrievers.encoders.base import BatchedEncoder, Encoder

MODES = ("max", "truncate")
OVERLAP = 8
"""Windows overlap by 1/OVERLAP of their length."""
WINDOW_SEP = "\x1f"
"""Between a passage id and its window number in the index (`json.rst\x1f3`); never in a real id."""


@dataclass
class Windows:
    """The texts to embed and which passage each belongs to (a passage within the window is one text)."""

    texts: list[str]
    ids: list[str]
    owner: dict[str, str] = field(default_factory=dict)
    """Window id -> passage id, for the windows of long passages only (empty: nothing was split)."""
    report: dict[str, object] | None = None
    """What `config["long_documents"]` records; None when the model's window is unknown."""


def plan_windows(ids: Sequence[str], texts: Sequence[str], encoder: Encoder, *, mode: str = "max",
                 label: str = "") -> Windows:
    """Split the passages longer than `encoder`'s window (with `mode="max"`), and report on them."""
    window = getattr(encoder, "max_tokens", None)
    spans = encoder.token_offsets(texts) if window and isinstance(encoder, BatchedEncoder) else None
    if not window or spans is None:
        return Windows(list(texts), list(ids))
    room = window - getattr(encoder, "special_tokens", 2) - _prefix_tokens(encoder)
    out = Windows([], [])
    long, tokens, unseen = 0, 0, 0
    for pid, text, offsets in zip(ids, texts, spans, strict=True):
        if len(offsets) <= room:
            out.texts.append(text)
            out.ids.append(pid)
            continue
        long, tokens, unseen = long + 1, tokens + len(offsets), unseen + len(offsets) - room
        if mode == "truncate":
            out.texts.append(text)
            out.ids.append(pid)
            continue
        for j, piece in enumerate(_windows(text, offsets, room)):
            wid = f"{pid}{WINDOW_SEP}{j}"
            out.texts.append(piece)
            out.ids.append(wid)
            out.owner[wid] = pid
    out.report = _report(label or getattr(encoder, "name", "model"), window, mode, len(ids), long, tokens, unseen,
                         len(out.texts))
    return out


def _prefix_tokens(encoder: Encoder) -> int:
    prefix = encoder.prefix("passage") if not getattr(encoder, "prefix_added_by_model", False) else ""
    spans = encoder.token_offsets([prefix]) if prefix and isinstance(encoder, BatchedEncoder) else None
    return len(spans[0]) if spans else 0


def _windows(text: str, offsets: Sequence[tuple[int, int]], room: int) -> list[str]:
    """`text` cut along its tokens into pieces of at most `room` tokens, each overlapping the next."""
    step = max(room - room // OVERLAP, 1)
    pieces = []
    for start in range(0, len(offsets), step):
        end = min(start + room, len(offsets))
        pieces.append(text[offsets[start][0] : offsets[end - 1][1]])
        if end == len(offsets):
            break
    return pieces


def _report(model: str, window: int, mode: str, n: int, long: int, tokens: int, unseen: int,
            texts: int) -> dict[str, object]:
    share = unseen / tokens if tokens else 0.0
    if not long:
        summary = ""
    elif mode == "max":
        summary = (f"{long} of {n} passages are longer than {model}'s {window}-token window: each is ranked "
                   f"by its best window (long=max)")
    else:
        summary = (f"{long} of {n} passages are longer than {model}'s {window}-token window: {share:.0%} of "
                   f"their text is never seen (long=truncate)")
    return {"window": window, "scoring": mode, "passages": n, "long": long, "tokens": tokens,
            "unseen_if_truncated": unseen, "share_unseen_if_truncated": round(share, 4), "texts_embedded": texts,
            "summary": summary}


def warning(name: str, report: dict[str, object]) -> str | None:
    """The warning: how many passages are long, how much a truncating model never reads, what is done."""
    if not report.get("long"):
        return None
    head = (f"{name}: {report['long']} of {report['passages']} passages are longer than the "
            f"model's window of {report['window']} tokens; truncated, {report['unseen_if_truncated']:,} of their "
            f"{report['tokens']:,} tokens ({float(report['share_unseen_if_truncated']):.0%}) would never be seen")  # type: ignore[arg-type]
    if report["scoring"] == "max":
        return head + (f"; each is ranked by its best window instead ({report['texts_embedded']} texts embedded; "
                       "long=truncate embeds the start only)")
    return head + " (long=truncate; long=max ranks each by its best window)"


def best_per_passage(ids: Sequence[str], scores: Sequence[float], owner: dict[str, str], k: int) -> list[tuple[str, float]]:
    """Window hits (best first) as passage hits: each passage once, at its best window's score."""
    out: dict[str, float] = {}
    for wid, score in zip(ids, scores, strict=False):
        pid = owner.get(wid, wid)
        if pid not in out:
            out[pid] = float(score)
            if len(out) == k:
                break
    return list(out.items())
