"""A search's metadata filters: which reports it may return, by modality, source, label, status, exam, study date
and affirmed diagnosis.

Every given filter must match. The store answers them with SQL (retriever/index/store.py); an index built in memory
(a benchmark's) with `SearchFilters.matches`, which says the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from retriever.reports.record import Report
from retriever.reports.sources.base import normalize_modality
from retriever.reports.sources.study_dates import filter_date


@dataclass(frozen=True)
class SearchFilters:
    """Optional metadata filters; all given ones must match. `since` and `until` bound the study date (on or after,
    on or before); given however a date is written, kept as ISO (ValueError for what is not one date). `status` is
    the export's report status (`final`), compared without case; `exam` a part of the study description (`chest`
    finds "XR CHEST 2 VIEWS"). `diagnosis` a concept id (retriever/concepts): only reports whose stored concepts
    say their conclusion affirms it (ReportIndex.affirming)."""

    modality: str | None = None
    source: str | None = None
    label: str | None = None
    since: str | None = None
    until: str | None = None
    status: str | None = None
    exam: str | None = None
    diagnosis: str | None = None

    def __post_init__(self) -> None:
        if self.modality:  # as the importers store it: `CR`, `DX` or `X-ray` all find the XR reports
            object.__setattr__(self, "modality", normalize_modality(self.modality))
        for bound in ("since", "until"):
            if value := getattr(self, bound):
                object.__setattr__(self, bound, filter_date(value, bound))
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since {self.since} is after until {self.until}: no date lies between them")

    def any(self) -> bool:
        return any(
            (self.modality, self.source, self.label, self.since, self.until, self.status, self.exam, self.diagnosis)
        )

    def by_metadata(self) -> bool:
        """Whether a filter other than the study date is given (those the store answers with SQL)."""
        return any((self.modality, self.source, self.label, self.status, self.exam))

    def matches(self, report: Report) -> bool:
        """Whether `report` passes the filters other than the study date."""
        return (
            (not self.modality or report.modality.lower() == self.modality.lower())
            and (not self.source or report.source.lower() == self.source.lower())
            and (not self.label or self.label.lower() in {x.lower() for x in report.labels})
            and (not self.status or report.status.lower() == self.status.lower())
            and (not self.exam or self.exam.lower() in report.exam.lower())
        )
