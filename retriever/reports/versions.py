"""Which version of a study is the newest: a study's records (preliminary, final, corrected, an addendum) arrive in
daily exports under one accession, and the index keeps the newest, the others in its history.

Versions are ordered by the export date (a date in the export's path: `ris_export_20261127.csv`, `2026-11-10/site.csv`),
then the study date, then the report status (preliminary < final < corrected or addended), then the order read. Never
by the file's name as text: `2026-11-10` sorts before `2026-11-9` as text, and a folder of days is read in that order.
An update compares what it reads with the version its index holds by study date and status alone (the index does
not keep an export date); a tie goes to the update, which is the later export.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from retriever.reports.record import Report

#: Report statuses as RIS exports spell them -> rank; unknown or absent statuses rank as final.
_RANKS = (
    (0, ("prelim", "draft", "pending", "wet read", "dictated", "transcribed", "in progress", "unverified")),
    (2, ("correct", "amend", "addend", "revis", "supplement", "changed")),
)
FINAL_RANK = 1

_SEPARATED = re.compile(r"(?<!\d)(\d{4})[-_.](\d{1,2})[-_.](\d{1,2})(?!\d)")
_COMPACT = re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)")


def status_rank(report: Report) -> int:
    """0 preliminary, 1 final (or not said), 2 corrected or with an addendum."""
    status = report.status.lower()
    for rank, words in _RANKS:
        if any(word in status for word in words):
            return rank
    return 2 if report.addendum.strip() else FINAL_RANK


def export_date(path: Path | None) -> str:
    """The last date written in `path` (file name, then its folders) as ISO, "" when none is: the day of the export."""
    if path is None:
        return ""
    for part in reversed(path.parts):
        found = [*_SEPARATED.finditer(part), *_COMPACT.finditer(part)]
        for match in sorted(found, key=lambda m: m.start(), reverse=True):
            try:
                return date(*(int(g) for g in match.groups())).isoformat()
            except ValueError:
                continue
    return ""


VersionKey = tuple[str, str, int, int]


def version_key(report: Report, exported: str, order: int) -> VersionKey:
    """How a run orders the versions of one study (larger: newer)."""
    return (exported, report.meta.get("date", ""), status_rank(report), order)


def older_than(report: Report, indexed: Report) -> bool:
    """Whether an update's `report` is an older version than the `indexed` one: an earlier study date, or the same
    with a lower status (a preliminary read after the final)."""
    mine, theirs = report.meta.get("date", ""), indexed.meta.get("date", "")
    if mine and theirs and mine != theirs:
        return mine < theirs
    return status_rank(report) < status_rank(indexed)


@dataclass(frozen=True)
class Placed:
    """Where a record goes. `slot`: its study's (numbered by first record); `first`: the study's first record;
    `newest`: now the study's newest version (else an older one); `same`: identical to the newest version read
    before; `replaced_source`, `replaced_note`: the source and study-date note of the version this one replaces (or,
    when older, of the newest); `newest_export`: the export date of the study's newest version now ("" unknown)."""

    slot: int
    first: bool
    newest: bool = True
    same: bool = False
    replaced_source: str = ""
    replaced_note: str = ""
    newest_export: str = ""


@dataclass(frozen=True)
class _Held:
    slot: int
    key: VersionKey
    digest: str
    source: str
    note: str


@dataclass
class StudyVersions:
    """The studies a run has read: each id's slot and what it knows of the newest version (its key, a digest of its
    content, its source and date note), so a build of millions of reports holds no report."""

    _held: dict[str, _Held] = field(default_factory=dict)

    def place(self, report_id: str, key: VersionKey, digest: str, source: str, note: str) -> Placed:
        """Record a version of `report_id` (`digest`: of its whole content)."""
        held = self._held.get(report_id)
        if held is None:
            self._held[report_id] = _Held(len(self._held), key, digest, source, note)
            return Placed(len(self._held) - 1, True)
        if digest == held.digest:
            return Placed(held.slot, False, False, True, held.source, held.note, held.key[0])
        if key > held.key:
            self._held[report_id] = _Held(held.slot, key, digest, source, note)
            return Placed(held.slot, False, True, False, held.source, held.note, key[0])
        return Placed(held.slot, False, False, False, held.source, held.note, held.key[0])
