"""The reply cache: every model reply, keyed by what produced it, so nothing is paid for twice.

Layout: `<workspace>/synth/replies/<first 2 hex digits>/<sha256>.json` (`goldeval judge`'s under
`<workspace>/judge/replies/`), one small file a reply, written atomically the moment the reply arrives (a run stopped by Ctrl-C keeps every reply it got). The key is
the sha256 of the backend's identity (kind, model, endpoint, temperature, token limit; never a key) and
of the full prompt, which holds the template and the passage's title and text: a changed passage, model
or prompt is a new key, an unchanged one is free. Each file carries the sha256 of its reply: a file whose
reply no longer matches (damaged on disk, edited by hand) is a miss, asked again, never served.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldeval.fingerprint import fingerprint, text_fingerprint
from goldeval.store.atomic import write_atomic
from goldeval.store.workspace import Workspace


def reply_key(identity: str, prompt: str) -> str:
    """The stored reply's name: `goldeval.fingerprint` of the generator's identity and the prompt."""
    return fingerprint([identity, prompt])


@dataclass(frozen=True)
class CachedReply:
    reply: str
    model: str
    created: str


class ReplyCache:
    """Replies on disk under the workspace; `get` never raises on a damaged file (it is a miss)."""

    def __init__(self, workspace: Workspace, *, kind: str = "synth") -> None:
        self.folder = workspace.root / kind / "replies"

    def path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedReply | None:
        try:
            data: Any = json.loads(self.path(key).read_text(encoding="utf-8"))
            if "sha256" in data and data["sha256"] != _checksum(str(data["reply"])):
                return None
            return CachedReply(str(data["reply"]), str(data["model"]), str(data["created"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def put(self, key: str, reply: CachedReply) -> None:
        body = {"reply": reply.reply, "model": reply.model, "created": reply.created, "sha256": _checksum(reply.reply)}
        write_atomic(self.path(key), json.dumps(body, ensure_ascii=False))


def _checksum(reply: str) -> str:
    return text_fingerprint(reply)
