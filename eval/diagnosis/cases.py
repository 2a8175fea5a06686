"""Diagnosis cases: the benchmark's input format (JSONL, one case per line).

    {"id": "medpix:MPX1009", "findings": "...", "diagnosis": "Bladder diverticulum",
     "accept": ["bladder diverticulum"], "source": "medpix"}

`accept` lists other answers that count as correct (synonyms, the case title); `source` groups results.
The `id` is the report id of the case in the retrieval corpus, so a benchmark can keep the case's own report
out of what the LLM is shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: `meta` key marking a case that configurations were screened on (eval/diagnosis/build_cases.py).
SCREENING = "screening"


class CaseFileError(ValueError):
    """A cases file cannot be used; the message names the file, line and problem."""


@dataclass(frozen=True)
class Case:
    """One findings text with its reference diagnosis and any other acceptable answers."""

    id: str
    findings: str
    diagnosis: str
    accept: tuple[str, ...] = ()
    source: str = ""
    meta: dict[str, str] = field(default_factory=dict)

    def references(self) -> list[str]:
        """The diagnosis first, then the accepted alternatives, without repeats."""
        return list(dict.fromkeys([self.diagnosis, *self.accept]))


def read_cases(path: Path) -> list[Case]:
    """Parse and validate a cases file: every line an object with non-empty id/findings/diagnosis, ids unique."""
    cases: list[Case] = []
    seen: set[str] = set()
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CaseFileError(f"{where}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise CaseFileError(f"{where}: expected an object")
            missing = [k for k in ("id", "findings", "diagnosis") if not str(row.get(k, "")).strip()]
            if missing:
                raise CaseFileError(f"{where}: missing or empty {', '.join(missing)}")
            case_id = str(row["id"])
            if case_id in seen:
                raise CaseFileError(f"{where}: duplicate id {case_id!r}")
            seen.add(case_id)
            accept = row.get("accept") or []
            if isinstance(accept, str) or not all(isinstance(a, str) for a in accept):
                raise CaseFileError(f"{where}: `accept` must be a list of strings")
            cases.append(
                Case(
                    id=case_id,
                    findings=str(row["findings"]),
                    diagnosis=str(row["diagnosis"]),
                    accept=tuple(a for a in accept if a.strip()),
                    source=str(row.get("source", "")),
                    meta={str(k): str(v) for k, v in (row.get("meta") or {}).items()},
                )
            )
    if not cases:
        raise CaseFileError(f"{path}: no cases")
    return cases


def write_cases(cases: Iterable[Case], path: Path) -> int:
    """Write cases as JSONL (parent folders created); returns how many."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for case in cases:
            row = asdict(case)
            row["accept"] = list(case.accept)
            if not row["meta"]:
                del row["meta"]
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count
