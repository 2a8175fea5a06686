"""Study dates (issue 39, H4): read as ISO at import however the export wrote them, day/month order decided per
column of a file, a date that cannot be read kept as written without rejecting its report; the date filter, also on
an index built before dates were read (its dates stored as written)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_importers import write_csv

from retriever.index.date_filter import StudyDates
from retriever.index.report_index import ReportIndex, SearchFilters
from retriever.reports.ingest import Exclusions, ingest
from retriever.reports.record import Report
from retriever.reports.sources.study_dates import EITHER_ORDER, NOT_A_DATE, DateColumn, filter_date

NO_EXCLUSIONS = Exclusions(require_findings=False, require_impression=False, drop_duplicate_findings=False)


@pytest.mark.parametrize(
    "written",
    [
        "20261123",  # DICOM DA
        "20261123093000.000+0100",  # DICOM DT
        "2026-11-23",
        "2026-11-23T09:30:00Z",
        "2026-11-23 09:30",
        "2026/11/23",
        "23.11.2026",
        "23/11/2026",
        "11/23/2026",
        "11/23/2026 9:30 AM",
        "23-11-2026",
        " 23.11.2026 ",
    ],
)
def test_every_spelling_of_one_day_reads_as_that_day(written: str) -> None:
    assert DateColumn.of([written]).read(written) == ("2026-11-23", "")


def test_day_and_month_order_is_decided_by_the_whole_column_not_the_row() -> None:
    european = DateColumn.of(["05/11/2026", "23/11/2026"])  # the 23rd shows the column is day first
    assert european.read("05/11/2026") == ("2026-11-05", "")
    american = DateColumn.of(["05/11/2026", "11/23/2026"])
    assert american.read("05/11/2026") == ("2026-05-11", "")
    both = DateColumn.of(["23/11/2026", "11/23/2026", "05/11/2026"])  # no order holds: guess nothing
    assert both.read("05/11/2026") == (None, EITHER_ORDER)
    assert both.read("23/11/2026")[0] == both.read("11/23/2026")[0] == "2026-11-23"
    assert both.read("05/05/2026") == ("2026-05-05", "")  # day and month are the same: nothing to decide


def test_a_column_that_never_shows_the_order_is_read_by_its_separator_and_says_so() -> None:
    dots = DateColumn.of(["05.11.2026", "06.11.2026"])
    day, note = dots.read("05.11.2026")
    assert day == "2026-11-05" and "day first" in note
    slashes = DateColumn.of(["05/11/2026"])
    day, note = slashes.read("05/11/2026")
    assert day == "2026-05-11" and "month first" in note


@pytest.mark.parametrize("written", ["31.11.2026", "2026-13-01", "unknown", "23.11.26", "n/a"])
def test_what_is_no_date_is_not_read(written: str) -> None:
    assert DateColumn.of([written]).read(written) == (None, NOT_A_DATE)


def test_a_date_not_read_keeps_its_report_with_the_text_and_the_reason(tmp_path: Path) -> None:
    export = write_csv(
        tmp_path / "site.csv",
        ["AccessionNumber", "Study Date", "ReportText"],
        [
            ["1", "05/11/2026", "FINDINGS: Small effusion.\nIMPRESSION: Effusion."],
            ["2", "31/11/2026", "FINDINGS: Consolidation.\nIMPRESSION: Pneumonia."],
            ["3", "23/11/2026", "FINDINGS: Enlarged heart.\nIMPRESSION: Cardiomegaly."],
        ],
    )
    result = ingest([str(export)], NO_EXCLUSIONS)
    assert not result.rejections and len(result.reports) == 3
    meta = {r.id: r.meta for r in result.reports}
    assert meta["site:1"] == {"date": "2026-11-05", "date_original": "05/11/2026"}  # day first, as row 3 shows
    assert meta["site:2"] == {"date_original": "31/11/2026", "date_note": NOT_A_DATE}
    assert meta["site:3"]["date"] == "2026-11-23"
    assert dict(result.date_notes) == {("site", NOT_A_DATE): 1}


def test_dates_to_filter_by_are_one_day_however_written() -> None:
    assert filter_date("2026-11-23", "--since") == filter_date("20261123", "--since") == "2026-11-23"
    assert filter_date("23.11.2026", "--since") == "2026-11-23" and filter_date("05.11.2026", "--since") == "2026-11-05"
    assert filter_date("23/11/2026", "--since") == "2026-11-23"
    for bad in ("05/11/2026", "yesterday", "2026-02-30"):
        with pytest.raises(ValueError, match="--until .* YYYY-MM-DD"):
            filter_date(bad, "--until")
    with pytest.raises(ValueError, match="after until"):
        SearchFilters(since="2026-11-24", until="2026-11-23")
    assert SearchFilters(since="20261123").since == "2026-11-23" and SearchFilters(until="2026-11-23").any()


def test_dates_stored_as_written_by_an_older_index_are_read_when_filtering() -> None:
    dates = StudyDates(
        [
            (0, "vendor", "20261123"),
            (1, "vendor", "2026-11-24"),
            (2, "site", "05.11.2026"),
            (3, "site", "24.11.2026"),  # shows the site writes day first: row 2 is the 5th of November
            (4, "site", "not a date"),
        ]
    )
    assert sorted(dates.between("2026-11-23", "2026-11-24")) == [0, 1, 3]
    assert sorted(dates.between(None, "2026-11-05")) == [2]
    assert sorted(dates.between("2026-11-06", None)) == [0, 1, 3]
    assert dates.between("2027-01-01", None).dtype == np.int64 and not len(dates.between("2027-01-01", None))


def test_an_index_built_before_dates_were_read_filters_by_date(tmp_path: Path, minilm) -> None:
    """Its reports' meta holds the dates as the export wrote them: the filter reads them with the import's rules."""
    written = {"a:1": "20261120", "a:2": "20261123", "b:1": "23.11.2026", "b:2": "05.12.2026", "c:1": "unknown"}
    reports = [
        Report(rid, f"Pleural effusion, case {rid}.", "Effusion.", modality="XR", source=rid[0], meta={"date": day})
        for rid, day in written.items()
    ]
    folder = tmp_path / "older-index"
    ReportIndex.build(reports, minilm).save(folder)
    index = ReportIndex.load(folder)
    everything = index.search("pleural effusion", "findings", 10, method="bm25")
    assert len(everything) == 5
    week = index.search("pleural effusion", "findings", 10, SearchFilters(since="2026-11-21"), method="bm25")
    assert {h.report.id for h in week} == {"a:2", "b:1", "b:2"}
    day = SearchFilters(since="2026-11-23", until="2026-11-23", modality="XR")
    assert {h.report.id for h in index.search("pleural effusion", "findings", 10, day, method="dense")} == {
        "a:2",
        "b:1",
    }
