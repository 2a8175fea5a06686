"""SQLite store of report texts and metadata, keyed by the row ids FAISS vectors carry.

Besides each report's texts the store keeps what an export says of its study (status, exam, body part, addendum),
a key of its whole text (`text_key`: the reports a search shows as one, retriever/index/identical.py) and, in
`history`, every version an update or a later record of the same study replaced (`assistant show --history`), and
in `concepts` the diagnoses its conclusion affirms, linked as it is written (retriever/index/concept_rows.py).
Stores written before these columns and tables existed are read as they are (the columns empty, no history, no
concepts) and gain them on their next update (`change_store`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from retriever.index import concept_rows
from retriever.reports.record import Report

if TYPE_CHECKING:
    from retriever.index.filters import SearchFilters

#: Rows per statement when reading many reports (SQLite allows 32766 parameters; memory stays bounded).
_BATCH = 5000

#: The columns of `reports`, in order; the last five came with issue 50 (older stores lack them).
COLUMNS = (
    "rowid",
    "id",
    "findings",
    "impression",
    "full_text",
    "modality",
    "source",
    "meta",
    "status",
    "exam",
    "body_part",
    "addendum",
    "text_key",
)
_ADDED = COLUMNS[8:]

_SCHEMA = """
CREATE TABLE reports (
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, findings TEXT, impression TEXT, full_text TEXT,
  modality TEXT, source TEXT, meta TEXT, status TEXT, exam TEXT, body_part TEXT, addendum TEXT, text_key TEXT
);
CREATE TABLE labels (rowid INTEGER NOT NULL, label TEXT NOT NULL);
CREATE INDEX labels_by_label ON labels(label);
CREATE INDEX reports_by_modality ON reports(modality);
CREATE INDEX reports_by_source ON reports(source);
"""
#: Tables and indexes an older store gains on its first update (after its `reports` gained the _ADDED columns).
_ADDITIONS = (
    """
