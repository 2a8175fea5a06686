"""Hospital exports as they come (issue 39): RIS/PACS column spellings of several vendors, DICOM modality codes and
study dates, read with no `--map`; an index's mapping reused by the next day's `assistant update`; a mostly rejected
file refused (exit 2, nothing written) with the `--map` that reads it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_importers import write_csv

REPO = Path(__file__).resolve().parents[2]
FINDINGS = [
    "Blunting of the left costophrenic angle.",
    "Patchy consolidation in the right lower lobe.",
    "Cardiac silhouette is enlarged.",
    "Apical pleural line without lung markings.",
]
IMPRESSIONS = ["Small left pleural effusion.", "Right lower lobe pneumonia.", "Cardiomegaly.", "Right pneumothorax."]


def _report(n: int) -> str:
    return f"FINDINGS: {FINDINGS[n % 4]} Case {n}.\nIMPRESSION: {IMPRESSIONS[n % 4]}"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """`assistant COMMAND ...`, keeping the generated reports' look-alike findings (the exclusion is not under test)."""
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli", *args, "--keep-duplicate-findings"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ris")
    codes = ["CR", "DX", "CT", "MR", "US", "PT"]
    write_csv(
        folder / "vendor_a.csv",
        ["AccessionNumber", "StudyDate", "Modality", "ReportText"],
        [[f"A{n}", f"2026112{n % 9}", codes[n % 6], _report(n)] for n in range(12)],
    )
    write_csv(
        folder / "vendor_b.csv",
        ["Accession No.", "Exam Date", "Modality Code", "Body Part Examined", "Report Text"],
        [[f"B{n}", "2026-11-27", codes[(n + 1) % 6], "CHEST", _report(n + 100)] for n in range(12)],
    )
    (folder / "day1").mkdir()
    (folder / "day2").mkdir()
    write_csv(
        folder / "day1" / "site.csv",
        ["Auftragsnummer", "Modalitaet", "Bericht"],
        [[f"S{n}", "CR", _report(n)] for n in range(12)],
    )
    write_csv(
        folder / "day2" / "site.csv",
        ["Auftragsnummer", "Modalitaet", "Bericht"],
        [[f"S{n}", "DX", _report(n + 2)] for n in range(12, 22)],
    )
    return folder


def test_vendor_spellings_are_read_without_a_map(exports: Path, tmp_path: Path, minilm) -> None:
    from retriever.index.report_index import ReportIndex, SearchFilters

    out = tmp_path / "index"
    built = _run(
        "index", str(exports / "vendor_a.csv"), str(exports / "vendor_b.csv"), "--encoder", "minilm", "--out", str(out)
    )
    assert built.returncode == 0, built.stderr
    index = ReportIndex.load(out)
    assert index.manifest.reports == 24
    radiographs = index.search("pleural effusion", "impression", 24, SearchFilters(modality="CR"), method="bm25")
    assert radiographs and {h.report.modality for h in radiographs} == {"XR"}
    assert {h.report.meta["modality_original"] for h in radiographs} <= {"CR", "DX"}
    dated = {h.report.id: h.report.meta for h in index.search("effusion", "impression", 24, method="bm25")}
    assert dated["vendor_a:A0"]["date"] == "20261120"
    assert dated["vendor_b:B0"] == {"modality_original": "DX", "date": "2026-11-27", "body_part": "CHEST"}


def test_a_mostly_rejected_file_is_refused_with_the_map_that_reads_it(exports: Path, tmp_path: Path, minilm) -> None:
    out, rejects = tmp_path / "index", tmp_path / "rejects.jsonl"
    refused = _run(
        "index", str(exports / "day1" / "site.csv"), "--encoder", "minilm", "--out", str(out), "--rejects", str(rejects)
    )
    assert refused.returncode == 2, refused.stderr
    assert "12 of 12 records rejected" in refused.stderr and "--map text=Bericht" in refused.stderr
    assert not out.exists() and len(rejects.read_text(encoding="utf-8").splitlines()) == 12
    first = json.loads(rejects.read_text(encoding="utf-8").splitlines()[0])
    assert first["row"]["Bericht"] and "Auftragsnummer" in first["row"]  # the row itself, to fix and re-import
    built = _run(
        "index",
        str(exports / "day1" / "site.csv"),
        "--encoder",
        "minilm",
        "--out",
        str(out),
        "--map",
        "id=Auftragsnummer,text=Bericht,modality=Modalitaet",
    )
    assert built.returncode == 0, built.stderr
    assert json.loads((out / "manifest.json").read_text())["column_map"] == {
        "id": "Auftragsnummer",
        "text": "Bericht",
        "modality": "Modalitaet",
    }


def test_the_next_days_export_is_read_with_the_indexs_own_map(exports: Path, tmp_path: Path, minilm) -> None:
    from retriever.index.report_index import ReportIndex

    out = tmp_path / "index"
    assert (
        _run(
            "index",
            str(exports / "day1" / "site.csv"),
            "--encoder",
            "minilm",
            "--out",
            str(out),
            "--map",
            "id=Auftragsnummer,text=Bericht,modality=Modalitaet",
        ).returncode
        == 0
    )
    updated = _run("update", str(exports / "day2" / "site.csv"), "--index", str(out))
    assert updated.returncode == 0, updated.stderr
    assert "added 10" in updated.stderr
    index = ReportIndex.load(out)
    assert index.manifest.reports == 22 and index.manifest.column_map["text"] == "Bericht"
