"""Reports whose whole text is the same (templated normal reports, a study exported twice under two accessions): every
one is indexed, and a search shows them as one hit that names the others.

Why: an archive's studies share texts ("No acute cardiopulmonary abnormality." hundreds of times). Shown one per hit,
copies of one text fill the results and hide every other text; dropped at ingestion, as they used to be, their
studies could never be found, shown, dated or removed. So a hit is a text: the first of its reports in the ranking,
with `Hit.identical` naming the others the search's filters let through (their ids, study dates and statuses). Two
reports are identical when their findings, impression, addendum and whole text are the same words
(retriever/index/store.text_key); the evidence differential decides how many votes such a text has
(`Hit.identical`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from retriever.index.store import ReportStore, text_key
from retriever.reports.record import Report
from retriever.search.hit import IdenticalReport

Item = TypeVar("Item")


def fold_identical(ordered: Sequence[Item], keys: Sequence[str]) -> list[tuple[Item, list[Item]]]:
    """`ordered` (ranked candidates, `keys[i]` the text key of the i-th) as groups of one text, in the order of
    each text's first candidate: (that candidate, the later ones of its text)."""
    groups: dict[str, tuple[Item, list[Item]]] = {}
    for item, key in zip(ordered, keys, strict=True):
        if key in groups:
            groups[key][1].append(item)
        else:
            groups[key] = (item, [])
    return list(groups.values())


def identical_report(report: Report) -> IdenticalReport:
    """What a hit says of another report of its text: id, study date, status."""
    return IdenticalReport(report.id, report.meta.get("date", ""), report.status)


class IdenticalTexts:
    """The text keys of an index's reports and the reports of each key: the store's (computed once for an index
    built in memory or a store written before the keys were)."""

    def __init__(self, store: ReportStore | list[Report]) -> None:
        self._store = store
        self._by_key: dict[str, list[int]] | None = None  # an in-memory or older index: every report's key
        self._row_keys: dict[int, str] = {}
        self._lock = threading.Lock()

    def _computed(self) -> dict[str, list[int]]:
        with self._lock:
            if self._by_key is None:
                reports = enumerate(self._store) if isinstance(self._store, list) else self._store.iter_reports()
                by_key: dict[str, list[int]] = {}
                keys: dict[int, str] = {}
                for rowid, report in reports:
                    keys[rowid] = key = text_key(report)
                    by_key.setdefault(key, []).append(rowid)
                self._by_key, self._row_keys = by_key, keys
            return self._by_key

    def _stored(self) -> bool:
        return isinstance(self._store, ReportStore) and self._store.current

    def keys_of(self, rowids: list[int]) -> list[str]:
        """The text key of each row id, in order."""
        if self._stored():
            assert isinstance(self._store, ReportStore)
            found = self._store.text_keys(rowids)
        else:
            self._computed()
            found = self._row_keys
        return [found[rowid] for rowid in rowids]

    def others(self, rowids: list[int], allowed: np.ndarray | None) -> dict[int, tuple[IdenticalReport, ...]]:
        """For each row id, the other reports of its text that `allowed` lets through (None: all), in row id
        order."""
        keys = dict(zip(rowids, self.keys_of(rowids), strict=True))
        if self._stored():
            assert isinstance(self._store, ReportStore)
            by_key = self._store.same_text(keys.values())
        else:
            by_key = self._computed()
        permitted = None if allowed is None else set(allowed.tolist())
        wanted = {
            rowid: [o for o in by_key.get(key, []) if o != rowid and (permitted is None or o in permitted)]
            for rowid, key in keys.items()
        }
        reports = self._reports(sorted({o for others in wanted.values() for o in others}))
        return {
            rowid: tuple(identical_report(reports[o]) for o in others) for rowid, others in wanted.items() if others
        }

    def _reports(self, rowids: list[int]) -> dict[int, Report]:
        if isinstance(self._store, list):
            return {i: self._store[i] for i in rowids}
        return self._store.get(rowids)
