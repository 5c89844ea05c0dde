"""A search service over HTTP as a retriever: `http://host/search?q={question}&k={k}`.

Spec: `http[s]://HOST/PATH[?QUERY][#OPTIONS]`. Everything after `#` is for goldeval and is never sent
(a URL fragment never is), so the service's own query string stays as written:

    http://localhost:9200/docs/_search#method=POST&body={"query": {"match": {"text": "{question}"}}, "size": {k}}&ids=hits.hits[*]._id&scores=hits.hits[*]._score

`{question}` (URL-encoded in the URL, a JSON string in the body) and `{k}` (the depth) are filled in per
question. `ids` and `scores` say where the response holds them, in a JSONPath-like syntax (`$.`
optional, `key`, `[*]` every item, `[N]` one item); unset, a list of results is looked for
(`results`, `hits`, `documents`, ... with `id`/`doc_id`/`_id` and `score`/`_score`). Headers come from
environment variables only (`headers=Authorization:SEARCH_TOKEN`), so no secret is ever written in a
spec, a results file or a log. Credentials go only to the origin they were given for: a redirect to another
scheme, host or port is followed without them (as browsers and `requests` do), a `user:password@` in the URL
becomes a Basic `Authorization` header under the same rule, and every credential is registered with
`textsafe.keep_secret`, so a service that echoes one in an error cannot get it printed or stored. Each question is one request through `FunctionRetriever`: a timeout, an
HTTP error or an unreadable answer is an error for that question alone. Up to `concurrency` requests (4)
are in flight at once; `concurrency=1` sends one after another.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from goldeval import __version__
from goldeval.errors import InputError
from goldeval.limits import NUMBERS, REPLY_BYTES
from goldeval.retrievers.adapters.common import AdapterRetriever
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.options import Option, OptionSet, split_spec
from goldeval.run import Run
from goldeval.textsafe import keep_secret, redact
from goldeval.types import QuestionId

DEFAULT_TIMEOUT = 10.0
DEFAULT_CONCURRENCY = 4
"""Requests in flight at once: a search service answers many clients, and a golden set of hundreds of
questions one request at a time spends most of its time waiting on the network."""
READ_SIZE = 65_536
"""Bytes read from a reply at a time, so the size limit and the deadline are checked between pieces."""
DEFAULT_BODY = '{"query": "{question}", "top_k": {k}}'
OPTIONS = OptionSet("http", "http[s]://HOST/PATH?q={question}&k={k}[#method=POST&body=JSON&ids=PATH&scores=PATH"
                    "&headers=NAME:ENV_VAR&timeout=SECONDS&concurrency=N]", (
    Option("method", "choice", "GET sends the question in the URL, POST in a JSON body", "GET", choices=("GET", "POST")),
    Option("body", "str", "the JSON body of a POST, with {question} and {k} filled in (unset: "
           '`{"query": "{question}", "top_k": {k}}`)'),
    Option("ids", "str", "where the response holds the ids, e.g. `hits[*].id` (unset: looked for)"),
    Option("scores", "str", "where the response holds the scores, e.g. `hits[*].score` (unset: beside the ids, "
           "else the order ranks)"),
    Option("headers", "str", "request headers from environment variables, `NAME:ENV_VAR[,NAME:ENV_VAR]`; "
           "their values are never written anywhere"),
    Option("timeout", "float", "time limit per question in seconds; --timeout sets it", DEFAULT_TIMEOUT, low=0.0,
           low_open=True, high=NUMBERS["timeout"].high),
    Option("concurrency", "int", "requests in flight at once (1: one question after another)", DEFAULT_CONCURRENCY,
           low=1, high=NUMBERS["concurrency"].high),
))
LISTS = ("results", "hits", "documents", "docs", "matches", "data", "items")
ID_FIELDS = ("id", "doc_id", "_id", "document_id")
SCORE_FIELDS = ("score", "_score", "relevance_score", "similarity")
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\*|-?\d+)\]")


def select(data: Any, path: str) -> list[Any]:
    """The values at `path` (`$.hits[*].id`, `hits.hits[*]._id`, `results[0].docs`); KeyError if absent."""
    text = path.strip().removeprefix("$")
    values, done, pos = [data], "$", 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if not match:
            raise ValueError(f"cannot read the selector {path!r} at {text[pos:]!r}")
        key, index = match.groups()
        pos = match.end()
        done += match.group(0) if match.group(0).startswith(("[", ".")) else "." + match.group(0)
        values = _step(values, key, index, done)
    return values


def _step(values: list[Any], key: str | None, index: str | None, done: str) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if key is not None:
            if not isinstance(value, Mapping) or key not in value:
                raise KeyError(f"the response has nothing at {done}")
            out.append(value[key])
        elif not isinstance(value, list):
            raise KeyError(f"the response has no list at {done}")
        elif index == "*":
            out.extend(value)
        else:
            try:
                out.append(value[int(str(index))])
            except IndexError:
                raise KeyError(f"the response has no item {done}") from None
    return out


def _auto(data: Any) -> list[tuple[str, float | None]]:
    """Results found without selectors: a list, or one under a usual key, of ids or objects with ids."""
    items = data if isinstance(data, list) else None
    if isinstance(data, Mapping):
        for key in LISTS:
            found = data.get(key)
            if isinstance(found, Mapping) and isinstance(found.get("hits"), list):  # Elasticsearch, OpenSearch
                found = found["hits"]
            if isinstance(found, list):
                items = found
                break
    if items is None:
        raise ValueError(f"found no list of results in the response ({json.dumps(data)[:160]}); "
                         "say where the ids are with ids=PATH, e.g. ids=results[*].id")
    out: list[tuple[str, float | None]] = []
    for item in items:
        if isinstance(item, (str, int)):
            out.append((str(item), None))
            continue
        pid = next((item[f] for f in ID_FIELDS if isinstance(item, Mapping) and f in item), None)
        if pid is None:
            raise ValueError(f"a result has none of the id fields {', '.join(ID_FIELDS)} ({json.dumps(item)[:160]}); "
                             "say where the ids are with ids=PATH")
        score = next((item[f] for f in SCORE_FIELDS if f in item), None)
        out.append((str(pid), None if score is None else float(score)))
    return out


class HttpRetriever(AdapterRetriever):
    """One request per question to a search service; ids and scores read from its JSON answer."""

    def __init__(self, url: str, *, method: str = "GET", body: str | None = None, ids: str | None = None,
                 scores: str | None = None, headers: Mapping[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, name: str | None = None, spec: str | None = None,
                 concurrency: int = DEFAULT_CONCURRENCY) -> None:
        """`headers`: header name -> the environment variable that holds its value."""
        self.url, self.basic = _split_credentials(url.partition("#")[0])
        self.method, self.ids, self.scores = method.upper(), ids, scores
        self.concurrency = max(1, int(concurrency))
        self.body = (body or DEFAULT_BODY) if self.method == "POST" else None
        self.header_vars = dict(headers or {})
        self.http_timeout = timeout
        self._check()
        for value in [self.basic or "", *(os.environ.get(v, "") for v in self.header_vars.values())]:
            keep_secret(value)
        shown, spec = self.url, None if spec is None else _without_password(spec)
        self._opener = urllib.request.build_opener(_SameOriginCredentials(self.url, [*self.header_vars, "Authorization"]))
        super().__init__(self._search, name=name or spec or shown, kind="http", timeout=timeout, spec=spec,
                         details={"url": shown, "method": self.method, "body": self.body, "ids": ids, "scores": scores,
                                  "headers": {h: f"${v}" for h, v in self.header_vars.items()},
                                  "concurrency": self.concurrency})

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run:
        """Up to `concurrency` requests at once; each question keeps its own time limit and its own error,
        and the run lists the questions in the order given, whatever order the answers came in."""
        if self.concurrency == 1 or len(queries) < 2:
            return super().search(queries, top_k=top_k)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="goldeval-http") as pool:
            answers = list(pool.map(lambda text: self.answer(text, top_k), queries.values()))
        run = Run(self.name)
        for qid, answer in zip(queries, answers, strict=True):
            self.record(run, qid, answer)
        return run

    def _check(self) -> None:
        """Refuse, before any request, a template that cannot work and a header whose variable is unset."""
        if self.method == "GET" and "{question}" not in self.url:
            raise InputError(f"the URL {self.url!r} has no {{question}}", value=self.url,
                             hint="put it where the service reads the question, e.g. ?q={question}, or use method=POST")
        if self.body is not None:
            try:
                json.loads(_fill_body(self.body, "a question", 10))
            except ValueError as exc:
                raise InputError(f"the body template is not JSON once filled in: {exc}", value=self.body,
                                 hint='e.g. body={"query": "{question}", "top_k": {k}}') from None
        missing = [v for v in self.header_vars.values() if not os.environ.get(v)]
        if missing:
            raise InputError(f"environment variable(s) {', '.join(missing)} for the request headers are not set",
                             value=", ".join(missing), hint="export them before running goldeval; headers=NAME:ENV_VAR")

    def _search(self, question: str, k: int) -> list[tuple[str, float]] | list[str]:
        data = self._request(question, k)
        if self.ids is None:
            return self.as_results(_auto(data))
        ids = [str(v) for v in select(data, self.ids)]
        if self.scores is None:
            return self.as_results((pid, None) for pid in ids)
        scores = select(data, self.scores)
        if len(scores) != len(ids):
            raise ValueError(f"{len(ids)} ids at {self.ids} but {len(scores)} scores at {self.scores}")
        return self.as_results((pid, float(s)) for pid, s in zip(ids, scores, strict=True))

    def _request(self, question: str, k: int) -> Any:
        url = self.url.replace("{question}", urllib.parse.quote_plus(question)).replace("{k}", str(k))
        headers = {"Accept": "application/json", "User-Agent": f"goldeval/{__version__}",
                   **({"Authorization": self.basic} if self.basic else {}),
                   **{name: os.environ.get(var, "") for name, var in self.header_vars.items()}}
        data = None
        if self.body is not None:
            data = _fill_body(self.body, question, k).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=self.method)
        deadline = time.monotonic() + self.http_timeout
        try:
            with self._opener.open(request, timeout=self.http_timeout) as response:
                raw = self._read_reply(response, deadline)
        except urllib.error.HTTPError as exc:
            detail = redact(exc.read(200).decode("utf-8", "replace"))
            raise ValueError(f"HTTP {exc.code} {exc.reason}: {detail}") from None
        except TimeoutError:
            raise ValueError(f"no answer within {self.http_timeout:g} s") from None
        except urllib.error.URLError as exc:
            raise ValueError(f"cannot reach {_without_password(url)}: {exc.reason}") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise ValueError(f"the answer is not JSON: {raw[:120]!r}") from None


    def _read_reply(self, response: Any, deadline: float) -> bytes:
        """The reply's bytes, read in pieces up to `REPLY_BYTES` (a 100 MB reply peaked at 5.7 GB) and only until
        the question's time is up: a service that streams forever is cut off when the question times out,
        and the thread reading it stops too (the socket's own timeout holds only between two pieces)."""
        declared = response.headers.get("Content-Length", "") if response.headers else ""
        if declared.strip().isdigit() and int(declared) > REPLY_BYTES:
            raise ValueError(_too_large(f"{int(declared):,} bytes, over"))
        read = getattr(response, "read1", None) or response.read
        pieces: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() > deadline:
                raise ValueError(f"the answer did not end within {self.http_timeout:g} s (raise it with --timeout "
                                 "SECONDS)")
            piece = read(min(READ_SIZE, REPLY_BYTES + 1 - size))
            if not piece:
                return b"".join(pieces)
            pieces.append(piece)
            size += len(piece)
            if size > REPLY_BYTES:
                raise ValueError(_too_large("over"))


def _too_large(size: str) -> str:
    """Why a reply was refused: `size` is `N bytes, over` or `over`."""
    return (f"the answer is {size} the {REPLY_BYTES:,}-byte limit of one reply; ask for fewer results with "
            "--depth N, or return ids without the documents' text")


def _fill_body(template: str, question: str, k: int) -> str:
    """`"{question}"` becomes the question as a JSON string; a bare `{question}` inside a longer string
    its escaped text; `{k}` the depth."""
    quoted = json.dumps(question)
    return template.replace('"{question}"', quoted).replace("{question}", quoted[1:-1]).replace("{k}", str(k))


class _SameOriginCredentials(urllib.request.HTTPRedirectHandler):
    """Follows a redirect as urllib does, but without the credential headers once it leaves the origin
    (scheme, host and port) they were given for: urllib itself copies every header to the new host."""

    def __init__(self, url: str, credential_headers: list[str]) -> None:
        self.origin = _origin(url)
        self.credentials = {h.lower() for h in credential_headers}

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != self.origin:
            for name in [h for h in new.headers if h.lower() in self.credentials]:
                del new.headers[name]
            for name in [h for h in new.unredirected_hdrs if h.lower() in self.credentials]:
                del new.unredirected_hdrs[name]
        return new


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or default


def _split_credentials(url: str) -> tuple[str, str | None]:
    """The URL without a `user:password@`, and that user and password as a Basic Authorization value."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    netloc = parts.netloc.rpartition("@")[2]
    pair = f"{urllib.parse.unquote(parts.username or '')}:{urllib.parse.unquote(parts.password or '')}"
    keep_secret(urllib.parse.unquote(parts.password or ""))
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc)), "Basic " + base64.b64encode(pair.encode()).decode()


def _without_password(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def parse_headers(text: str | None) -> dict[str, str]:
    """`Authorization:SEARCH_TOKEN,X-Api-Key:KEY_VAR` -> {header: environment variable}."""
    headers: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, sep, var = part.partition(":")
        if not sep or not name.strip() or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var.strip()):
            raise InputError(f"cannot read header {part!r}", value=part,
                             hint="headers=NAME:ENV_VAR, e.g. headers=Authorization:SEARCH_TOKEN (the value is read "
                                  "from the environment, never written in the spec)")
        headers[name.strip()] = var.strip()
    return headers


def split(rest: str) -> tuple[dict[str, str], list[str]]:
    """The options after `#`; the URL's own `?query` belongs to the service."""
    fragment = rest.partition("#")[2]
    return (split_spec("?" + fragment)[1] if fragment else {}), []


def _build(scheme: str, rest: str, ctx: BuildContext) -> HttpRetriever:
    spec = f"{scheme}:{rest}"
    own, _ = split(rest)
    values = OPTIONS.resolve(own, ctx.options, spec=spec)
    return HttpRetriever(spec, method=values.text("method") or "GET", body=values.text("body"), ids=values.text("ids"),
                         scores=values.text("scores"), headers=parse_headers(values.text("headers")),
                         timeout=values.number("timeout") or DEFAULT_TIMEOUT, spec=spec,
                         concurrency=int(values.number("concurrency") or DEFAULT_CONCURRENCY))


def build_http(rest: str, ctx: BuildContext) -> HttpRetriever:
    """Factory for `http://...`."""
    return _build("http", rest, ctx)


def build_https(rest: str, ctx: BuildContext) -> HttpRetriever:
    """Factory for `https://...`."""
    return _build("https", rest, ctx)
