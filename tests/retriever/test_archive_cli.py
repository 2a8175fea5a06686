"""A hospital archive as a user indexes it (issue 50), through the `assistant` command: three days of a RIS export
named by date, a study of a site found by its accession alone, every study kept, and the ingestion summary after an
update counting every rejection."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from cli_fixtures import run

from retriever.index.report_index import STORE_FILE, ReportIndex
from retriever.index.store import ReportStore
from retriever.reports.record import Report

pytestmark = pytest.mark.models  # real CLI processes and a real model

HEADER = ["AccessionNumber", "PatientID", "StudyDate", "Modality", "StudyDescription", "ReportStatus", "ReportText"]
NORMAL = "FINDINGS: The lungs are clear. No effusion.\r\nIMPRESSION: No acute cardiopulmonary abnormality."
NODULE = "FINDINGS: 8 mm nodule in the right upper lobe.\r\nIMPRESSION: Right upper lobe nodule."
DAYS = {
    "20261126": [
        [
            "A1",
            "P1",
            "11/24/2026",
            "CR",
            "XR CHEST 2 VIEWS",
            "PRELIMINARY",
            "FINDINGS: Patchy opacity in the right lower lobe.\r\nIMPRESSION: Possible early pneumonia.",
        ],
        ["A2", "P2", "11/24/2026", "CR", "XR CHEST 2 VIEWS", "FINAL", NODULE],
        [
            "A3",
            "P3",
            "11/25/2026",
            "CT",
            "CT HEAD WO CONTRAST",
            "FINAL",
            "FINDINGS: No hemorrhage.\r\nIMPRESSION: No acute intracranial abnormality.",
        ],
        ["A4", "P4", "11/25/2026", "CR", "XR CHEST 1 VIEW", "FINAL", NORMAL],
        ["A5", "P5", "11/25/2026", "CR", "XR CHEST 1 VIEW", "FINAL", NORMAL],
    ],
    "20261127": [
        [
            "A1",
            "P1",
            "11/24/2026",
            "CR",
            "XR CHEST 2 VIEWS",
            "FINAL",
            "FINDINGS: Patchy opacity in the right lower lobe.\r\nIMPRESSION: Right lower lobe pneumonia.",
        ],
        [
            "A6",
            "P6",
            "11/26/2026",
            "CR",
            "XR CHEST 2 VIEWS",
            "FINAL",
            "FINDINGS: Enlarged cardiac silhouette.\r\nIMPRESSION: Cardiomegaly.",
        ],
    ],
    "20261128": [
        [
            "A2",
            "P2",
            "11/24/2026",
            "CR",
            "XR CHEST 2 VIEWS",
            "CORRECTED",
            NODULE + "\r\nADDENDUM: Compared with the outside study, the nodule is a stable calcified granuloma.",
        ],
    ],
}


def _export(folder: Path, day: str, rows: list[list[str]]) -> Path:
    path = folder / f"ris_export_{day}.csv"
    with path.open("w", newline="", encoding="utf-8-sig") as handle:  # as RIS exports come: a BOM, CRLF
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def _ids(index: Path) -> list[str]:
    store = ReportStore(index / STORE_FILE)
    try:
        return sorted(report.id for _, report in store.iter_reports())
    finally:
        store.close()


def test_three_daily_exports_keep_each_study_once_in_its_newest_version(tmp_path: Path) -> None:
    exports, index = tmp_path / "exports", tmp_path / "index"
    exports.mkdir()
    files = {day: _export(exports, day, rows) for day, rows in DAYS.items()}
    built = run("index", str(files["20261126"]), "--out", str(index), "--encoder", "minilm")
    assert built.returncode == 0, built.stderr
    second = run("update", str(files["20261127"]), "--index", str(index))
    assert second.returncode == 0 and "added 1, replaced 1" in second.stderr, second.stderr
    removal = tmp_path / "remove.txt"
    removal.write_text("A3\n", encoding="utf-8")  # the accession alone: unique in the index
    third = run("update", str(files["20261128"]), "--index", str(index), "--remove", str(removal))
    assert third.returncode == 0 and "replaced 1" in third.stderr and "removed 1" in third.stderr, third.stderr
    for output in (built, second, third):
        assert "duplicate" not in output.stderr  # nothing rejected as a duplicate of itself (or of a twin)

    assert _ids(index) == ["site:A1", "site:A2", "site:A4", "site:A5", "site:A6"]  # each study once, A3 removed
    final = run("show", "A1", "--index", str(index), "--json")
    assert final.returncode == 0 and "Right lower lobe pneumonia." in json.loads(final.stdout)["impression"]
    addendum = run(
        "search", "stable calcified granuloma", "--field", "report", "--method", "bm25", "--index", str(index), "--json"
    )
    assert json.loads(addendum.stdout)["hits"][0]["id"] == "site:A2"
    history = run("show", "A1", "--index", str(index), "--history")
    assert history.returncode == 0 and "Possible early pneumonia." in history.stdout
    assert "Right lower lobe pneumonia." in history.stdout and "\\x0d" not in history.stdout  # CRLF shown as lines
    removed = run("show", "site:A3", "--index", str(index), "--history")
    assert "removed" in removed.stderr and "No acute intracranial abnormality." in removed.stdout


def test_thirty_studies_of_three_texts_are_each_found_dated_and_removable(tmp_path: Path, minilm) -> None:
    texts = [
        ("Small left pleural effusion.", "Left effusion."),
        ("Clear lungs.", "Normal chest."),
        ("Enlarged heart.", "Cardiomegaly."),
    ]
    reports = [
        Report(f"site:S{n}", texts[n % 3][0], texts[n % 3][1], source="site", meta={"date": f"2026-11-{n + 1:02d}"})
        for n in range(30)
    ]
    folder = tmp_path / "index"
    ReportIndex.build(reports, minilm).save(folder)
    printed = run("search", "pleural effusion", "--index", str(folder), "-k", "5", "--json")
    hits = json.loads(printed.stdout)["hits"]
    assert len(hits) == 3  # one hit per text, not five copies of the first
    found = {h["id"]: h["date"] for h in hits} | {o["id"]: o["date"] for h in hits for o in h["identical"]}
    assert found == {r.id: r.meta["date"] for r in reports}  # all 30, each dated
    assert sorted(len(h["identical"]) for h in hits) == [9, 9, 9]
    table = run("search", "pleural effusion", "--index", str(folder), "-k", "5")
    assert "and 9 identical reports" in table.stdout and "2026-11-" in table.stdout

    from retriever.index.update import update_index

    remaining = {r.id for r in reports}
    for report in reports:  # removable one by one: each removal leaves the others found
        update_index(folder, [], removals=[report.id], encoder=minilm)
        remaining.discard(report.id)
        if remaining:
            index = ReportIndex.load(folder, minilm)
            hits = index.search("chest", k=5, method="bm25") + index.search("pleural effusion", k=5)
            shown = {h.report.id for h in hits} | {o.id for h in hits for o in h.identical}
            assert report.id not in shown
    assert _ids(folder) == []


def test_status_and_exam_filter_and_show_names_an_accession_shared_by_two_sites(tmp_path: Path, minilm) -> None:
    def study(rid: str, status: str, exam: str, date: str) -> Report:
        site = rid.split(":")[0]
        return Report(
            rid, "Patchy opacity.", f"Pneumonia {rid}.", source=site, status=status, exam=exam, meta={"date": date}
        )

    reports = [
        study("north:A7", "final", "XR CHEST 2 VIEWS", "2026-11-20"),
        study("north:A8", "preliminary", "XR CHEST 2 VIEWS", "2026-11-22"),
        study("north:A9", "final", "CT CHEST WO", "2026-11-21"),
        study("south:A9", "final", "XR ABDOMEN", "2026-11-23"),
    ]
    folder = tmp_path / "index"
    ReportIndex.build(reports, minilm).save(folder)

    def ids(*flags: str) -> list[str]:
        printed = run("search", "pneumonia", "--index", str(folder), "--json", *flags)
        assert printed.returncode == 0, printed.stderr
        return [h["id"] for h in json.loads(printed.stdout)["hits"]]

    assert sorted(ids("--status", "final")) == ["north:A7", "north:A9", "south:A9"]
    assert sorted(ids("--exam", "chest 2 views")) == ["north:A7", "north:A8"]
    assert ids("--sort", "date") == ["south:A9", "north:A8", "north:A9", "north:A7"]  # newest study first
    table = run("search", "pneumonia", "--index", str(folder))
    assert "2026-11-22, preliminary" in table.stdout
    unique = run("show", "A7", "--index", str(folder))
    assert unique.returncode == 0 and "north:A7" in unique.stdout and "study date 2026-11-20" in unique.stdout
    shared = run("show", "A9", "--index", str(folder))
    assert shared.returncode == 2 and "north:A9" in shared.stderr and "south:A9" in shared.stderr


def test_the_summary_after_update_counts_every_rejection(tmp_path: Path) -> None:
    day1 = tmp_path / "day1.csv"
    day1.write_text("id,findings,impression\n1,Right effusion.,Effusion.\n2,Clear.,Normal.\n", encoding="utf-8")
    day2 = tmp_path / "day2.csv"
    day2.write_text(
        "id,findings,impression\n3,Right effusion.,Effusion again.\n4,,No findings.\n5,Edema.,CHF.\n", encoding="utf-8"
    )
    index = tmp_path / "index"
    assert run("index", str(day1), "--out", str(index), "--encoder", "minilm").returncode == 0
    rejects = tmp_path / "rejects.jsonl"
    printed = run("update", str(day2), "--index", str(index), "--drop-duplicate-findings", "--rejects", str(rejects))
    assert printed.returncode == 0, printed.stderr
    # one rejected at reading (no findings), one against the index (the findings of site:1): both in the table
    total = re.search(r"total\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)", printed.stderr)
    assert total is not None and total.groups() == ("3", "1", "2"), printed.stderr
    assert printed.stderr.index("total") < printed.stderr.index("rejected site:3")
    assert len(rejects.read_text(encoding="utf-8").splitlines()) == 2
