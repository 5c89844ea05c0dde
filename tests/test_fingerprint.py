"""One fingerprint helper (issue 18, item 7): every content key, id and checksum goldeval makes goes through
`goldeval.fingerprint`, and the values persisted before it had one home keep their values."""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

import pytest

from fast_paths import ORJSON, use_orjson
from goldeval.cli import main
from goldeval.corpus.model import Passage
from goldeval.evaluation import passages_fingerprint
from goldeval.fingerprint import (
    Fingerprinter,
    canonical_json,
    file_fingerprint,
    fingerprint,
    plain_fingerprint,
    text_fingerprint,
)
from goldeval.golden.io import load_golden
from goldeval.golden.versions import read_versions
from goldeval.runstore import questions_fingerprint
from goldeval.store.cache import text_hash
from goldeval.synth.pipeline import candidate_id

SRC = Path(__file__).resolve().parents[1] / "src" / "goldeval"
NOT_CONTENT = {"report/html.py"}
"""The page's Content-Security-Policy hash: base64 SHA-256 of a script, as the CSP standard spells it."""


def test_a_value_is_sha256_of_its_canonical_json() -> None:
    value = {"b": [1, ("x", 2.5)], "a": "café 🚀", "p": Path("/tmp/x")}
    text = '{"a":"café 🚀","b":[1,["x",2.5]],"p":"/tmp/x"}'
    assert canonical_json(value) == text
    assert fingerprint(value) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert fingerprint({"p": Path("/tmp/x"), "a": "café 🚀", "b": [1, ["x", 2.5]]}) == fingerprint(value)
    assert fingerprint(value, length=8) == fingerprint(value)[:8]


@pytest.mark.parametrize("orjson", ORJSON)
def test_a_plain_value_has_its_canonical_jsons_digest_by_either_writer(orjson: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeval import fingerprint as module

    use_orjson(module, orjson, monkeypatch)
    value = [["q1", "caf\u00e9 \U0001f680 \u2028\x00\x1f\x7f\"\\/", [["b.md", 2], ["a.md", 0]], "off_topic"],
             {"z": -1, "a": [True, False, None], "\u00e9": 2**63 - 1, "\U0001f680": (1, "x")}]
    text = ('[["q1","caf\u00e9 \U0001f680 \u2028\\u0000\\u001f\x7f\\"\\\\/",[["b.md",2],["a.md",0]],"off_topic"],'
            '{"a":[true,false,null],"z":-1,"\u00e9":9223372036854775807,"\U0001f680":[1,"x"]}]')
    assert plain_fingerprint(value) == hashlib.sha256(text.encode("utf-8")).hexdigest() == fingerprint(value)
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)  # each escape as json's
    assert plain_fingerprint([every, {every: 1}]) == fingerprint([every, {every: 1}])
    for refused in (["lone \ud800 surrogate"], [2**64], {"k": [-(2**70)]}):  # orjson refuses: json's way, same digest
        assert plain_fingerprint(refused) == fingerprint(refused)


def test_a_text_and_a_file_are_sha256_of_their_bytes(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_bytes(b"q1 Q0 d1 1 2.0 x\n" * 1000)
    assert file_fingerprint(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert text_fingerprint("ünï") == hashlib.sha256("ünï".encode()).hexdigest()


def test_records_are_framed_so_moving_a_boundary_changes_the_fingerprint() -> None:
    assert Fingerprinter().record("ab", "c").hexdigest() != Fingerprinter().record("a", "bc").hexdigest()
    assert Fingerprinter().record("a").record("b").hexdigest() != Fingerprinter().record("a", "b").hexdigest()


def test_persisted_values_are_the_ones_goldeval_wrote_before() -> None:
    # computed by goldeval at commit e0c56a6, before the helper: results, history, version sidecars, stored
    # runs, synthetic question ids and the embedding cache hold them
    passages = [Passage("git/stash.md", "git stash — put changes aside 🚀", "Stash"),
                Passage("git/stash.md#2", "pop them back", "Stash")]
    assert passages_fingerprint(passages) == "4ba0e3e8a73bb4d5541d8fbc8b535e52bfd410c702aaf51b4034a77605fd9049"
    assert candidate_id("git/stash.md#2|prompt|model") == "syn-09f77a9dad"
    assert text_hash("how do I undo a commit? ünïcode").hex() == "307d9d9d0f252808293a4aa34344131e"
    assert (questions_fingerprint({"q2": "undo", "q1": "stash 🚀"})
            == "a19b969bd913b6a3066a0ab494caac156dde6bf3fee31ce3f5d862affdfeda79")


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_hashes_content_on_its_own(path: Path) -> None:
    rel = path.relative_to(SRC).as_posix()
    if rel in NOT_CONTENT | {"fingerprint.py"}:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imports |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "hashlib" not in imports, f"{rel} hashes content itself: use goldeval.fingerprint"


GOLDEN = [
    '{"id": "q1", "question": "put my changes aside", "expected": ["git/stash.md"]}',
    '{"id": "q2", "question": "undo a commit", "expected": {"git/reset.md": 2, "git/revert.md": 1, "git/log.md": 0}}',
    '{"id": "o1", "question": "weather in Paris?", "expected": []}',
]


def test_a_set_frozen_by_an_older_goldeval_names_only_what_changed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(line + "\n" for line in GOLDEN), encoding="utf-8")
    # the version line goldeval wrote at commit e0c56a6 for this set: digests of json.dumps' default spacing
    old = {"version": 1, "fingerprint": load_golden(path).fingerprint(), "at": "2026-11-30T05:40:00+00:00",
           "by": "ana", "n_questions": 3, "n_judgments": 4, "note": "",
           "questions": {"q1": "54419421.4f53cda1", "q2": "c625eba5.8862f039", "o1": "de6f5682.4f53cda1"}}
    (tmp_path / "golden.versions.jsonl").write_text(json.dumps(old) + "\n", encoding="utf-8")
    assert load_golden(path).version == 1
    path.write_text(path.read_text(encoding="utf-8").replace('"git/revert.md": 1', '"git/revert.md": 2'),
                    encoding="utf-8")
    assert main(["golden", "freeze", str(path), "--by", "ana"]) == 0
    assert "1 relabelled (q2))" in capsys.readouterr().out
    v1, v2 = read_versions(path)
    assert (v1.digest_format, v2.digest_format) == (1, 2)
    assert v2.questions["q1"] != v1.questions["q1"]  # the same labels, digested the new way
