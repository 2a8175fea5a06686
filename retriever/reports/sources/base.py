"""What every importer yields: a `Report`, or a `Rejection` saying which record was dropped and why."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from retriever.reports.record import Report

#: Longer than any radiology report: such a text is a document collection or a log, not one report (a text file or
#: a table's row; a 5 MB cell was indexed whole).
MAX_REPORT_CHARS = 50_000


@dataclass(frozen=True)
class Rejection:
    """A record that was read but not kept.

    `ref` locates it (file and row, or report id) so a user can fix it; `reason` is the kind of problem (rejections
    are counted by it), `detail` the specifics (which id it duplicates, which columns the file has); `row` the record
    as read (its cells by column), so the rejects log holds what to fix and re-import, not only where it was.
    """

    source: str
    ref: str
    reason: str
    detail: str = ""
    row: dict[str, str] | None = field(default=None, compare=False, hash=False)


Outcome = Report | Rejection

_MODALITIES: tuple[tuple[str, str], ...] = (
    # (regex on a free-text modality/exam description, normalized code); first match wins.
    (r"\bmammo", "MG"),
    (r"\b(pet|nm|nuclear|spect|scintigra)", "NM"),
    (r"\b(mra|mri|mr)\b|magnetic", "MR"),
    (r"\b(cta|ct)\b|computed tomograph", "CT"),
    (r"\b(us|ultrasound|sonograph|doppler|duplex)\b", "US"),
    (r"fluoro|angio|esophagram|barium", "FL"),
    (r"\b(xr|x-ray|xray|radiograph|cxr|chest 2v|pa and lateral|ap )", "XR"),
)


#: DICOM modality codes (tag 0008,0060), as RIS/PACS exports write them, -> the code the index keeps: every
#: projection radiograph (computed, digital, direct) is XR, PET is nuclear medicine, fluoroscopy and angiography FL.
DICOM_MODALITIES = {
    "CR": "XR",
    "DX": "XR",
    "DR": "XR",
    "XR": "XR",
    "CT": "CT",
    "MR": "MR",
    "US": "US",
    "NM": "NM",
    "PT": "NM",
    "MG": "MG",
    "RF": "FL",
    "XA": "FL",
    "FL": "FL",
    "OT": "OT",
}


def normalize_modality(text: str) -> str:
    """Map a DICOM code ("CR", "DX", "PT") or a free-text modality ("CT w/contrast (IV)", "MRI", "Xray Chest PA") to
    the short code the index keeps (a DICOM `CR` used to become `OT`, so neither `--modality CR` nor `XR` found it)."""
    code = DICOM_MODALITIES.get(text.strip().upper())
    if code is not None:
        return code
    lowered = text.lower()
    for pattern, code in _MODALITIES:
        if re.search(pattern, lowered):
            return code
    return "OT" if lowered.strip() else ""
