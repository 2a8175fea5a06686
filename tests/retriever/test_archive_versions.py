"""A study's identity across daily exports (issue 50): versions ordered by export date, study date and status, never
by file name; the older versions kept in the history. Library level, no model."""

from __future__ import annotations

import csv
from pathlib import Path

from retriever.index.store import ReportStore, StoreWriter
from retriever.reports.ingest import REPEATED, Exclusions, ingest
from retriever.reports.record import Report
from retriever.reports.versions import export_date, older_than, status_rank

KEEP_ALL = Exclusions(require_findings=False, require_impression=False, drop_duplicate_findings=False)
HEADER = ["AccessionNumber", "StudyDate", "Modality", "ReportText"]


def _export(path: Path, rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8-sig") as handle:  # a RIS export: BOM and CRLF
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def test_export_dates_are_read_from_the_path_not_sorted_as_text() -> None:
    assert export_date(Path("days/2026-11-9/site.csv")) == "2026-11-09"
    assert export_date(Path("days/2026-11-10/site.csv")) == "2026-11-10"
    assert export_date(Path("ris_export_20261127.csv")) == "2026-11-27"
    assert export_date(Path("2026-11-01/ris_export_20261127.csv")) == "2026-11-27"  # the file's own date wins
    assert export_date(Path("exports/site.csv")) == "" and export_date(Path("20261399.csv")) == ""


def test_the_later_days_version_wins_whatever_the_folders_text_order(tmp_path: Path) -> None:
    """Issue 51 item 4: `2026-11-10` sorts before `2026-11-9` as text; the Nov 10 version is the newer."""
    days = tmp_path / "days"
    _export(days / "2026-11-9" / "site.csv", [["A1", "11/08/2026", "CR", "FINDINGS: Opacity.\nIMPRESSION: Nov 9."]])
    _export(days / "2026-11-10" / "site.csv", [["A1", "11/08/2026", "CR", "FINDINGS: Opacity.\nIMPRESSION: Nov 10."]])
    result = ingest([str(days)], KEEP_ALL, site="site")
    assert [(r.id, r.impression) for r in result.reports] == [("site:A1", "Nov 10.")]
    assert [r.impression for r in result.history] == ["Nov 9."]
    assert result.rejections == [] and result.earlier == {"site": 1}
    assert result.records_in == 2


def test_daily_files_of_any_name_update_one_sites_studies(tmp_path: Path) -> None:
    first = _export(tmp_path / "ris_export_20261126.csv", [["A1", "11/24/2026", "CR", "IMPRESSION: Preliminary."]])
    second = _export(tmp_path / "ris_export_20261127.csv", [["A1", "11/24/2026", "CR", "IMPRESSION: Final."]])
    result = ingest([str(second), str(first)], KEEP_ALL, site="north")  # given in any order
    assert [(r.id, r.impression) for r in result.reports] == [("north:A1", "Final.")]
    assert [r.reason for r in result.rejections] == []  # never "a duplicate of itself"
    again = ingest([str(first), str(first)], KEEP_ALL, site="north")  # the same file twice: one record repeated
    assert [r.reason for r in again.rejections] == [REPEATED] and len(again.reports) == 1


def test_a_site_column_names_its_rows_site(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_text("Accession,Institution,Impression\nA1,north,Effusion.\nA1,south,Edema.\n", encoding="utf-8")
    result = ingest([str(path)], KEEP_ALL, site="site")
    assert sorted(r.id for r in result.reports) == ["north:A1", "south:A1"]


def test_status_orders_versions_of_one_day() -> None:
    def version(status: str, addendum: str = "") -> Report:
        return Report("s:1", impression="x", status=status, addendum=addendum, meta={"date": "2026-11-24"})

    ranks = [status_rank(version(s)) for s in ("Preliminary", "FINAL", "", "Corrected")]
    assert ranks == [0, 1, 1, 2] and status_rank(version("final", addendum="Stable.")) == 2
    assert older_than(version("preliminary"), version("final"))
    assert not older_than(version("corrected"), version("final")) and not older_than(version("final"), version(""))


def test_the_store_keeps_a_history_and_names_bare_accessions(tmp_path: Path) -> None:
    path = tmp_path / "reports.sqlite"
    with StoreWriter(path) as writer:
        writer.add(Report("north:A1", impression="Prelim.", source="north", status="preliminary"))
        writer.add(Report("south:A1", impression="Other site.", source="south"))
        writer.add(Report("north:B2", impression="Only one.", source="north"))
        earlier = writer.replace(0, Report("north:A1", impression="Final.", source="north", status="final"))
        assert earlier is not None and earlier.status == "preliminary"
        writer.keep_earlier(earlier, "2026-11-27")
    store = ReportStore(path)
    try:
        assert store.ids_named(["A1", "B2", "north:A1", "Z9"]) == {
            "A1": ["north:A1", "south:A1"],  # not unique: both are named
            "B2": ["north:B2"],
            "north:A1": ["north:A1"],
            "Z9": [],
        }
        assert [(w, v.impression, v.status) for w, v in store.history("north:A1")] == [
            ("2026-11-27", "Prelim.", "preliminary")
        ]
        assert store.get([0])[0].status == "final"
    finally:
        store.close()


def test_a_store_written_before_issue_50_is_read_and_migrated_by_its_first_update(tmp_path: Path) -> None:
    import sqlite3

    from retriever.index.filters import SearchFilters
    from retriever.index.store import change_store

    path = tmp_path / "reports.sqlite"
    with sqlite3.connect(path) as db:  # the schema of the previous release
        db.executescript(
            "CREATE TABLE reports (rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, findings TEXT, impression TEXT,"
            " full_text TEXT, modality TEXT, source TEXT, meta TEXT);"
            "CREATE TABLE labels (rowid INTEGER NOT NULL, label TEXT NOT NULL);"
        )
        db.execute("INSERT INTO reports VALUES (0, 'site:A1', 'Clear.', 'Normal.', '', 'XR', 'site', '{}')")
    db.close()
    old = ReportStore(path)
    try:
        assert not old.current and old.get([0])[0].status == "" and old.history("site:A1") == []
        assert old.filter_rowids(SearchFilters(status="final")).tolist() == []  # no status: nothing matches
        assert old.ids_named(["A1"]) == {"A1": ["site:A1"]}
    finally:
        old.close()
    newer = Report("site:A1", "Clear.", "Normal, final.", modality="XR", source="site", status="final")
    previous = Report("site:A1", "Clear.", "Normal.", modality="XR", source="site")
    change_store(path, [(0, newer)], [], [previous])
    migrated = ReportStore(path)
    try:
        assert migrated.current and migrated.get([0])[0] == newer
        assert [v.impression for _, v in migrated.history("site:A1")] == ["Normal."]
        assert migrated.filter_rowids(SearchFilters(status="FINAL")).tolist() == [0]
    finally:
        migrated.close()
