"""`assistant update` as a user runs it (real processes, real MiniLM): today's file adds and corrects reports, an
ids file removes some; counts and the rejects log are a full build's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_fixtures import run

from retriever.index.report_index import STORE_FILE, ReportIndex
from retriever.index.store import ReportStore

pytestmark = pytest.mark.models  # real CLI processes or a real model: not the fast tier

YESTERDAY = [
    {"id": "1", "findings": "Moderate right pleural effusion.", "impression": "Right pleural effusion."},
    {"id": "2", "findings": "Patchy left lower lobe airspace disease.", "impression": "Left lower lobe pneumonia."},
    {"id": "3", "findings": "Apical pleural line without lung markings.", "impression": "Pneumothorax."},
]
TODAY = [
    {"id": "2", "findings": "Patchy right lower lobe airspace disease.", "impression": "Right lower lobe pneumonia."},
    {"id": "3", "findings": "Apical pleural line without lung markings.", "impression": "Pneumothorax."},
    {"id": "4", "findings": "Enlarged cardiac silhouette.", "impression": "Cardiomegaly."},
    {"id": "5", "findings": "", "impression": "No findings section."},
]


def _write(folder: Path, rows: list[dict[str, str]]) -> Path:
    folder.mkdir()
    path = folder / "site.jsonl"  # the same file name: the same source, so the same report ids (site:2)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_update_adds_replaces_removes_and_counts(tmp_path: Path) -> None:
    out = tmp_path / "index"
    built = run("index", str(_write(tmp_path / "monday", YESTERDAY)), "--out", str(out))
    assert built.returncode == 0, built.stderr
    ids = tmp_path / "remove.txt"
    ids.write_text("# retracted\nsite:1\n\nsite:9\n", encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    today = _write(tmp_path / "tuesday", TODAY)

    result = run("update", str(today), "--index", str(out), "--remove", str(ids), "--rejects", str(rejects))
    assert result.returncode == 0, result.stderr
    assert "added 1, replaced 1, unchanged 1 (skipped), removed 1" in result.stderr
    assert "not in the index, so not removed: 1 (site:9)" in result.stderr
    assert [json.loads(line)["reason"] for line in rejects.read_text().splitlines()] == ["missing findings"]
    index = ReportIndex.load(out)  # with the encoder (and backend) that built it
    assert index.manifest.reports == 3 and index.manifest.fields["findings"] == 3
    assert index.search("right lower lobe pneumonia", k=1)[0].report.id == "site:2"

    again = run("update", str(today), "--index", str(out))
    assert again.returncode == 0 and "unchanged: added 0, replaced 0, unchanged 3 (skipped), removed 0" in again.stderr


def test_update_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    nothing = run("update", "--index", str(tmp_path / "index"))
    assert nothing.returncode == 2 and "nothing to do" in nothing.stderr
    ids = tmp_path / "ids.txt"
    ids.write_text("site:1\n", encoding="utf-8")
    missing = run("update", "--index", str(tmp_path / "index"), "--remove", str(ids))
    assert missing.returncode == 2 and "assistant index CORPUS" in missing.stderr
    unreadable = run("update", "--index", str(tmp_path / "index"), "--remove", str(tmp_path / "absent.txt"))
    assert unreadable.returncode == 2 and "absent.txt" in unreadable.stderr


def test_update_retrains_without_reports_and_keeps_the_index(tmp_path: Path) -> None:
    out = tmp_path / "index"
    assert run("index", str(_write(tmp_path / "monday", YESTERDAY)), "--out", str(out)).returncode == 0
    result = run("update", "--index", str(out), "--retrain")
    assert result.returncode == 0, result.stderr
    assert "retrained the findings, impression, report vector indexes" in result.stderr
    index = ReportIndex.load(out)
    assert index.manifest.reports == 3 and index.manifest.index_type == "flat"  # 3 vectors: exact again
    assert index.search("left lower lobe pneumonia", k=1)[0].report.id == "site:2"


def test_an_index_from_an_older_program_is_flagged_by_search_and_retokenized(tmp_path: Path) -> None:
    """A manifest without the BM25 tokenizer's fingerprint (an index built before it was recorded): search and ask
    say so with the command, `update --retokenize` brings it to the current rules, and the note goes away."""
    out = tmp_path / "index"
    assert run("index", str(_write(tmp_path / "monday", YESTERDAY)), "--out", str(out)).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["lexical_rules"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    command = f"assistant update --index {out} --retokenize"

    stale = run("search", "pleural effusion", "--index", str(out), "-k", "1")
    assert stale.returncode == 0 and command in " ".join(stale.stderr.split()), stale.stderr
    assert command not in " ".join(
        run("search", "pleural effusion", "--index", str(out), "--method", "dense", "-k", "1").stderr.split()
    )  # dense search reads no BM25

    result = run("update", "--index", str(out), "--retokenize")
    assert result.returncode == 0, result.stderr
    assert "removed 0; BM25 tokenized anew under the current negation rules" in result.stderr
    assert all(f"BM25 {field}" in result.stderr for field in ("findings", "impression", "report"))  # progress
    assert ReportIndex.load(out).manifest.current_lexical_rules
    fixed = run("search", "pleural effusion", "--index", str(out), "-k", "1")
    assert fixed.returncode == 0 and "older negation rules" not in fixed.stderr


def test_two_days_of_the_same_export_correct_the_indexed_reports(tmp_path: Path) -> None:
    """Issue 39: `update monday/site.jsonl tuesday/site.jsonl` (or their folder) kept Monday's uncorrected reports and
    took Tuesday's as another source. Files of one name are one source's exports; the later record of an id wins."""
    out = tmp_path / "index"
    days = tmp_path / "days"
    days.mkdir()
    monday, tuesday = _write(days / "monday", YESTERDAY), _write(days / "tuesday", TODAY)
    assert run("index", str(monday), "--out", str(out)).returncode == 0

    result = run("update", str(monday), str(tuesday), "--index", str(out))
    assert result.returncode == 0, result.stderr
    assert "added 1, replaced 1, unchanged 2 (skipped), removed 0" in result.stderr
    store = ReportStore(out / STORE_FILE)
    assert sorted(report.id for _, report in store.iter_reports()) == ["site:1", "site:2", "site:3", "site:4"]
    store.close()
    assert ReportIndex.load(out).search("right lower lobe pneumonia", k=1)[0].report.id == "site:2"

    folder = run("update", str(days), "--index", str(out))  # the folder of days: the same outcome
    assert folder.returncode == 0 and "added 0, replaced 0, unchanged 4 (skipped)" in folder.stderr, folder.stderr


def test_an_ids_file_with_a_byte_order_mark_removes_its_first_id(tmp_path: Path) -> None:
    out = tmp_path / "index"
    assert run("index", str(_write(tmp_path / "monday", YESTERDAY)), "--out", str(out)).returncode == 0
    ids = tmp_path / "ids.txt"
    ids.write_bytes("site:1\r\nsite:2\r\n".encode("utf-8-sig"))  # as Windows Notepad saves it
    result = run("update", "--remove", str(ids), "--index", str(out))
    assert result.returncode == 0 and "removed 2" in result.stderr, result.stderr

    same = run("update", "--remove", str(ids), "--rejects", str(ids), "--index", str(out))
    assert same.returncode == 2 and "ids.txt" in same.stderr, same.stderr
    assert ids.read_bytes() == "site:1\r\nsite:2\r\n".encode("utf-8-sig")  # the list is never written over
