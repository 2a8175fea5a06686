"""Ingestion: importers' outcomes -> the Reports to index, plus a full account of what was rejected and why.

Applies the RadSearch exclusions (reports missing findings or impression; duplicate findings) as options, and
always drops duplicate ids. Invariant, checked by tests: records in = kept + rejected, per source. One
`SourceNames` serves all corpus arguments, so two files never share report ids (and the same file read twice does).
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

    @property
    def kept(self) -> int:
        """Reports kept, held or streamed."""
        return len(self.reports) + self.streamed.total()

    @property
    def records_in(self) -> int:
        return self.kept + len(self.rejections)

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
    corpora: Iterable[str], exclusions: Exclusions = Exclusions(), mapping: ColumnMap | None = None
) -> IngestResult:
    """Read every corpus argument, apply exclusions, and log each rejection with its reason."""
    result = IngestResult()
    result.reports = list(iter_ingest(corpora, exclusions, mapping, result.rejections))
    return result


def iter_ingest(
    corpora: Iterable[str], exclusions: Exclusions, mapping: ColumnMap | None, rejections: list[Rejection]
) -> Iterator[Report]:
    """The kept reports one at a time, each rejection appended to `rejections` and logged as it is found. Why a
    generator: a build of millions of reports holds only the exclusions' keys (ids, findings), not the reports."""
    seen_ids: set[str] = set()
    seen_findings: dict[str, str] = {}
    names = SourceNames()
    for spec in corpora:
        for outcome in iter_corpus(spec, mapping, names):
            if isinstance(outcome, Report):
                excluded = _exclusion(outcome, exclusions, seen_ids, seen_findings)
                if excluded is None:
                    seen_ids.add(outcome.id)
                    if outcome.findings:
                        seen_findings.setdefault(findings_key(outcome.findings), outcome.id)
                    yield outcome
                    continue
                kept = {
                    "id": outcome.id,
                    "findings": outcome.findings,
                    "impression": outcome.impression,
                    "text": outcome.full_text,
                    "modality": outcome.modality,
                }
                outcome = Rejection(outcome.source, outcome.id, *excluded, row={k: v for k, v in kept.items() if v})
            log.info("rejected %s (%s): %s %s", outcome.ref, outcome.source, outcome.reason, outcome.detail)
            rejections.append(outcome)


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
        if first is not None:
            return "duplicate findings", f"same findings as {first}"
    return None
