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

    `full_text` keeps the whole original text (all sections, signatures included) so the "report" field can be
    searched even when the section parser found nothing; `findings`/`impression` are empty strings when the report
    lacks them, and hold the reading only (no sign-off, dictation stamp or disclaimer: sections.py). `addendum` is
    what was added after the report was signed; `conclusion` reads it with the impression.

    What the export says of the study: `status` is preliminary | final | corrected | addendum, or "" when the export
    does not say (study_status.py), `exam` its description ("XR CHEST 2 VIEWS"), `body_part` the body part examined.
    """

    id: str
    findings: str = ""
    impression: str = ""
    full_text: str = ""
    modality: str = ""
    labels: tuple[str, ...] = ()
    source: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    status: str = ""
    exam: str = ""
    body_part: str = ""
    addendum: str = ""

    @property
    def conclusion(self) -> str:
        """The impression with the addendum after it: the radiologist's conclusion as it stands, what the evidence
        differential reads (an addendum often revises it). The impression alone when there is no addendum."""
        if not self.addendum:
            return self.impression
        parts = (p.strip() for p in (self.impression, self.addendum))
        return " ".join(p if p[-1] in ".!?" else f"{p}." for p in parts if p)

    def labelled_text(self) -> str:
        """Its findings and impression, labelled, or its whole text when it has neither: what a model is given to
        read of it (a LangChain Document's page content)."""
        parts = [
            f"FINDINGS: {self.findings.strip()}" if self.findings.strip() else "",
            f"IMPRESSION: {self.impression.strip()}" if self.impression.strip() else "",
            f"ADDENDUM: {self.addendum.strip()}" if self.addendum.strip() else "",
        ]
        return "\n".join(p for p in parts if p) or self.full_text.strip()

    @property
    def shown_impression(self) -> str:
        """The conclusion, or for a report without one its labelled text: what answers show as its conclusion. Only
        there: the evidence differential reads `conclusion` alone, so a report without one affirms nothing."""
        return self.conclusion or self.labelled_text()

    def text_of(self, field_name: str) -> str:
        """Text indexed for one of `FIELDS`: "impression" is the conclusion (an addendum is searched with it),
        "report" falls back to findings + conclusion."""
        field_name = checked_field(field_name)
        if field_name == "findings":
            return self.findings
        if field_name == "impression":
            return self.conclusion
        return self.full_text or "\n".join(p for p in (self.findings, self.conclusion) if p)
