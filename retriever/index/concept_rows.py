"""The diagnoses each stored report affirms, in the store's `concepts` table: linked when the report is written, so
an answer only adds them up and a search can keep the reports that affirm one (`assistant search --diagnosis`).

One row per (report, position): the concept id and its certainty, in the order the conclusion names them, exactly
`retriever.concepts.conclusion.stored_form` of the report's conclusion. A report that affirms nothing has no row;
whether a store's rows were linked by this program's vocabulary and linker is the manifest's `concept_rules`
(retriever/concepts/fingerprint.py), never this table's. WITHOUT ROWID, keyed by (report, position): its rows sit in
key order whatever order they were written in, so a build and the merge of its shards write the same bytes.
A store written before this table existed lacks it: its index answers by linking at answer time until an update
creates the table and links every report (`relink`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence

from retriever.concepts.conclusion import Stored, stored_form
from retriever.reports.record import Report

SCHEMA = """
CREATE TABLE IF NOT EXISTS concepts (
  report INTEGER NOT NULL, position INTEGER NOT NULL, concept TEXT NOT NULL, certainty REAL NOT NULL,
  PRIMARY KEY (report, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS concepts_by_concept ON concepts(concept);
"""
Query = Callable[[str, Sequence[object]], list[tuple]]


def link(db: sqlite3.Connection, rowid: int, report: Report) -> None:
    """Store what the report's conclusion affirms under its row id."""
    rows = [(rowid, n, concept, certainty) for n, (concept, certainty) in enumerate(stored_form(report.conclusion))]
    if rows:
        db.executemany("INSERT INTO concepts VALUES (?,?,?,?)", rows)


def unlink(db: sqlite3.Connection, rowids: Iterable[int]) -> None:
    """Forget what the reports of these row ids affirm (they are removed or replaced)."""
    db.executemany("DELETE FROM concepts WHERE report = ?", [(rowid,) for rowid in rowids])


def relink(db: sqlite3.Connection, reports: Iterable[tuple[int, Report]]) -> None:
    """Link every report anew: the table is emptied first (an older vocabulary's rows go with it)."""
    db.execute("DELETE FROM concepts")
    for rowid, report in reports:
        link(db, rowid, report)


def present(query: Query) -> bool:
    """Whether the store has the table (a store written before it has not)."""
    return bool(query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'concepts'", ()))


def stored(query: Query, rowids: list[int]) -> dict[int, Stored]:
    """What each report affirms, as stored (a report without rows affirms nothing: an empty tuple)."""
    found: dict[int, list[tuple[str, float]]] = {rowid: [] for rowid in rowids}
    if rowids:
        marks = ",".join("?" * len(rowids))
        sql = f"SELECT report, concept, certainty FROM concepts WHERE report IN ({marks}) ORDER BY report, position"
        for rowid, concept, certainty in query(sql, rowids):
            found[rowid].append((concept, certainty))
    return {rowid: tuple(pairs) for rowid, pairs in found.items()}


def affirming(query: Query, concept: str) -> list[int]:
    """Row ids of the reports that affirm `concept` (a concept id), in row id order."""
    sql = "SELECT DISTINCT report FROM concepts WHERE concept = ? ORDER BY 1"
    return [rowid for (rowid,) in query(sql, (concept,))]
