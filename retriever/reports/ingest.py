"""Ingestion: importers' outcomes -> the Reports to index, plus a full account of what was rejected and why.

Applies the RadSearch exclusions (reports missing findings or impression; duplicate findings) as options. Invariant,
checked by tests: records in = kept + earlier versions + rejected, per source. One `SourceNames` serves all corpus
arguments: with a `site` (the index's, `assistant index --source`) every table's reports are that site's studies,
`SITE:ACCESSION`, whatever the files are called; without one, a table's reports are named after its file, as before
(two files never share ids, the same file read twice does). An update of an index without a site reads files
against the sources it holds (`held_sources`).
Records of one id are versions of one study (retriever/reports/versions.py): the newest is kept, the others are
counted as earlier versions and kept in the index's history; a record identical to one read before is rejected
("repeated record"). A kept report whose study date was not read, or read by a convention
(retriever/reports/sources/study_dates.py), is counted by its note, for the summary to say so.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Protocol

from retriever.reports.record import Report
from retriever.reports.sources import ColumnMap, Rejection, SourceNames, iter_corpus
from retriever.reports.versions import StudyVersions, VersionKey, export_date, version_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Exclusions:
    """Which records to drop. Defaults follow the RadSearch paper."""

    require_findings: bool = True
    require_impression: bool = True
    #: The paper's exclusion, which the benchmarks' unique-impression corpora keep; `assistant index` and `update`
    #: keep every study (issue 50) unless told to drop.
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
    #: Records per source that a newer version of their study replaced (kept in the index's history).
    earlier: Counter[str] = field(default_factory=Counter)
    #: Those records themselves, when the run holds its reports (`ingest`; a streaming build writes them to its store).
    history: list[Report] = field(default_factory=list)

    @property
    def kept(self) -> int:
        """Reports kept, held or streamed."""
        return len(self.reports) + self.streamed.total()

    @property
    def records_in(self) -> int:
        return self.kept + len(self.rejections) + self.earlier.total()

    def count_date(self, report: Report, change: int = 1) -> None:
        """Count a kept report's study date note, if it has one (-1: the report was superseded after all)."""
        if note := report.meta.get("date_note"):
            self.date_notes[report.source, note] += change

    def reject_later(self, rejections: Iterable[Rejection]) -> None:
        """Count rejections found after ingestion (an update's, against the index) among this run's: their reports
        leave `reports`, so the summary's counts still add up."""
        later = list(rejections)
        refused = {(r.source, r.ref) for r in later}
        for report in [r for r in self.reports if (r.source, r.id) in refused]:
            self.reports.remove(report)
            self.count_date(report, -1)
        self.rejections.extend(later)

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


#: The reason a record is not used when the same version of its study was read before (the same file given twice).
REPEATED = "repeated record"


def ingest(
    corpora: Iterable[str],
    exclusions: Exclusions = Exclusions(),
    mapping: ColumnMap | None = None,
    held_sources: frozenset[str] | None = None,
    site: str | None = None,
) -> IngestResult:
    """Read every corpus argument, apply exclusions, and log each rejection with its reason. Of several versions of a
    study the newest is in `reports`, the others in `history`. `site`: the index's site name (module docstring);
    `held_sources`: an update of an index without one."""
    result = IngestResult()
    slots = _ListSlots(result)
    keep_newest(iter_ingest(corpora, exclusions, mapping, result, held_sources, site), result, slots)
    return result


class Slots(Protocol):
    """Where a run keeps each study's newest version (a list, or a build's store) and its earlier ones."""

    def add(self, slot: int, report: Report) -> None: ...
    def replace(self, slot: int, report: Report) -> Report | None: ...
    def keep_earlier(self, report: Report, when: str) -> None: ...


def keep_newest(stream: Iterator[tuple[Report, VersionKey]], result: IngestResult, slots: Slots) -> None:
    """Place each kept record: a study's first in a new slot (counted in `result.streamed` unless the slots hold
    the reports), a newer version in its study's slot, an older one or the replaced one into the history, a record
    identical to its study's newest version rejected."""
    versions = StudyVersions()
    for report, key in stream:
        placed = versions.place(report.id, key, _digest(report), report.source, report.meta.get("date_note", ""))
        if placed.first:
            slots.add(placed.slot, report)
            continue
        result.count_date(report, -1)
        if placed.same:
            detail = f"the same version of {report.id} was read before"
            result.rejections.append(Rejection(report.source, report.id, REPEATED, detail, row=_row(report)))
            continue
        earlier = slots.replace(placed.slot, report) if placed.newest else report
        if placed.newest:
            result.count_date(report)
            if placed.replaced_note:
                result.date_notes[placed.replaced_source, placed.replaced_note] -= 1
        result.earlier[placed.replaced_source if placed.newest else report.source] += 1
        if earlier is not None:
            slots.keep_earlier(earlier, placed.newest_export)


def _digest(report: Report) -> str:
    return hashlib.sha256(json.dumps(asdict(report), ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:24]


@dataclass
class _ListSlots:
    """`ingest`'s slots: the result's report list and history."""

    result: IngestResult

    def add(self, slot: int, report: Report) -> None:
        self.result.reports.append(report)

    def replace(self, slot: int, report: Report) -> Report | None:
        earlier, self.result.reports[slot] = self.result.reports[slot], report
        return earlier

    def keep_earlier(self, report: Report, when: str) -> None:
        self.result.history.append(report)  # an update keeps it with the update's time


def iter_ingest(
    corpora: Iterable[str],
    exclusions: Exclusions,
    mapping: ColumnMap | None,
    result: IngestResult,
    held_sources: frozenset[str] | None = None,
    site: str | None = None,
) -> Iterator[tuple[Report, VersionKey]]:
    """The kept records one at a time with their version keys (retriever/reports/versions.py), each rejection
    appended to `result.rejections` and logged as it is found, each study date's note counted in
    `result.date_notes`. A repeated id is yielded again: it is another version of the study (`keep_newest`). Why a
    generator: a build of millions of reports holds only the exclusions' keys (ids, findings), not the reports."""
    seen_findings: dict[str, str] = {}
    names = SourceNames(held_sources or frozenset(), site)
    order = 0
    for spec in corpora:
        for outcome in iter_corpus(spec, mapping, names):
            if isinstance(outcome, Report):
                excluded = _exclusion(outcome, exclusions, seen_findings)
                if excluded is None:
                    if outcome.findings:
                        seen_findings.setdefault(findings_key(outcome.findings), outcome.id)
                    result.count_date(outcome)
                    order += 1
                    yield outcome, version_key(outcome, export_date(names.reading), order)
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


def _exclusion(report: Report, exclusions: Exclusions, seen_findings: dict[str, str]) -> tuple[str, str] | None:
    """(reason, detail) if the report is excluded, else None."""
    if not (report.findings or report.impression or report.full_text):
        return "empty report", ""
    if exclusions.require_findings and not report.findings:
        return "missing findings", ""
    if exclusions.require_impression and not report.impression:
        return "missing impression", ""
    if exclusions.drop_duplicate_findings and report.findings:
        first = seen_findings.get(findings_key(report.findings))
        if first is not None and first != report.id:  # a study's next version may repeat its own findings
            return "duplicate findings", f"same findings as {first}"
    return None
