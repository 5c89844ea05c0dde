"""What a page brings to the one server (`goldeval.web.app`): its routes, as exact paths.

A `Page` is data: the files it serves (built once, looked up by exact path: the page's scaffolding,
HTML, scripts, styles, readable by whoever reaches the server), the answers it builds per request
(`reads`: the page's data, results, items), and the writes it takes (`writes`: a POST path, or a path
prefix ending in `/` whose rest names an item). Every read lives under `API_PREFIX`, where the server
answers only the page itself (`goldeval.web.handler.PageHandler.from_page`): a page cannot put its data
where the one check does not look. The server merges every page's routes into one table and refuses two
pages that claim one path with different answers, so no request can reach a page it was not meant for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from goldeval.web.handler import API_PREFIX

Answer = tuple[bytes, str]
"""A GET's answer: the body and its content type."""
Write = Callable[[str, dict[str, Any]], Any]
"""A POST's handler: (the rest of the path after a prefix, "" for an exact path; the JSON action) -> the
JSON answer. A ValueError or GoldevalError it raises is the request's 400."""


@dataclass(frozen=True)
class Page:
    """One page's routes: `name` (scorecard, pool, review), `path` (where it opens), `files` (exact path ->
    answer, built once), `reads` (exact path under `API_PREFIX` -> a function building the answer per request),
    `writes` (POST path or prefix -> `Write`), `off` (POST paths the page has but that are turned off -> why,
    a 404), and `moved` (GET paths an older goldeval answered -> where they went, a 404 that says so)."""

    name: str
    path: str
    files: Mapping[str, Answer] = field(default_factory=dict)
    reads: Mapping[str, Callable[[], Answer]] = field(default_factory=dict)
    writes: Mapping[str, Write] = field(default_factory=dict)
    off: Mapping[str, str] = field(default_factory=dict)
    moved: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Routes:
    """Every page's routes in one table, each path claimed once."""

    pages: list[Page] = field(default_factory=list)
    files: dict[str, Answer] = field(default_factory=dict)
    reads: dict[str, Callable[[], Answer]] = field(default_factory=dict)
    writes: dict[str, Write] = field(default_factory=dict)
    off: dict[str, str] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)

    def add(self, page: Page) -> None:
        """Mount a page; a path another page already serves differently, or a read outside `API_PREFIX` (data
        the token check would not guard), is a ValueError (a programming error)."""
        outside = [path for path in page.reads if not path.startswith(API_PREFIX)]
        if outside:
            raise ValueError(f"{page.name} reads {outside[0]} outside {API_PREFIX}: its data would answer without the token")
        claimed = {*self.reads, *self.writes, *self.off, *self.moved}
        for path, answer in page.files.items():
            if path in claimed or self.files.get(path, answer) != answer:
                raise ValueError(f"two pages serve {path}")
        for path in (*page.reads, *page.writes, *page.off, *page.moved):
            if path in claimed or path in self.files:
                raise ValueError(f"two pages serve {path}")
        self.files.update(page.files)
        self.reads.update(page.reads)
        self.writes.update(page.writes)
        self.off.update(page.off)
        self.moved.update(page.moved)
        self.pages.append(page)

    def get(self, path: str) -> Answer | None:
        """The answer to GET `path` (exact lookup), or None."""
        if path in self.reads:
            return self.reads[path]()
        return self.files.get(path)

    def get_exists(self, path: str) -> bool:
        """Whether `path` is a GET route (a POST to it is a 405, not a 404)."""
        return path in self.reads or path in self.files

    def write(self, path: str) -> tuple[Write, str] | None:
        """The write a POST to `path` reaches and the rest of its path (an item id), or None."""
        if path in self.writes and not path.endswith("/"):
            return self.writes[path], ""
        for prefix, handler in self.writes.items():
            if prefix.endswith("/") and path.startswith(prefix) and len(path) > len(prefix):
                return handler, path[len(prefix):]
        return None
