"""What a RIS export appends to a report that is not the radiologist's reading: signatures, dictation and
transcription stamps, attestations, end markers and disclaimers.

Why: every report of a hospital export ends with a block such as "Electronically signed by: Dr X on 11/24/2026
10:12" or "Dictated by: ... D: 11/24/2026 T: 11/24/2026". Left in the impression, it became a candidate diagnosis
("Most likely diagnosis: electronically signed"). The section parser removes these from findings and impression;
the report's full text keeps them.

Two kinds, because they end a section differently:
- a *sign-off* (signature, dictation or transcription stamp, attestation, "END OF IMPRESSION") closes the reading:
  it and everything after it up to the next section header is the signature block (a name, a date, a workstation on
  the lines below), never findings;
- a *disclaimer* ("This report was generated with the assistance of speech recognition software...") is one sentence
  or line that may stand anywhere: it alone is removed.
A phrase counts only where a line or a sentence starts, so "as dictated by the referring physician" in the middle of
a sentence stays.
"""

from __future__ import annotations

import re

#: Where a sign-off or disclaimer may start: a line's start or a sentence's (after . ! ? ;), with the decoration
#: vendors put around stamps ("*** END OF IMPRESSION ***", "[Signed]", "-- ").
_START = r"(?:^|(?<=[.!?;])[ \t]+)[ \t]*[*=\-\[_#>]*[ \t]*"
_DATE = r"\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}"

#: Phrases that open a signature block, each written as it starts. Those that could open a sentence of a reading
#: ("Read by ...", "Radiologist ...") need their colon.
_SIGN_OFF_PHRASES = (
    # signatures (Epic/Radiant, PowerScribe, Fluency, Sectra, Agfa, GE Centricity spellings)
    r"(?:reviewed\s+and\s+)?(?:electronically|digitally|e-?)\s*(?:signed|authenticated|approved|verified)\b",
    r"(?:report\s+|final\s+report\s+)?(?:signed|finali[sz]ed|verified|validated|authenticated|approved|released)"
    r"(?:\s+(?:off|electronically|out))?\s+(?:by|on)\b",
    r"(?:report\s+)?(?:signed|signature|finali[sz]ed|verified|validated)\s*:",
    r"this\s+(?:report|study|document|examination)\s+(?:has\s+been|was)\s+(?:electronically\s+)?"
    r"(?:signed|finali[sz]ed|verified|authenticated)\b",
    r"/e?s/",
    # who read it, as a stamp
    r"(?:(?:attending|reading|interpreting|signing|reporting|staff|consultant)\s+)?"
    r"(?:radiologist|physician|resident|fellow|attending)(?:\s+signature)?\s*:",
    r"(?:read|interpreted|reported|reviewed|dictated|transcribed|typed|prepared)\s*(?:by)?\s*:",
    # dictation and transcription stamps
    r"(?:dictated|transcribed|typed)\s+(?:by|on|but\s+not\s+(?:read|signed)|and\s+(?:signed|transcribed))\b",
    r"(?:dictating|transcribing)\s+(?:radiologist|physician|provider)\b",
    r"transcriptionist\s*:",
    rf"(?-i:DD|DT|D|T)\s*:\s*{_DATE}",  # the stamps are capitals: "t: 11/18/92:" opens a history line
    r"job\s*(?:#|no\.?|number|id)\s*:?\s*\d",
    r"report\s+status\s*:",
    # attestations
    r"(?:(?:attending|teaching)\s+(?:radiologist\s+|physician\s+)?)?attestation\b",
    r"I,?\s+(?:Dr\.?\s+)?[A-Z][\w.\- ]{0,40},?\s+(?:have\s+)?(?:personally\s+)?(?:reviewed|examined|seen|viewed)\b",
    r"I\s+(?:have\s+)?(?:personally\s+)?(?:reviewed|examined|seen|viewed)\s+(?:the\s+)?(?:images|study|examination|exam)\b",
    r"I\s+agree\s+with\s+the\s+(?:above\s+)?(?:report|findings|interpretation|resident|fellow|preliminary)",
    # end markers: the reading has ended
    r"end\s+of\s+(?:impression|report|findings|addendum|dictation|conclusion)\b",
)

#: One-sentence notices a vendor's template adds.
_DISCLAIMER_PHRASES = (
    r"(?:this\s+(?:report|document|dictation|study)\s+(?:was|has\s+been|is|may\s+have\s+been)\s+)?"
    r"(?:generated|dictated|created|prepared|transcribed|produced)\s+(?:with|using|by)\s+"
    r"(?:the\s+(?:assistance|aid|use)\s+of\s+)?(?:voice|speech)[\s-]+recognition\b",
    r"(?:voice|speech)[\s-]+recognition\s+(?:software|technology|system)\b",
    r"this\s+(?:report|document|dictation)\s+may\s+contain\s+(?:transcription|typographical|dictation)\b",
    r"(?:please\s+)?(?:excuse|disregard)\s+any\s+(?:typographical|transcription|dictation|grammatical)\b",
    r"(?:unintended\s+|occasional\s+)?(?:transcription|typographical|dictation|grammatical|(?:voice|speech)\s+"
    r"recognition)\s+errors?\s+(?:may|can|might|could)\b",
    r"errors\s+(?:may|can|might)\s+occur\b",
    r"despite\s+(?:careful\s+)?proofreading\b",
    r"confidentiality\s+notice\b",
)

#: Stamps no reading ever says, found even where an export flattened the line breaks away and left no period
#: ("... interstitial edema Electronically signed by: Dr X"): these need no line or sentence start.
_STAMPS = (
    r"(?:electronically|digitally)\s+signed\b",
    r"(?:dictated|transcribed)\s+by\s*:",
    r"\*{2,}\s*end\s+of\s+(?:impression|report|findings|addendum|dictation|conclusion)\b",
    r"(?<!\S)/es/",
)

_SIGN_OFF = re.compile(
    "(?:" + _START + "(?:" + "|".join(_SIGN_OFF_PHRASES) + ")|[ \t]*(?:" + "|".join(_STAMPS) + "))",
    re.IGNORECASE | re.MULTILINE,
)
_DISCLAIMER = re.compile(_START + "(?:" + "|".join(_DISCLAIMER_PHRASES) + ")", re.IGNORECASE | re.MULTILINE)
#: A disclaimer ends with its sentence (a period before a space or the line's end) or its line.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def _without_disclaimers(text: str) -> str:
    """`text` less every disclaimer sentence."""
    while (match := _DISCLAIMER.search(text)) is not None:
        end = _SENTENCE_END.search(text, match.end())
        stop = end.end() if end is not None else len(text)
        text = text[: match.start()] + text[stop:]
    return text


def strip_signoffs(text: str) -> str:
    """A section's text without its signature block and disclaimers (line ends kept for the caller to clean).

    Everything from the first sign-off on is dropped: the lines after a signature stamp are its name, date and
    workstation. Text without either comes back unchanged, character for character.
    """
    text = _without_disclaimers(text)
    match = _SIGN_OFF.search(text)
    return text[: match.start()] if match is not None else text


def is_signoff(text: str) -> bool:
    """Whether `text` holds a sign-off or disclaimer where a line or sentence starts (what `strip_signoffs` cuts)."""
    return bool(_SIGN_OFF.search(text) or _DISCLAIMER.search(text))
