"""Frozen golden-set versions: freeze, the version a loaded set carries, what changed, incident questions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from goldeval.cli import main
from goldeval.corpus import load_corpus
from goldeval.evaluation import evaluate
from goldeval.golden.changelog import read_changes
from goldeval.golden.io import load_golden
from goldeval.golden.versions import changes_between, freeze, read_versions, sidecar_path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "data" / "corpus"


@pytest.fixture()
def golden_path(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    shutil.copy(REPO / "examples" / "data" / "golden_example.jsonl", path)
    return path


def test_freeze_numbers_versions_and_a_loaded_set_carries_its_own(golden_path: Path) -> None:
    assert load_golden(golden_path).version is None
    version, created = freeze(load_golden(golden_path), by="ana", note="first review")
    assert created and version.version == 1 and version.by == "ana" and version.n_questions == 11
    assert load_golden(golden_path).version == 1
    again, created = freeze(load_golden(golden_path))
    assert not created and again.version == 1 and len(read_versions(golden_path)) == 1
    golden_path.write_text(golden_path.read_text().replace('"expected": ["git/git-commit.md"]',
                                                            '"expected": ["git/git-commit.md", "git/git-reset.md"]'))
    assert load_golden(golden_path).version is None  # edited since: no version until frozen again
    second, created = freeze(load_golden(golden_path))
    assert created and second.version == 2 and load_golden(golden_path).version == 2
    first = read_versions(golden_path)[0]
    assert changes_between(first.questions, second.questions).describe() == "1 relabelled (h05)"
    assert sidecar_path(golden_path).name == "golden.versions.jsonl"


def test_golden_freeze_command(golden_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["golden", "freeze", str(golden_path), "--by", "ana"]) == 0
    assert "froze version 1" in capsys.readouterr().out
    assert main(["golden", "freeze", str(golden_path)]) == 0
    assert "unchanged since version 1" in capsys.readouterr().out


def test_golden_add_records_an_incident_question(golden_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    freeze(load_golden(golden_path))
    code = main(["golden", "add", "--golden", str(golden_path), "--question", "how do I undo git add",
                 "--expected", "git/git-reset.md", "--incident", "INC-2041", "--by", "ana", "--corpus", str(CORPUS)])
    assert code == 0 and "added inc-001" in capsys.readouterr().out
    golden = load_golden(golden_path)
    q = golden["inc-001"]
    assert q.source == "incident" and q.provenance.details["incident"] == "INC-2041"
    assert q.provenance.details["by"] == "ana" and golden.relevant("inc-001") == {"git/git-reset.md": 1}
    assert golden.version is None
    (change,) = read_changes(golden_path)
    assert (change.action, change.question, change.reason, change.version) == ("added", "inc-001", "INC-2041", 1)
    assert main(["golden", "add", "--golden", str(golden_path), "--question", "weather in Paris", "--off-topic",
                 "--incident", "INC-2042"]) == 0
    assert load_golden(golden_path)["inc-002"].off_topic
    assert main(["golden", "add", "--golden", str(golden_path), "--question", "x", "--expected", "git/nope.md",
                 "--corpus", str(CORPUS)]) == 2
    assert "--expected git/nope.md is not a document of the corpus" in capsys.readouterr().err
    assert main(["golden", "add", "--golden", str(golden_path), "--question", "x"]) == 2
    assert "no expected document given" in capsys.readouterr().err
    record = json.loads(golden_path.read_text().splitlines()[-2])
    assert record["provenance"]["kind"] == "incident" and record["judgments"][0]["judge"] == "ana"


def test_a_run_records_the_frozen_version_and_the_fixes_since(golden_path: Path, tmp_path: Path) -> None:
    freeze(load_golden(golden_path))
    card = evaluate(["bm25"], load_golden(golden_path), corpus=load_corpus(CORPUS), k=(1, 5), workspace=tmp_path / "ws")
    assert card.identity.golden_version == 1 and card.golden["version"] == 1 and "changes" not in card.golden
    from goldeval.judging.edits import GoldenFile

    GoldenFile(golden_path, judge="ana").wrong_expected("h04", "claude/claude-git-workflow.md", "no branch creation")
    card = evaluate(["bm25"], load_golden(golden_path), corpus=load_corpus(CORPUS), k=(1, 5), workspace=tmp_path / "ws")
    assert card.identity.golden_version is None
    assert card.golden["changes"]["text"] == "1 label fixed since version 1 (not frozen yet)"
    from goldeval.report.judged import judged_lines

    assert "Golden set: 1 label fixed since version 1 (not frozen yet)." in judged_lines(card)
