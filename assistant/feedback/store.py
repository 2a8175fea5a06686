"""`FeedbackStore`: residents' verdicts on answers, in one SQLite file under the data folder.

Why SQLite: several residents give feedback at once (the chat's sessions are threads of one server; `assistant ask` is
another process), and none may lose another's entry. Every call opens its own connection and writes in one
`BEGIN IMMEDIATE` transaction, with the database in WAL mode and a busy timeout, so writers queue instead of failing
and readers never block them. The file lives under `RADSEARCH_HOME` (never in the browser, never sent anywhere) and
so survives restarts.

An entry holds what the verdict is about (the question, the case's findings, the whole answer as `Answer.to_dict`
gives it, its configuration hash, the index, where it was asked and by which signed-in user, if any), the time and
the verdict itself (helpful or not, the right diagnosis, a comment). A chat answer gets a key when it is shown; the
resident's later clicks on that answer update its one entry instead of adding more.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from models.paths import DataPaths

FILE_NAME = "feedback.sqlite"
ENV_FILE = "RADSEARCH_FEEDBACK"
BUSY_TIMEOUT_S = 30.0
MAX_DIAGNOSIS_CHARS = 300
MAX_COMMENT_CHARS = 2000
SCHEMA_VERSION = 1
Channel = Literal["chat", "ask"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    answer_key TEXT UNIQUE,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    channel TEXT NOT NULL,
    user TEXT,
    question TEXT NOT NULL,
    findings TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    configuration_hash TEXT NOT NULL,
    index_name TEXT NOT NULL,
    helpful INTEGER,
    right_diagnosis TEXT NOT NULL DEFAULT '',
    comment TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS last_answer (
    who TEXT PRIMARY KEY,
    saved TEXT NOT NULL,
    answered_json TEXT NOT NULL
);
"""


class FeedbackError(ValueError):
    """Feedback that cannot be stored as given; the message says what to change."""


