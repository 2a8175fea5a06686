"""Study dates as RIS/PACS exports write them, read as ISO `YYYY-MM-DD` so that a search can filter by date.

Exports write `20261123` (DICOM DA, or DT with the time after it), `2026-11-23`, `2026-11-23T09:30:00`, `2026/11/23`,
`23.11.2026`, `23/11/2026`, `11/23/2026 9:30 AM`, `23-11-2026`. A year-first date is year, month, day. Where day and
month come before the year, which is which is decided once for a whole column of a file, with the evidence of every
row, never row by row (a file read row by row would put 05/11 in May and 13/11 in November):
- a date of the column whose first number is over 12 (`23/11/2026`) shows the column is day first; one whose second
  number is over 12 (`11/23/2026`) shows it is month first;
- every row weighs too: one export's studies lie close together in time, so of the two readings the column takes the
  one under which its dates lie closest together (the median distance from their median day; a date impossible in a
  reading counts as far away). One odd row (`13/01/2026` in a US export of `11/05/2026`, `11/06/2026`) cannot
  re-date the rest: it would put them months apart (issue 51). Such a row is read its only possible way, with a
  note, and the column's dates that could be either are read with a note saying how the order was decided;
- a column whose dates lie equally close either way (a single date) is read by the convention of its separator:
  dots day first (`05.11.2026`, as European systems write them), slashes and dashes month first (as US systems
  write them), again with a note;
- a column that shows both orders is read by neither: its dates that could be either (`05/11/2026`) are not read.
Each date read with a note is marked in its report's meta (`date_note`), and the import counts them.
A date that is not read (that, `31.11.2026`, `unknown`) does not reject its report: the report is kept without a
`date`, with the text as written in `date_original` and the reason in `date_note`, and the import says how many.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Literal

#: The order of day and month in a date that gives them before the year.
DateOrder = Literal["dmy", "mdy"]
#: What may follow a date: a time of day (`T09:30`, ` 9:30 AM`, `,09:30`) with anything after it (zone, seconds).
_TIME = r"(?:[T ,]\s*\d{1,2}:\d{2}\b.*)?"
_COMPACT = re.compile(r"(\d{4})(\d{2})(\d{2})(?:\d{2,6}(?:\.\d+)?(?:[+-]\d{4})?)?")  # DICOM DA and DT
_YEAR_FIRST = re.compile(rf"(\d{{4}})([-/.])(\d{{1,2}})\2(\d{{1,2}}){_TIME}", re.IGNORECASE)
_YEAR_LAST = re.compile(rf"(\d{{1,2}})([-/.])(\d{{1,2}})\2(\d{{4}}){_TIME}", re.IGNORECASE)

NOT_A_DATE = "not read: not a date"
EITHER_ORDER = "not read: its column has dates written day first and month first, and this one could be either"


def assumed(order: DateOrder, separator: str) -> str:
    """The note on a date read by its separator's convention."""
    return f"read {_words(order)}: no date of its column shows the order, and dates with {separator!r} are written so"


def _words(order: DateOrder) -> str:
    return "day first" if order == "dmy" else "month first"


def _closer(order: DateOrder) -> str:
    """The note on a date read in the order under which its column's dates lie closest together."""
    return f"read {_words(order)}: its column's dates lie closest together read so"


def _against(order: DateOrder) -> str:
    """The note on a date that can only be read against its column's order."""
    other: DateOrder = "mdy" if order == "dmy" else "dmy"
    return f"written {_words(other)} in a column read {_words(order)} (its other dates lie closest together so)"


def _day(first: int, second: int, year: int, order: DateOrder) -> int | None:
    """The date's ordinal day read in `order`, None when it is no date that way."""
    day, month = (first, second) if order == "dmy" else (second, first)
    try:
        return date(year, month, day).toordinal()
    except ValueError:
        return None


def _spread(days: list[int | None]) -> float:
    """How far a column's dates lie from one another: the median distance from their median day, a date that is
    impossible in this reading counting as infinitely far."""
    known = [d for d in days if d is not None]
    if not known:
        return math.inf
    centre = statistics.median(known)
    return statistics.median([abs(d - centre) if d is not None else math.inf for d in days])