CREATE INDEX IF NOT EXISTS reports_by_text ON reports(text_key);
CREATE TABLE IF NOT EXISTS history (id TEXT NOT NULL, replaced TEXT NOT NULL, report TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS history_by_id ON history(id);
"""
    + concept_rows.SCHEMA
)


def text_key(report: Report) -> str:
    """What two reports share when a search shows them as one: their findings, impression, addendum and whole text,
    compared as lowercase words (punctuation, spacing and line ends ignored), hashed."""
    parts = (report.findings, report.impression, report.addendum, report.full_text)
    words = "\x1f".join(re.sub(r"\W+", " ", part.lower()).strip() for part in parts)
    return hashlib.sha256(words.encode()).hexdigest()[:32]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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
        self._db.executescript(_SCHEMA + _ADDITIONS)
        self.count = 0
        #: History entries, written sorted when the store is complete: a build and the merge of its shards write
        #: the same bytes whatever order the versions came in.
        self._history: list[tuple[str, str, str]] = []

    def add(self, report: Report, rowid: int | None = None) -> int:
        """Insert `report` under `rowid` (default: the number of reports added before it); its row id. Why a given
        row id: a shard of a corpus keeps the row ids a build of the whole corpus gives its reports."""
        rowid = self.count if rowid is None else rowid
        _insert(self._db, rowid, report)
        self.count += 1
        if self.count % _BATCH == 0:
            self._db.commit()
        return rowid

    def replace(self, rowid: int, report: Report) -> Report | None:
        """Put `report` (a newer version of a study) under `rowid`; the version it replaces (None: none was)."""
        held = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM reports WHERE rowid = ?", (rowid,)).fetchone()
        labels = [label for (label,) in self._db.execute("SELECT label FROM labels WHERE rowid = ?", (rowid,))]
        self._db.execute("DELETE FROM reports WHERE rowid = ?", (rowid,))
        self._db.execute("DELETE FROM labels WHERE rowid = ?", (rowid,))
        concept_rows.unlink(self._db, [rowid])
        _insert(self._db, rowid, report)
        return None if held is None else _report(held, labels)

    def keep_earlier(self, report: Report, when: str) -> None:
        """Keep an earlier version of a study this store holds in its history (`when`: what replaced it, the export
        date of the newer version or "")."""
        self._history.append(_history_entry(report, when))

    def keep_history(self, entries: Iterable[tuple[str, str, str]]) -> None:
        """Keep history entries (id, when replaced, the version as JSON) of another store (a shard's)."""
        self._history.extend(entries)

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self._db.executemany("INSERT INTO history VALUES (?,?,?)", sorted(self._history))
            self._db.commit()
            # Rewritten in row id order: a build that replaced versions in place and the merge of its shards, which
            # wrote each row once, give the same bytes (the manifest's checksums compare them).
            self._db.execute("VACUUM")
        # Close explicitly (a connection context only commits) so the file can be renamed on every platform.
        self._db.close()


def change_store(
    path: Path,
    upserts: Sequence[tuple[int, Report]],
    deletes: Iterable[int],
    history: Iterable[Report] = (),
    *,
    relink: bool = False,
) -> None:
    """Apply an update to a store file (a copy: the index being searched is never written): keep the replaced
    versions `history` (the indexed reports an upsert replaces, and earlier versions the update read), delete the rows
    `deletes` and the rows of `upserts`, then insert each upsert under its row id, in one transaction. A store of an
    older program first gains the columns and tables it lacks. `relink`: link every report's concepts anew (the
    store's were linked by another vocabulary or linker, or never)."""
    with sqlite3.connect(path) as db:
        _migrate(db)
        _keep_history(db, history)
        gone = [(rowid,) for rowid in [*deletes, *(rowid for rowid, _ in upserts)]]
        db.executemany("DELETE FROM reports WHERE rowid = ?", gone)
        db.executemany("DELETE FROM labels WHERE rowid = ?", gone)
        concept_rows.unlink(db, (rowid for (rowid,) in gone))
        for rowid, report in upserts:
            _insert(db, rowid, report)
        if relink:
            rows = db.execute(f"SELECT {', '.join(COLUMNS)} FROM reports ORDER BY rowid")
            concept_rows.relink(db, ((row[0], _report(row, ())) for row in rows))
    db.close()


def _migrate(db: sqlite3.Connection) -> None:
    """Add the columns, tables and indexes a store written before issue 50 lacks (its reports' keys computed)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(reports)")}
    missing = [column for column in _ADDED if column not in present]
    for column in missing:
        db.execute(f"ALTER TABLE reports ADD COLUMN {column} TEXT")
    if "text_key" in missing:
        rows = db.execute(f"SELECT {', '.join(COLUMNS[:8])} FROM reports").fetchall()
        keys = [(text_key(_report((*row, "", "", "", "", None), ())), row[0]) for row in rows]
        db.executemany("UPDATE reports SET text_key = ? WHERE rowid = ?", keys)
    db.executescript(_ADDITIONS)


def _history_entry(report: Report, when: str) -> tuple[str, str, str]:
    """A history row: the id, when it was replaced, the version as JSON."""
    return report.id, when, json.dumps(asdict(report), ensure_ascii=False, sort_keys=True)


def _keep_history(db: sqlite3.Connection, versions: Iterable[Report]) -> None:
    """An update's replaced versions, with the time of the update."""
    when = _now()
    db.executemany("INSERT INTO history VALUES (?,?,?)", [_history_entry(r, when) for r in versions])


def _insert(db: sqlite3.Connection, rowid: int, r: Report) -> None:
    db.execute(
        f"INSERT INTO reports ({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})",
        (
            rowid,
            r.id,
            r.findings,
            r.impression,
            r.full_text,
            r.modality,
            r.source,
            json.dumps(r.meta),
            r.status,
            r.exam,
            r.body_part,
            r.addendum,
            text_key(r),
        ),
    )
    db.executemany("INSERT INTO labels VALUES (?,?)", [(rowid, label) for label in r.labels])
    concept_rows.link(db, rowid, r)


def _report(row: Sequence, labels: Iterable[str]) -> Report:
    """A Report from a `reports` row (COLUMNS in order; an older store's missing ones None) and its labels."""
    return Report(
        id=row[1],
        findings=row[2],
        impression=row[3],
        full_text=row[4],
        modality=row[5],
        labels=tuple(sorted(labels)),
        source=row[6],
        meta=json.loads(row[7] or "{}"),
        status=row[8] or "",
        exam=row[9] or "",
        body_part=row[10] or "",
        addendum=row[11] or "",
    )


def _stored_version(text: str) -> Report:
    """A history entry's report (its JSON, as `_keep_history` wrote it)."""
    fields = json.loads(text)
    return Report(**{**fields, "labels": tuple(fields.get("labels", ()))})


class ReportStore:
    """Read access to a written store (opened read-only: searching never modifies an index).

    Safe to share between threads: one connection, used by one thread at a time (`_query`). Not a connection per
    thread: one opened later would read whatever file is at the path then, and `assistant index` may have swapped
    in a new index whose row ids no longer match the vectors this store's index holds."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        present = {row[1] for row in self._query("PRAGMA table_info(reports)")}  # fails early on a corrupt file
        #: Whether the store has the columns and history of issue 50 (an older one is read without them).
        self.current = set(COLUMNS[1:]) <= present
        #: Whether the store has a concepts table (whose vocabulary linked it is the manifest's `concept_rules`).
        self.has_concepts = concept_rows.present(self._query)
        self._select = ", ".join(c if c in present or c == "rowid" else "NULL" for c in COLUMNS)

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
        rows = self._query(f"SELECT {self._select} FROM reports WHERE rowid IN ({marks})", rowids)
        labels: dict[int, list[str]] = {}
        for rowid, label in self._query(f"SELECT rowid, label FROM labels WHERE rowid IN ({marks})", rowids):
            labels.setdefault(rowid, []).append(label)
        return {row[0]: _report(row, labels.get(row[0], [])) for row in rows}

    def concepts(self, rowids: list[int]) -> dict[int, concept_rows.Stored]:
        """What each report's conclusion affirms, as stored (concept_rows.py; empty for a store without them)."""
        return concept_rows.stored(self._query, rowids) if self.has_concepts else {}

    def affirming(self, concept: str) -> np.ndarray:
        """Row ids of the reports whose stored concepts include `concept` (a concept id)."""
        found = concept_rows.affirming(self._query, concept) if self.has_concepts else []
        return np.array(found, dtype=np.int64)

    def rowids_of(self, ids: Iterable[str]) -> dict[str, int]:
        """Row ids of the reports with these ids (ids not in the store are absent from the result)."""
        found: dict[str, int] = {}
        wanted = list(dict.fromkeys(ids))
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            found.update(self._query(f"SELECT id, rowid FROM reports WHERE id IN ({marks})", batch))
        return found

    def ids_named(self, names: Iterable[str]) -> dict[str, list[str]]:
        """The ids each of `names` may mean: itself if the store holds it, else every `SOURCE:NAME` it holds (a bare
        accession: one id when it is unique, several when not); one pass over the ids, so a long `--remove` list
        costs one scan."""
        wanted = set(names)
        exact: set[str] = set()
        bare: dict[str, list[str]] = {name: [] for name in wanted}
        for report_id, source in self._query("SELECT id, source FROM reports"):
            if report_id in wanted:
                exact.add(report_id)
            prefix = f"{source}:"
            if report_id.startswith(prefix) and report_id[len(prefix) :] in wanted:
                bare[report_id[len(prefix) :]].append(report_id)
        return {name: [name] if name in exact else sorted(bare[name]) for name in wanted}

    def same_text(self, keys: Iterable[str]) -> dict[str, list[int]]:
        """Row ids of the reports of each text key (`text_key`), in row id order; empty for a store without keys."""
        wanted = list(dict.fromkeys(keys))
        if not self.current or not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        found: dict[str, list[int]] = {}
        for key, rowid in self._query(
            f"SELECT text_key, rowid FROM reports WHERE text_key IN ({marks}) ORDER BY rowid", wanted
        ):
            found.setdefault(key, []).append(int(rowid))
        return found

    def text_keys(self, rowids: list[int]) -> dict[int, str]:
        """The text key of each report (computed for a store without keys)."""
        if not self.current:
            return {rowid: text_key(report) for rowid, report in self.get(rowids).items()}
        marks = ",".join("?" * len(rowids))
        return dict(self._query(f"SELECT rowid, text_key FROM reports WHERE rowid IN ({marks})", rowids))

    def history(self, report_id: str) -> list[tuple[str, Report]]:
        """(when it was replaced, ISO time; the version) of each earlier version of a report, oldest first."""
        if not self.current:
            return []
        rows = self._query("SELECT replaced, report FROM history WHERE id = ? ORDER BY rowid", (report_id,))
        return [(replaced, _stored_version(text)) for replaced, text in rows]

    def all_history(self) -> list[tuple[str, str, str]]:
        """Every history entry as stored (id, when replaced, the version as JSON), in the order kept."""
        return self._query("SELECT id, replaced, report FROM history ORDER BY rowid") if self.current else []

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

    def filter_rowids(self, filters: SearchFilters) -> np.ndarray:
        """Row ids matching every given filter of modality, source, label, status and exam (case-insensitive; the exam
        a part of the study description). An older store has no status or exam: nothing matches those."""
        clauses = {
            "modality": "lower(modality) = lower(?)",
            "source": "lower(source) = lower(?)",
            "label": "rowid IN (SELECT rowid FROM labels WHERE lower(label) = lower(?))",
            "status": "lower(status) = lower(?)",
            "exam": "instr(lower(exam), lower(?)) > 0",
        }
        given = {name: value for name in clauses if (value := getattr(filters, name))}
        if not self.current and ({"status", "exam"} & given.keys()):
            return np.array([], dtype=np.int64)
        sql = " AND ".join(["1=1", *(clauses[name] for name in given)])
        return np.array(
            [r[0] for r in self._query(f"SELECT rowid FROM reports WHERE {sql}", list(given.values()))], dtype=np.int64
        )

    def dates(self) -> list[tuple[int, str, str]]:
        """(row id, source, study date as stored in the meta) of every report that has one."""
        sql = "SELECT rowid, source, json_extract(meta, '$.date') AS day FROM reports WHERE day IS NOT NULL"
        return [(int(rowid), source or "", str(day)) for rowid, source, day in self._query(sql)]

    def values(self, column: str) -> list[str]:
        """Distinct values of modality/source/status (for UI filter choices)."""
        if column not in {"modality", "source", "status"}:
            raise ValueError(column)
        if column == "status" and not self.current:
            return []
        return [r[0] for r in self._query(f"SELECT DISTINCT {column} FROM reports ORDER BY 1") if r[0]]
