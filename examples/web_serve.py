"""The live scorecard: evaluate, then serve the page on 127.0.0.1 and print its address.

    python examples/web_serve.py                 # serve until Ctrl+C
    python examples/web_serve.py --seconds 5     # serve for 5 seconds (handy in scripts)

The same from the command line: `goldeval serve --corpus docs/ --golden golden.jsonl --retriever bm25`,
or `goldeval serve results.json` for saved results.
"""

from __future__ import annotations

import argparse
import re
import time
import urllib.request

import goldeval
from goldeval import Corpus, Document, GoldenSet, Qrels, Question
from goldeval.report import results_payload
from goldeval.web import make_server, start_in_thread

DOCS = {
    "stash.md": "Stash puts your uncommitted changes aside; git stash pop restores them.",
    "json.md": "json.loads parses a JSON string into Python objects.",
    "sleep.md": "time.sleep(2) makes the program wait two seconds.",
}
corpus = Corpus({d: Document(d, text) for d, text in DOCS.items()}, name="example")
golden = GoldenSet(
    [Question("q1", "put my changes aside"), Question("q2", "parse a JSON string"),
     Question("q3", "wait two seconds"), Question("q4", "best pizza dough", "off_topic")],
    Qrels.from_grades({"q1": {"stash.md": 1}, "q2": {"json.md": 1}, "q3": {"sleep.md": 1}}),
)

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, help="stop after this many seconds")
parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
args = parser.parse_args()

card = goldeval.evaluate("bm25", golden, corpus=corpus, k=(1, 3))
server = make_server(results_payload([card.to_dict()], names=["example"]), port=args.port)
start_in_thread(server)
print(f"serving the scorecard at {server.url}")
with urllib.request.urlopen(server.url) as response:  # the page: HTML, scripts and styles need no token
    page = response.read().decode("utf-8")
# Its data (api/results.json, api/version, api/lifecycle.json) answers only with the session token the page
# carries, sent back as X-Goldeval-Token, as the page's own scripts send it.
found = re.search(r'<meta name="goldeval-token" content="([^"]+)">', page)
assert found, "the page carries its session token"
read = urllib.request.Request(server.url + "api/results.json", headers={"X-Goldeval-Token": found.group(1)})
with urllib.request.urlopen(read) as response:  # what the page reads, as it reads it
    print(f"api/results.json: {response.status}, {len(response.read())} bytes")
try:
    if args.seconds:
        time.sleep(args.seconds)
    else:
        print("Ctrl+C to stop")
        while True:
            time.sleep(3600)
except KeyboardInterrupt:
    pass
finally:
    server.shutdown()
    server.server_close()
