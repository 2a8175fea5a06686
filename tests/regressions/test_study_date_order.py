"""Issue 51, item 5: one odd row re-dated a whole column. A US export (11/05, 11/06, 11/07/2026) with one
`13/01/2026` row was read day first throughout (May 11, Jun 11, Jul 11, no note) and `--since 2026-11-01` found
nothing. The order is now decided with the evidence of every row, and the odd row and the dates that could be
either say how they were read."""

from __future__ import annotations

import csv
from pathlib import Path

from retriever.index.date_filter import StudyDates
from retriever.reports.ingest import Exclusions, ingest
from retriever.reports.sources.study_dates import DateColumn

NO_EXCLUSIONS = Exclusions(require_findings=False, require_impression=False, drop_duplicate_findings=False)


def _export(path: Path, dates: list[str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["AccessionNumber", "StudyDate", "ReportText"])
        for number, written in enumerate(dates, start=1):
            writer.writerow([f"A{number}", written, f"FINDINGS: Finding {number}.\nIMPRESSION: Impression {number}."])
    return path


def test_one_day_first_row_does_not_re_date_a_month_first_export(tmp_path: Path) -> None:
    written = ["11/05/2026", "11/06/2026", "11/07/2026", "13/01/2026"]
    result = ingest([str(_export(tmp_path / "site.csv", written))], NO_EXCLUSIONS)
    meta = {r.id: r.meta for r in result.reports}
    assert [meta[f"site:A{n}"]["date"] for n in (1, 2, 3)] == ["2026-11-05", "2026-11-06", "2026-11-07"]
    assert all("month first" in meta[f"site:A{n}"]["date_note"] for n in (1, 2, 3))  # the ambiguity is reported
    odd = meta["site:A4"]
    assert odd["date"] == "2026-01-13" and "written day first" in odd["date_note"]
    assert sum(result.date_notes.values()) == 4
    dated = StudyDates((n, "site", m["date"]) for n, m in enumerate(meta.values()))
    assert len(dated.between("2026-11-01", None)) == 3


def test_one_month_first_row_does_not_re_date_a_day_first_export() -> None:
    """The same attack the other way round: a European export (dots) with one row written month first."""
    column = DateColumn.of(["05.11.2026", "06.11.2026", "07.11.2026", "09.11.2026", "11.23.2026"])
    assert column.read("06.11.2026")[0] == "2026-11-06"
    day, note = column.read("11.23.2026")
    assert day == "2026-11-23" and "written month first" in note


def test_rows_that_agree_are_read_without_a_note() -> None:
    """A column whose rows show one order and lie close together that way is read so, silently, as before."""
    column = DateColumn.of(["05/11/2026", "23/11/2026", "24/11/2026"])
    assert column.read("05/11/2026") == ("2026-11-05", "")
