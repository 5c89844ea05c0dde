"""Evaluate a search service over HTTP: the spec is its URL, with {question} and {k} filled in.

Run: python examples/adapter_http.py   (starts a small search service on 127.0.0.1 for the demo)

    goldeval eval --golden golden.jsonl --retriever 'http://search.internal/api?q={question}&size={k}'
    goldeval eval --golden golden.jsonl --retriever \
      'https://search.internal/docs/_search#method=POST&body={"query": {"match": {"text": "{question}"}}, "size": {k}}&ids=hits.hits[*]._id&scores=hits.hits[*]._score&headers=Authorization:SEARCH_TOKEN'

Everything after `#` is for goldeval and never sent. Headers come from environment variables only
(`headers=Authorization:SEARCH_TOKEN` reads $SEARCH_TOKEN; the value is never written anywhere). A
question whose request fails, times out (`timeout=SECONDS`) or returns something unreadable is an
error for that question alone.
"""

import json
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import goldeval
from goldeval.corpus import load_corpus
from goldeval.report import render

DATA = Path(__file__).resolve().parent / "data"

# --- a stand-in for your search service: BM25 behind GET /search?q=...&size=... ----------------------
corpus = load_corpus(DATA / "corpus")
engine = goldeval.build_retriever("bm25", goldeval.BuildContext(passages=corpus.passages()))


class Search(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if self.headers.get("Authorization") != "Bearer demo-token":
            self.send_response(401)
            self.end_headers()
            return
        hits = engine.search({"q": query["q"][0]}, top_k=int(query["size"][0])).results.get("q", [])
        body = json.dumps({"took": 2, "results": [{"doc_id": d, "score": s} for d, s in hits]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Search)
threading.Thread(target=server.serve_forever, daemon=True).start()

# --- the evaluation: the service's URL is the retriever ----------------------------------------------
os.environ["SEARCH_TOKEN"] = "Bearer demo-token"  # in real use: exported in your shell or CI secret store
url = (f"http://127.0.0.1:{server.server_address[1]}/search?q={{question}}&size={{k}}"
       "#ids=results[*].doc_id&scores=results[*].score&headers=Authorization:SEARCH_TOKEN")
card = goldeval.evaluate({"search service": url, "bm25 in process": "bm25"}, DATA / "golden_example.jsonl",
                         corpus=corpus, k=(1, 3, 5))
render(goldeval.compare(card, passages=corpus.passages()))
print("recorded headers:", card.retrievers[0].config["headers"])  # the variable's name, never its value
server.shutdown()
