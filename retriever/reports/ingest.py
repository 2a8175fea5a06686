"""Ingestion: importers' outcomes -> the Reports to index, plus a full account of what was rejected and why.

Applies the RadSearch exclusions (reports missing findings or impression; duplicate findings) as options, and
always drops duplicate ids. Invariant, checked by tests: records in = kept + rejected, per source. One
`SourceNames` serves all corpus arguments, so two files never share report ids (and the same file read twice does).
An update's files are read against the sources its index holds (`held_sources`): files of one held name are that
source's exports, and a later record of an id replaces the earlier one (a correction), which is counted as
rejected ("superseded by a later record"). A kept report whose study date was not read, or read by a convention
(retriever/reports/sources/study_dates.py), is counted by its note, for the summary to say so.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from retriever.reports.record import Report
from retriever.reports.sources import ColumnMap, Rejection, SourceNames, iter_corpus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Exclusions:
    """Which records to drop. Defaults follow the RadSearch paper."""

    require_findings: bool = True
    require_impression: bool = True
    drop_duplicate_findings: bool = True


@dataclass
class IngestResult:
    """Kept reports and every rejection, with counts for the summary table."""

    reports: list[Report] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    #: Kept reports per source that were passed on instead of held in `reports` (a streaming build).
    streamed: Counter[str] = field(default_factory=Counter)
    #: Kept reports per (source, note) whose study date was not read or read by convention (their meta's date_note).
    date_notes: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def kept(self) -> int:
        """Reports kept, held or streamed."""
        return len(self.reports) + self.streamed.total()

    @property
    def records_in(self) -> int:
        return self.kept + len(self.rejections)

    def count_date(self, report: Report, change: int = 1) -> None:
        """Count a kept report's study date note, if it has one (-1: the report was superseded after all)."""
        if note := report.meta.get("date_note"):
            self.date_notes[report.source, note] += change

    def reasons(self) -> Counter[str]:
        """Number of rejections per reason."""
        return Counter(r.reason for r in self.rejections)

    def by_source(self) -> dict[str, tuple[int, int]]:
        """source -> (kept, rejected)."""
        kept = Counter(r.source for r in self.reports) + self.streamed
        rejected = Counter(r.source for r in self.rejections)
        return {s: (kept[s], rejected[s]) for s in sorted(kept.keys() | rejected.keys())}


def findings_key(text: str) -> str:
    """Findings as compared for the duplicate-findings exclusion: lowercase words, punctuation and spacing ignored."""
    return re.sub(r"\W+", " ", text.lower()).strip()


def ingest(
    corpora: Iterable[str],
    exclusions: Exclusions = Exclusions(),
    mapping: ColumnMap | None = None,
    held_sources: frozenset[str] | None = None,
) -> IngestResult:
    """Read every corpus argument, apply exclusions, and log each rejection with its reason. With `held_sources`
    (an update: the sources the index holds) a later record of an id replaces the earlier one."""
    result = IngestResult()
    reports = iter_ingest(corpora, exclusions, mapping, result, held_sources)
    if held_sources is None:
        result.reports = list(reports)
        return result
    latest: dict[str, Report] = {}
    for report in reports:
        if (earlier := latest.pop(report.id, None)) is not None:
            detail = "a later record has the same id and replaces this one"
            result.rejections.append(Rejection(earlier.source, earlier.id, SUPERSEDED, detail, row=_row(earlier)))
            result.count_date(earlier, -1)
        latest[report.id] = report
    result.reports = list(latest.values())
    return result


#: The reason an update's record is not used: a later record of the same id (a correction) replaces it.
SUPERSEDED = "superseded by a later record"


def iter_ingest(
    corpora: Iterable[str],
    exclusions: Exclusions,
    mapping: ColumnMap | None,
    result: IngestResult,
    held_sources: frozenset[str] | None = None,
) -> Iterator[Report]:
    """The kept reports one at a time, each rejection appended to `result.rejections` and logged as it is found, each
    study date's note counted in `result.date_notes`. Why a generator: a build of millions of reports holds only the
    exclusions' keys (ids, findings), not the reports. With `held_sources` (an update) a repeated id is yielded again,
    for `ingest` to replace the earlier record."""
    seen_ids: set[str] = set()
    seen_findings: dict[str, str] = {}
    names = SourceNames(held_sources or frozenset())
    for spec in corpora:
        for outcome in iter_corpus(spec, mapping, names):
            if isinstance(outcome, Report):
                repeated = held_sources is not None and outcome.id in seen_ids
                excluded = _exclusion(outcome, exclusions, set() if repeated else seen_ids, seen_findings)
                if excluded is None:
                    seen_ids.add(outcome.id)
                    if outcome.findings:
                        seen_findings.setdefault(findings_key(outcome.findings), outcome.id)
                    result.count_date(outcome)
                    yield outcome
                    continue
                outcome = Rejection(outcome.source, outcome.id, *excluded, row=_row(outcome))
            log.info("rejected %s (%s): %s %s", outcome.ref, outcome.source, outcome.reason, outcome.detail)
            result.rejections.append(outcome)


def _row(report: Report) -> dict[str, str]:
    """A report's non-empty fields as the rejects log shows them."""
    kept = {
        "id": report.id,
        "findings": report.findings,
        "impression": report.impression,
        "text": report.full_text,
        "modality": report.modality,
    }
    return {k: v for k, v in kept.items() if v}


def _exclusion(
    report: Report, exclusions: Exclusions, seen_ids: set[str], seen_findings: dict[str, str]
) -> tuple[str, str] | None:
    """(reason, detail) if the report is excluded, else None."""
    if report.id in seen_ids:
        return "duplicate id", "an earlier record has the same id"
    if not (report.findings or report.impression or report.full_text):
        return "empty report", ""
    if exclusions.require_findings and not report.findings:
        return "missing findings", ""
    if exclusions.require_impression and not report.impression:
        return "missing impression", ""
    if exclusions.drop_duplicate_findings and report.findings:
        first = seen_findings.get(findings_key(report.findings))
        if first is not None and first != report.id:  # an update's correction may repeat its own findings
            return "duplicate findings", f"same findings as {first}"
    return None
