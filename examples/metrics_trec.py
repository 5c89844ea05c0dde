"""`goldeval trec`: trec_eval's measures and output from TREC qrels and run files.

Run: python examples/metrics_trec.py
(the same as `goldeval trec -q -m map -m P.1,2 -m ndcg_cut.3 qrels.txt run.txt` on the shell)
"""

import tempfile
from pathlib import Path

from goldeval.cli import main
from goldeval.metrics import evaluate_trec, parse_measures, read_qrels, read_run

QRELS = """\
301 0 doc-a 1
301 0 doc-b 0
301 0 doc-c 2
302 0 doc-x 1
"""
RUN = """\
301 Q0 doc-b 1 12.5 bm25
301 Q0 doc-a 2 11.0 bm25
301 Q0 doc-c 3 11.0 bm25
302 Q0 doc-y 1 4.0 bm25
302 Q0 doc-x 2 3.5 bm25
"""

with tempfile.TemporaryDirectory() as tmp:
    qrels_path, run_path = Path(tmp) / "qrels.txt", Path(tmp) / "run.txt"
    qrels_path.write_text(QRELS)
    run_path.write_text(RUN)

    # The command line: prints trec_eval's format (measure, topic, value).
    main(["trec", "-q", "-m", "map", "-m", "P.1,2", "-m", "ndcg_cut.3", str(qrels_path), str(run_path)])

    # The same from Python, values per topic as numpy arrays.
    run, runid = read_run(run_path)
    report = evaluate_trec(read_qrels(qrels_path), run, parse_measures(["official"]), runid=runid)
    print(dict(report.summary()))
