"""SQLite store of report texts and metadata, keyed by the row ids FAISS vectors carry."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from retriever.reports.record import Report

#: Rows per statement when reading many reports (SQLite allows 32766 parameters; memory stays bounded).
_BATCH = 5000

_SCHEMA = """
CREATE TABLE reports (
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, findings TEXT, impression TEXT, full_text TEXT,
  modality TEXT, source TEXT, meta TEXT
);
CREATE TABLE labels (rowid INTEGER NOT NULL, label TEXT NOT NULL);
CREATE INDEX labels_by_label ON labels(label);
CREATE INDEX reports_by_modality ON reports(modality);
CREATE INDEX reports_by_source ON reports(source);
"""


def write_store(path: Path, reports: Iterable[Report]) -> None:
    """Create the database; report i gets rowid i (the id its vectors carry)."""
    with StoreWriter(path) as writer:
        for report in reports:
            writer.add(report)


class StoreWriter:
    """Writes a new store one report at a time, committing every _BATCH: a build of millions of reports never holds
    them all. Report i gets rowid i."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path)
        self._db.executescript(_SCHEMA)
        self.count = 0

    def add(self, report: Report, rowid: int | None = None) -> int:
        """Insert `report` under `rowid` (default: the number of reports added before it); its row id. Why a given
        row id: a shard of a corpus keeps the row ids a build of the whole corpus gives its reports."""
        rowid = self.count if rowid is None else rowid
        _insert(self._db, rowid, report)
        self.count += 1
        if self.count % _BATCH == 0:
            self._db.commit()
        return rowid

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self._db.commit()
        # Close explicitly (a connection context only commits) so the file can be renamed on every platform.
        self._db.close()


def change_store(path: Path, upserts: Sequence[tuple[int, Report]], deletes: Iterable[int]) -> None:
    """Apply an update to a store file (a copy: the index being searched is never written): delete the rows
    `deletes` and the rows of `upserts`, then insert each upsert under its row id, in one transaction."""
    with sqlite3.connect(path) as db:
        gone = [(rowid,) for rowid in [*deletes, *(rowid for rowid, _ in upserts)]]
        db.executemany("DELETE FROM reports WHERE rowid = ?", gone)
        db.executemany("DELETE FROM labels WHERE rowid = ?", gone)
        for rowid, report in upserts:
            _insert(db, rowid, report)
    db.close()


def _insert(db: sqlite3.Connection, rowid: int, r: Report) -> None:
    db.execute(
        "INSERT INTO reports VALUES (?,?,?,?,?,?,?,?)",
        (rowid, r.id, r.findings, r.impression, r.full_text, r.modality, r.source, json.dumps(r.meta)),
    )
    db.executemany("INSERT INTO labels VALUES (?,?)", [(rowid, label) for label in r.labels])


def _report(row: tuple, labels: Iterable[str]) -> Report:
    """A Report from a `reports` row (all columns, rowid first) and its labels."""
    return Report(
        id=row[1],
        findings=row[2],
        impression=row[3],
        full_text=row[4],
        modality=row[5],
        labels=tuple(sorted(labels)),
        source=row[6],
        meta=json.loads(row[7] or "{}"),
    )


class ReportStore:
    """Read access to a written store (opened read-only: searching never modifies an index).

    Safe to share between threads: one connection, used by one thread at a time (`_query`). Not a connection per
    thread: one opened later would read whatever file is at the path then, and `assistant index` may have swapped
    in a new index whose row ids no longer match the vectors this store's index holds."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        self._query("SELECT count(*) FROM reports")  # fails early on a corrupt file

    def _query(self, sql: str, args: Sequence[object] = ()) -> list[tuple]:
        """All rows of one statement, run and fetched under the lock (a cursor must not be shared mid-fetch)."""
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM reports")[0][0])

    def get(self, rowids: list[int]) -> dict[int, Report]:
        """Reports by rowid, with labels."""
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        rows = self._query(f"SELECT * FROM reports WHERE rowid IN ({marks})", rowids)
        labels: dict[int, list[str]] = {}
        for rowid, label in self._query(f"SELECT rowid, label FROM labels WHERE rowid IN ({marks})", rowids):
            labels.setdefault(rowid, []).append(label)
        return {row[0]: _report(row, labels.get(row[0], [])) for row in rows}

    def rowids_of(self, ids: Iterable[str]) -> dict[str, int]:
        """Row ids of the reports with these ids (ids not in the store are absent from the result)."""
        found: dict[str, int] = {}
        wanted = list(dict.fromkeys(ids))
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            found.update(self._query(f"SELECT id, rowid FROM reports WHERE id IN ({marks})", batch))
        return found

    def max_rowid(self) -> int:
        """The largest row id in use (-1 for an empty store): new reports get the ones after it."""
        return int(self._query("SELECT coalesce(max(rowid), -1) FROM reports")[0][0])

    def iter_reports(self) -> Iterator[tuple[int, Report]]:
        """(rowid, report) for every report in row id order, read _BATCH at a time: an update rebuilds BM25 and the
        corpus hash from millions of reports without holding them all."""
        last = -1
        while True:
            rows = self._query("SELECT rowid FROM reports WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, _BATCH))
            if not rows:
                return
            batch = self.get([r[0] for r in rows])
            for (rowid,) in rows:
                yield rowid, batch[rowid]
            last = rows[-1][0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def filter_rowids(self, modality: str | None, source: str | None, label: str | None) -> np.ndarray:
        """Row ids matching every given filter (case-insensitive)."""
        sql = "SELECT rowid FROM reports WHERE 1=1"
        args: list[str] = []
        if modality:
            sql += " AND lower(modality) = lower(?)"
            args.append(modality)
        if source:
            sql += " AND lower(source) = lower(?)"
            args.append(source)
        if label:
            sql += " AND rowid IN (SELECT rowid FROM labels WHERE lower(label) = lower(?))"
            args.append(label)
        return np.array([r[0] for r in self._query(sql, args)], dtype=np.int64)

    def dates(self) -> list[tuple[int, str, str]]:
        """(row id, source, study date as stored in the meta) of every report that has one."""
        sql = "SELECT rowid, source, json_extract(meta, '$.date') AS day FROM reports WHERE day IS NOT NULL"
        return [(int(rowid), source or "", str(day)) for rowid, source, day in self._query(sql)]

    def values(self, column: str) -> list[str]:
        """Distinct values of modality/source (for UI filter choices)."""
        if column not in {"modality", "source"}:
            raise ValueError(column)
        return [r[0] for r in self._query(f"SELECT DISTINCT {column} FROM reports ORDER BY 1") if r[0]]
