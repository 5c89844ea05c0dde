"""The item pages of the one server (`goldeval.web.app`): review (`/review`) and pooled judging (`/pool`).

An item page shows one item of an `ItemStore` at a time (the candidates of `goldeval synth`, the pooled
passages of `goldeval pool`) and records one verdict per POST. Its routes, for a page named `NAME`:
GET `/NAME` (its HTML part inside the shared skeleton `items.html`), `/NAME.js`, `/NAME.css`, the files
every item page shares (`/items.js`, `/items.css`) and `/api/NAME/items` (the items as JSON); POST
`/api/NAME/items/<id>` with a JSON action. The files are package data (`goldeval/web/static/`), read once
and looked up by exact path; the checks every request gets (Host, Origin, session token, the body reader,
the security headers) are the one server's: the items, under `/api/`, are read with the token as they are
written (the page's `fetchItems` sends it).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any, Protocol
from urllib.parse import unquote

from goldeval.web.handler import JSON, json_bytes
from goldeval.web.routes import Page

HTML = "text/html; charset=utf-8"
SCRIPT = "text/javascript; charset=utf-8"
STYLE = "text/css; charset=utf-8"
SHARED = {"/items.js": ("items.js", SCRIPT), "/items.css": ("items.css", STYLE)}
"""What every item page (review, pool) shares: one copy of the send/move script and the header styles."""
SKELETON = "items.html"
ITEM_PAGES = ("review", "pool")


class ItemStore(Protocol):
    """What an item page shows: `payload()` lists the items, `apply()` records one action."""

    def payload(self) -> dict[str, Any]: ...

    def apply(self, item_id: str, action: Mapping[str, Any]) -> dict[str, Any]: ...


def static_file(name: str) -> str:
    return resources.files("goldeval.web").joinpath("static", name).read_text(encoding="utf-8")


def page_text(name: str, page: str) -> str:
    """A page's file as served: an HTML part goes into the shared skeleton (head, header, alert box, the
    shared and the page's own script and style), so the two pages cannot drift apart in those."""
    text = static_file(name)
    if not name.endswith(".html"):
        return text
    return static_file(SKELETON).replace("{{PAGE}}", page).replace("{{BODY}}", text.rstrip("\n"))


def item_page(name: str, store: ItemStore, token: str) -> Page:
    """The routes of the item page `name` (`review` or `pool`) over `store`; its HTML carries `token`.
    Each path is spelled out, so a request is looked up here and never in a folder."""
    files = {f"/{name}": (f"{name}.html", HTML), f"/{name}.js": (f"{name}.js", SCRIPT),
             f"/{name}.css": (f"{name}.css", STYLE), **SHARED}
    bodies = {path: (page_text(file, name).replace("{{TOKEN}}", token).encode("utf-8"), ctype)
              for path, (file, ctype) in files.items()}

    def items() -> tuple[bytes, str]:
        return json_bytes(store.payload()), JSON

    def verdict(item_id: str, action: dict[str, Any]) -> dict[str, Any]:
        return {"item": store.apply(unquote(item_id), action)}

    return Page(name=name, path=f"/{name}", files=bodies, reads={f"/api/{name}/items": items},
                writes={f"/api/{name}/items/": verdict})
