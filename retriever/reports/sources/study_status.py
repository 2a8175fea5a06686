"""A report's status as RIS exports write it (ReportStatus: "F", "Prelim", "Signed", "Amended", "Final w/ Addendum")
normalised to the four the index keeps: preliminary < final < corrected / addendum.

Why: a preliminary report and its final look alike; which version of a study is newest, and which are final, can
only be told from this column. Vendors write it as HL7 result-status letters (P, F, C, A), words, or workflow states
("Dictated", "Signed", "Verified"); an unknown spelling is "" (not guessed), its text kept by the importer.
"""

from __future__ import annotations

import re
from typing import Literal

Status = Literal["preliminary", "final", "corrected", "addendum", ""]
STATUSES: tuple[Status, ...] = ("preliminary", "final", "corrected", "addendum")

#: Single letters, as HL7 OBR-25 and many RIS exports write them. A is read as addendum (the exports' usage), not
#: HL7's "some results available".
_CODES: dict[str, Status] = {"P": "preliminary", "I": "preliminary", "F": "final", "C": "corrected", "A": "addendum"}

#: (pattern on the lower-cased spelling, status); first match wins, so "final with addendum" is an addendum,
#: "unsigned" preliminary before "signed" is final, and "not final" preliminary.
_WORDS: tuple[tuple[str, Status], ...] = (
    (r"addend", "addendum"),
    (r"correct|amend|revis|supersed", "corrected"),
    (
        r"prelim|wet\s*read|draft|interim|pending|unsigned|unverified|not\s+(?:final|signed|verified)|in\s*progress"
        r"|dictated|transcribed|resident|provisional",
        "preliminary",
    ),
    (r"final|signed|verified|validated|approved|authenticated|complete|reported|released", "final"),
)


def normalize_status(text: str) -> Status:
    """`text` as one of STATUSES, or "" when it is empty or no known spelling."""
    spelled = " ".join(text.split())
    if not spelled:
        return ""
    code = _CODES.get(spelled.upper())
    if code is not None:
        return code
    lowered = spelled.lower()
    return next((status for pattern, status in _WORDS if re.search(pattern, lowered)), "")
