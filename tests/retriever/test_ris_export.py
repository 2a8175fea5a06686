"""Hospital exports as they come (issue 39): RIS/PACS column spellings of several vendors, DICOM modality codes and
study dates, read with no `--map`; an index's mapping reused by the next day's `assistant update`; a mostly rejected
file refused (exit 2, nothing written) with the `--map` that reads it; study dates of every vendor's spelling
searchable with `--since`/`--until` after the next day's update (H4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, timedelta
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
FIRST_DAY = date(2026, 11, 20)
#: How each vendor writes a study date (DICOM DA, ISO with a time, day first with dots, US month first with a time).
SPELLINGS = {
    "vendor_a": lambda day: day.strftime("%Y%m%d"),
    "vendor_b": lambda day: day.strftime("%Y-%m-%dT08:30:00"),
    "vendor_c": lambda day: day.strftime("%d.%m.%Y"),
    "vendor_d": lambda day: day.strftime("%m/%d/%Y 09:15 AM"),
}
NEXT_DAY = date(2026, 12, 1)  # day and month both under 13: the day-2 files are read by their separators' convention
UNREADABLE = "31.11.2026"  # vendor_c's row C5 (a date that does not exist): indexed, in no date-filtered result


def _report(n: int) -> str:
    return f"FINDINGS: {FINDINGS[n % 4]} Case {n}.\nIMPRESSION: {IMPRESSIONS[n % 4]}"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """`assistant index|update ...`, keeping the generated reports' look-alike findings (the exclusion is not under
    test)."""
    return _assistant(*args, "--keep-duplicate-findings")


def _assistant(*args: str) -> subprocess.CompletedProcess[str]:
    """`assistant COMMAND ...` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "200"},
    )


def _day(n: int) -> date:
    """The study day of the generated row `n` of the first exports: eight days from FIRST_DAY."""
    return FIRST_DAY + timedelta(days=n % 8)


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ris")
    codes = ["CR", "DX", "CT", "MR", "US", "PT"]
    write_csv(
        folder / "vendor_a.csv",
        ["AccessionNumber", "StudyDate", "Modality", "ReportText"],
        [[f"A{n}", SPELLINGS["vendor_a"](_day(n)), codes[n % 6], _report(n)] for n in range(12)],
    )
    write_csv(
        folder / "vendor_b.csv",
        ["Accession No.", "Exam Date", "Modality Code", "Body Part Examined", "Report Text"],
        [[f"B{n}", SPELLINGS["vendor_b"](_day(n)), codes[(n + 1) % 6], "CHEST", _report(n + 100)] for n in range(12)],
    )
    c_dates = [UNREADABLE if n == 5 else SPELLINGS["vendor_c"](_day(n)) for n in range(12)]
    write_csv(
        folder / "vendor_c.csv",
        ["Accession", "Study Date", "Modality", "Report"],
        [[f"C{n}", c_dates[n], codes[(n + 2) % 6], _report(n + 200)] for n in range(12)],
    )
    write_csv(
        folder / "vendor_d.csv",
        ["Acc No", "Study DateTime", "Modality", "Final Report"],
        [[f"D{n}", SPELLINGS["vendor_d"](_day(n)), codes[(n + 3) % 6], _report(n + 300)] for n in range(12)],
    )
    (folder / "day2").mkdir()
    write_csv(
        folder / "day2" / "vendor_c.csv",
        ["Accession", "Study Date", "Modality", "Report"],
        [[f"C{n}", SPELLINGS["vendor_c"](NEXT_DAY), "CR", _report(n + 400)] for n in range(12, 16)],
    )
    write_csv(
        folder / "day2" / "vendor_d.csv",
        ["Acc No", "Study DateTime", "Modality", "Final Report"],
        [[f"D{n}", SPELLINGS["vendor_d"](NEXT_DAY), "DX", _report(n + 500)] for n in range(12, 16)],
    )
    (folder / "day1").mkdir()
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
    assert dated["site:A0"] == {"modality_original": "CR", "date": "2026-11-20", "date_original": "20261120"}
    assert dated["site:B0"] == {
        "modality_original": "DX",
        "date": "2026-11-20",
        "date_original": "2026-11-20T08:30:00",
    }  # the body part is the report's own field (tests/retriever/test_report_signoffs.py)


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


def _dated_ids(out: Path, *bounds: str) -> set[str]:
    """The ids `assistant search` finds among every report (all hold the word "case") between the bounds."""
    found = _assistant(
        "search", "case", "--index", str(out), "--field", "findings", "-k", "100", "--method", "bm25", "--json", *bounds
    )
    assert found.returncode == 0, found.stderr
    return {hit["id"] for hit in json.loads(found.stdout)["hits"]}


def test_study_dates_of_every_spelling_are_searchable_after_the_next_days_update(
    exports: Path, tmp_path: Path, minilm
) -> None:
    """The acceptance of issue 39: four vendors' exports (four date spellings), then the next day's files of two of
    them with `update` and no `--map`: every row indexed, and `--since`/`--until` find exactly each day's rows."""
    out = tmp_path / "index"
    first = [str(exports / f"{vendor}.csv") for vendor in SPELLINGS]
    built = _run("index", *first, "--encoder", "minilm", "--out", str(out))
    assert built.returncode == 0, built.stderr
    assert "Study dates" in built.stderr and "not read: not a date" in built.stderr  # C5's date, said so
    updated = _run(
        "update", str(exports / "day2" / "vendor_c.csv"), str(exports / "day2" / "vendor_d.csv"), "--index", str(out)
    )
    assert updated.returncode == 0, updated.stderr
    assert "added 8" in updated.stderr and "read day first" in updated.stderr and "read month first" in updated.stderr

    letters = {"vendor_a": "A", "vendor_b": "B", "vendor_c": "C", "vendor_d": "D"}
    # one site's studies, whichever vendor's file they came in (issue 50): `site:ACCESSION`
    days = {f"site:{letters[vendor]}{n}": _day(n) for vendor in SPELLINGS for n in range(12)}
    days |= {f"site:{letters[vendor]}{n}": NEXT_DAY for vendor in ("vendor_c", "vendor_d") for n in range(12, 16)}
    del days["site:C5"]  # its date cannot be read
    assert _dated_ids(out) == set(days) | {"site:C5"}  # every row indexed, the undated one too
    for since, until in [
        (date(2026, 11, 22), date(2026, 11, 23)),
        (NEXT_DAY, NEXT_DAY),
        (FIRST_DAY, date(2026, 11, 20)),
    ]:
        expected = {rid for rid, day in days.items() if since <= day <= until}
        assert _dated_ids(out, "--since", since.isoformat(), "--until", until.isoformat()) == expected, (since, until)
    assert _dated_ids(out, "--since", "2026-11-27") == {rid for rid, day in days.items() if day >= date(2026, 11, 27)}
    asked = _assistant(
        "ask",
        "case of pleural effusion",  # "case" alone names no finding: it would search nothing (no_finding)
        "--index",
        str(out),
        "--prompt",
        "evidence",
        "--method",
        "bm25",
        "--field",
        "findings",
        "-k",
        "20",
        "--since",
        "01.12.2026",
        "--until",
        "2026-12-01",
        "--json",
    )
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert {r["report_id"] for r in answer["retrieved"]} == {rid for rid, day in days.items() if day == NEXT_DAY}
    assert answer["configuration"]["retrieval"]["search"]["filters"] == {"since": "2026-12-01", "until": "2026-12-01"}
    refused = _assistant("search", "case", "--index", str(out), "--since", "05/11/2026")
    assert refused.returncode == 2 and "YYYY-MM-DD" in refused.stderr
