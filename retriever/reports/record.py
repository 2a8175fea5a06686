"""The `Report` record every other part of the project passes around."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, cast, get_args

#: A searchable field of a report; FIELDS in the order the CLI lists them.
Field = Literal["findings", "impression", "report"]
FIELDS: tuple[Field, ...] = get_args(Field)


def checked_field(name: str) -> Field:
    """`name` as a Field; ValueError naming the fields otherwise (a field given as text: a setting, a mapping)."""
    if name not in FIELDS:
        raise ValueError(f"unknown field {name!r}; choose one of {', '.join(FIELDS)}")
    return cast(Field, name)


@dataclass(frozen=True)
class Report:
    """One radiology report, normalized from whatever format it came in.

    `full_text` keeps the whole original text (all sections) so the "report" field can be searched even when
    the section parser found nothing; `findings`/`impression` are empty strings when the report lacks them.
    """

    id: str
    findings: str = ""
    impression: str = ""
    full_text: str = ""
    modality: str = ""
    labels: tuple[str, ...] = ()
    source: str = ""
    meta: dict[str, str] = field(default_factory=dict)

    def text_of(self, field_name: str) -> str:
        """Text indexed for one of `FIELDS` ("report" falls back to findings + impression)."""
        field_name = checked_field(field_name)
        if field_name == "findings":
            return self.findings
        if field_name == "impression":
            return self.impression
        return self.full_text or "\n".join(p for p in (self.findings, self.impression) if p)
