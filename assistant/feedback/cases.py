"""Feedback entries as cases of the diagnosis benchmark, so a site measures the next encoder, setting or model on its
own residents' questions.

The format is the benchmark's (eval/diagnosis/cases.py, one JSON object a line): `id` is the entry's (`feedback-7`),
`findings` the case's findings as the resident typed them, `diagnosis` the reference, `source` "site", and `meta`
who judged which answer (user, configuration hash, the answer's diagnosis, the verdict, the index, the time, the
comment). It is written here, not with eval's writer: the product never imports the benchmarks.

The reference is the right diagnosis the resident gave; without one, the answer's own diagnosis when the resident
found it helpful. An entry with neither (not helpful and no right diagnosis, or a comment alone) has no reference
and is left out, with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.feedback.store import Entry

SOURCE = "site"
CASE_PREFIX = "feedback-"


@dataclass(frozen=True)
class Skipped:
    """An entry that makes no case, and why."""

    id: int
    reason: str


def reference(entry: Entry) -> str:
    """The entry's reference diagnosis ("" when it has none)."""
    verdict = entry.verdict
    if verdict.right_diagnosis:
        return verdict.right_diagnosis
    return entry.answered.diagnosis if verdict.helpful else ""


def case_row(entry: Entry) -> dict[str, Any]:
    """The benchmark case of an entry that has a reference."""
    answered, verdict = entry.answered, entry.verdict
    meta = {
        "user": answered.user or "",
        "configuration_hash": answered.configuration_hash,
        "answered": answered.diagnosis,
        "verdict": {True: "helpful", False: "not helpful", None: ""}[verdict.helpful],
        "index": answered.index,
        "channel": answered.channel,
        "created": entry.created,
        "comment": verdict.comment,
    }
    return {
        "id": f"{CASE_PREFIX}{entry.id}",
        "findings": answered.findings,
        "diagnosis": reference(entry),
        "accept": [],
        "source": SOURCE,
        "meta": {key: value for key, value in meta.items() if value},
    }


def write_cases(entries: Iterable[Entry], out: Path) -> tuple[int, list[Skipped]]:
    """Write the entries with a reference to `out` as JSONL (its folder made); (cases written, entries left out)."""
    rows, skipped = [], []
    for entry in entries:
        if not entry.answered.findings.strip():
            skipped.append(Skipped(entry.id, "no findings"))
        elif reference(entry):
            rows.append(case_row(entry))
        else:
            said_no = entry.verdict.helpful is False
            skipped.append(Skipped(entry.id, "not helpful, no right diagnosis given" if said_no else "no diagnosis"))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return len(rows), skipped