@dataclass(frozen=True)
class DateColumn:
    """How the dates of one column are read: the day/month order of those that give day and month before the year
    (None: the column shows both) and, for a date that could be either, the note saying how the order was decided
    ("" when rows of the column showed it and every row agrees)."""

    order: DateOrder | None = None
    note: str = ""

    @classmethod
    def of(cls, values: Iterable[str]) -> DateColumn:
        """The reading of a column holding `values` (the module docstring's rules)."""
        day_first = month_first = False
        separator = ""
        parts: list[tuple[int, int, int]] = []
        for value in values:
            if found := _YEAR_LAST.fullmatch(value.strip()):
                first, second = int(found[1]), int(found[3])
                parts.append((first, second, int(found[4])))
                day_first |= first > 12 >= second
                month_first |= second > 12 >= first
                separator = separator or found[2]
        if day_first and month_first:
            return cls(None)
        spread = {order: _spread([_day(*p, order) for p in parts]) for order in ("dmy", "mdy")}
        closer: DateOrder | None = min(spread, key=spread.__getitem__) if spread["dmy"] != spread["mdy"] else None
        if day_first or month_first:
            shown: DateOrder = "dmy" if day_first else "mdy"
            if closer in (None, shown):
                return cls(shown)
            return cls(closer, _closer(closer))
        if closer is not None:
            return cls(closer, _closer(closer))
        convention: DateOrder = "dmy" if separator == "." else "mdy"
        return cls(convention, assumed(convention, separator))

    def read(self, value: str) -> tuple[str | None, str]:
        """(the ISO date or None, a note: "" unless the date was not read or its order was not shown by the rows)."""
        text = value.strip()
        if found := _COMPACT.fullmatch(text):
            return _iso(int(found[1]), int(found[2]), int(found[3]))
        if found := _YEAR_FIRST.fullmatch(text):
            return _iso(int(found[1]), int(found[3]), int(found[4]))
        if not (found := _YEAR_LAST.fullmatch(text)):
            return None, NOT_A_DATE
        first, second, year = int(found[1]), int(found[3]), int(found[4])
        either = first <= 12 and second <= 12 and first != second
        order: DateOrder
        if self.order is None:
            if either:
                return None, EITHER_ORDER
            order, note = ("dmy" if first > 12 else "mdy"), ""
        elif _day(first, second, year, self.order) is None and _day(first, second, year, _other(self.order)):
            order, note = _other(self.order), _against(self.order)
        else:
            order, note = self.order, self.note if either else ""
        day, month = (first, second) if order == "dmy" else (second, first)
        iso, invalid = _iso(year, month, day)
        return iso, invalid or note


def _other(order: DateOrder) -> DateOrder:
    return "mdy" if order == "dmy" else "dmy"


def _iso(year: int, month: int, day: int) -> tuple[str | None, str]:
    try:
        return date(year, month, day).isoformat(), ""
    except ValueError:
        return None, NOT_A_DATE


def date_meta(value: str, column: DateColumn) -> dict[str, str]:
    """What a report's meta keeps of its study date `value`: `date` (ISO) when it is read, `date_original` when that
    is not how the export wrote it, `date_note` when it was not read or read by convention (nothing for no date)."""
    text = value.strip()
    if not text:
        return {}
    iso, note = column.read(text)
    meta = {"date": iso} if iso else {}
    if iso != text:
        meta["date_original"] = text
    if note:
        meta["date_note"] = note
    return meta


def filter_date(value: str, option: str) -> str:
    """A date given to filter by (`--since`, `--until`, the chat's fields) as ISO; ValueError naming `option`
    unless it is one date: year first (`2026-11-05`, `20261105`), day first with dots (`05.11.2026`: nobody writes
    month first with dots) or with a day over 12 (`23/11/2026`). A slash or dash date whose day and month could be
    swapped (`05/11/2026`) is refused rather than guessed."""
    column = DateColumn.of([value])
    iso, note = column.read(value)
    if iso is None or (note and column.order == "mdy"):
        raise ValueError(f"{option} {value.strip()!r} is not a date this program reads: write it as YYYY-MM-DD")
    return iso
