"""The study-date filter of a search: each report's date as its index stores it, read as an ISO day once per loaded
index.

Indexes built since import read dates as ISO `YYYY-MM-DD` store them so; older indexes kept them as the export wrote
them (`20261123`, `23.11.2026`). Both are read with the import's rules (retriever/reports/sources/study_dates.py),
the day/month order decided per source as the import decides it per file, so an older index filters by date without
a rebuild (an ISO date reads as itself). A report whose date cannot be read is in no date-filtered result, as at
import.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from retriever.reports.sources.study_dates import DateColumn


class StudyDates:
    """Row ids and study days of an index's dated reports."""

    def __init__(self, dated: Iterable[tuple[int, str, str]]) -> None:
        """`dated`: (row id, source, date as stored) of every report with a date."""
        by_source: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for rowid, source, value in dated:
            by_source[source].append((rowid, value))
        rowids, days = [], []
        for entries in by_source.values():
            column = DateColumn.of(value for _, value in entries)
            for rowid, value in entries:
                if (day := column.read(value)[0]) is not None:
                    rowids.append(rowid)
                    days.append(day)
        self._rowids = np.array(rowids, dtype=np.int64)
        self._days = np.array(days, dtype="datetime64[D]")

    def between(self, since: str | None, until: str | None) -> np.ndarray:
        """Row ids of the reports dated on or after `since` and on or before `until` (ISO days; None: open)."""
        keep = np.ones(len(self._rowids), dtype=bool)
        if since:
            keep &= self._days >= np.datetime64(since)
        if until:
            keep &= self._days <= np.datetime64(until)
        return self._rowids[keep]
