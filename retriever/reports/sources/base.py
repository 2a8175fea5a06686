"""What every importer yields: a `Report`, or a `Rejection` saying which record was dropped and why."""

from __future__ import annotations

import re
from dataclasses import dataclass

from retriever.reports.record import Report


@dataclass(frozen=True)
class Rejection:
    """A record that was read but not kept.

    `ref` locates it (file and row, or report id) so a user can fix it; `reason` is the kind of problem (rejections
    are counted by it), `detail` the specifics (which id it duplicates, which columns the file has).
    """

    source: str
    ref: str
    reason: str
    detail: str = ""


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


def normalize_modality(text: str) -> str:
    """Map a free-text modality ("CT w/contrast (IV)", "MRI", "Xray Chest PA") to a short DICOM-like code."""
    lowered = text.lower()
    for pattern, code in _MODALITIES:
        if re.search(pattern, lowered):
            return code
    return "OT" if lowered.strip() else ""