@dataclass(frozen=True)
class Answered:
    """What a verdict is about: the `question` answered, the case's `findings` (every finding typed in the case, one a
    line: a follow-up's answer rests on them all), the whole `answer` (`Answer.to_dict`), the index searched, where it
    was asked (`channel`) and the signed-in `user` (None: no sign-in)."""

    question: str
    findings: str
    answer: dict[str, Any]
    index: str
    channel: Channel
    user: str | None = None

    @property
    def configuration_hash(self) -> str:
        return str(self.answer.get("configuration_hash") or "")

    @property
    def diagnosis(self) -> str:
        """The answer's diagnosis ("" for an answer without one)."""
        return "" if self.answer.get("degraded") else str(self.answer.get("diagnosis") or "")

    def to_json(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Answered:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Verdict:
    """A resident's word on an answer: `helpful` (None: not said), the right diagnosis and a comment ("" : none)."""

    helpful: bool | None = None
    right_diagnosis: str = ""
    comment: str = ""

    def checked(self) -> Verdict:
        """The verdict with its text trimmed; FeedbackError when it says nothing or a text is too long."""
        right, comment = " ".join(self.right_diagnosis.split()), self.comment.strip()
        if self.helpful is None and not right and not comment:
            raise FeedbackError("say whether the answer helped, give the right diagnosis, or write a comment")
        if len(right) > MAX_DIAGNOSIS_CHARS:
            raise FeedbackError(f"the right diagnosis is {len(right)} characters; at most {MAX_DIAGNOSIS_CHARS}")
        if len(comment) > MAX_COMMENT_CHARS:
            raise FeedbackError(f"the comment is {len(comment)} characters; at most {MAX_COMMENT_CHARS}")
        return Verdict(self.helpful, right, comment)


@dataclass(frozen=True)
class Entry:
    """One stored verdict with what it is about."""

    id: int
    created: str
    answered: Answered
    verdict: Verdict


def index_label(configuration: Mapping[str, Any]) -> str:
    """An index named by what it holds, for an answer whose folder is not known here (`ask` may be answered by a warm
    server): its corpus digest and size from the answer's configuration; "no retrieval" without one."""
    index = ((configuration.get("retrieval") or {}).get("index")) or {}
    digest = str(index.get("corpus_sha256") or "")[:12]
    return f"corpus {digest} ({index.get('reports', '?')} reports)" if digest else "no retrieval"


class FeedbackStore:
    """The feedback file at `path` (created with its folder on first write)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def at(cls, paths: DataPaths, env: Mapping[str, str] | None = None) -> FeedbackStore:
        """The store of a data folder, `RADSEARCH_HOME/feedback.sqlite`, unless `env` names another file in
        RADSEARCH_FEEDBACK (the tests point it at a temporary file, so no test writes into a user's data folder)."""
        explicit = (env or {}).get(ENV_FILE)
        return cls(Path(explicit).expanduser() if explicit else paths.home / FILE_NAME)

    def record(self, answered: Answered, verdict: Verdict, key: str | None = None) -> int:
        """Store a verdict and return its entry's id. With a `key` already stored (the same chat answer), the entry
        is updated instead: what this verdict says replaces what it said before, the rest is kept."""
        verdict = verdict.checked()
        now = _now()
        helpful = None if verdict.helpful is None else int(verdict.helpful)
        with self._write() as db:
            row = db.execute("SELECT id FROM feedback WHERE answer_key = ?", (key,)).fetchone() if key else None
            if row is not None:
                db.execute(
                    "UPDATE feedback SET updated = ?, helpful = COALESCE(?, helpful), "
                    "right_diagnosis = CASE WHEN ? = '' THEN right_diagnosis ELSE ? END, "
                    "comment = CASE WHEN ? = '' THEN comment ELSE ? END WHERE id = ?",
                    (now, helpful, *[verdict.right_diagnosis] * 2, *[verdict.comment] * 2, row[0]),
                )
                return int(row[0])
            cursor = db.execute(
                "INSERT INTO feedback (answer_key, created, updated, channel, user, question, findings, answer_json, "
                "configuration_hash, index_name, helpful, right_diagnosis, comment) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    now,
                    now,
                    answered.channel,
                    answered.user,
                    answered.question,
                    answered.findings,
                    json.dumps(answered.answer, ensure_ascii=False, default=str),
                    answered.configuration_hash,
                    answered.index,
                    helpful,
                    verdict.right_diagnosis,
                    verdict.comment,
                ),
            )
            return int(cursor.lastrowid or 0)

    def entries(self) -> list[Entry]:
        """Every stored verdict, oldest first (none when the file does not exist yet)."""
        if not self.path.is_file():
            return []
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT id, created, channel, user, question, findings, answer_json, index_name, helpful, "
                "right_diagnosis, comment FROM feedback ORDER BY id"
            ).fetchall()
        return [
            Entry(
                id=row[0],
                created=row[1],
                answered=Answered(
                    question=row[4],
                    findings=row[5],
                    answer=json.loads(row[6]),
                    index=row[7],
                    channel=row[2],
                    user=row[3],
                ),
                verdict=Verdict(None if row[8] is None else bool(row[8]), row[9], row[10]),
            )
            for row in rows
        ]

    def remember_last(self, who: str, answered: Answered) -> None:
        """Keep `who`'s last answer (an `assistant ask` user's), so `assistant feedback last` can judge it."""
        with self._write() as db:
            db.execute(
                "INSERT INTO last_answer (who, saved, answered_json) VALUES (?, ?, ?) ON CONFLICT(who) DO UPDATE "
                "SET saved = excluded.saved, answered_json = excluded.answered_json",
                (who, _now(), answered.to_json()),
            )

    def last(self, who: str) -> Answered | None:
        """`who`'s last remembered answer (None: none yet)."""
        if not self.path.is_file():
            return None
        with closing(self._connect()) as db:
            row = db.execute("SELECT answered_json FROM last_answer WHERE who = ?", (who,)).fetchone()
        return Answered.from_json(row[0]) if row else None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (the schema made first if needed); rolled back if the block raises."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db:
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")


def _now() -> str:
    """The time in UTC, to the second (ISO 8601)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()
