"""Split free-text radiology reports into sections (FINDINGS, IMPRESSION, ...).

Real reports spell headers many ways: "FINDINGS:", "Findings -", "1. FINDINGS", "IMPRESSION/CONCLUSION",
"Opinion:", "Interpretation:"; headers may sit on their own line or inline ("...normal. IMPRESSION: ...").
MTSamples joins everything with commas (",FINDINGS: ,"). The parser recognizes a known vocabulary of header
words only, so ordinary capitalized words in the text are never mistaken for sections.

A RIS export's report also carries what is not the reading: signatures, dictation stamps, attestations and
disclaimers are removed from every section (signoffs.py), and an addendum ("ADDENDUM:", "Addendum #1
(11/25/2026):", "***ADDENDUM***") is a section of its own, which readers take as part of the conclusion.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retriever.reports.signoffs import strip_signoffs

# Canonical section name -> header spellings (case-insensitive; spaces may be any whitespace).
_HEADERS: dict[str, tuple[str, ...]] = {
    "findings": (
        "findings",
        "finding",
        "findings and impression",
        "description",
        "observations",
    ),
    "impression": (
        "impression",
        "impressions",
        "conclusion",
        "conclusions",
        "opinion",
        "interpretation",
        "summary",
        "diagnosis",
        "final impression",
        "diagnostic impression",
        "assessment",
        "impression/conclusion",
        "conclusion/impression",
        "impression and recommendation",
        "impression and recommendations",
    ),
    "indication": (
        "indication",
        "indications",
        "history",
        "clinical history",
        "clinical information",
        "clinical indication",
        "reason for exam",
        "reason for examination",
        "reason for study",
        "clinical data",
        "clinical details",
        "clinical notes",
    ),
    "comparison": ("comparison", "comparisons", "prior", "prior studies", "comparison studies"),
    "technique": ("technique", "procedure", "protocol", "method", "technique and findings"),
    "exam": ("exam", "examination", "study", "type of exam", "procedure performed"),
    "recommendation": ("recommendation", "recommendations", "follow-up", "follow up"),
}

_LOOKUP = {spelling: name for name, spellings in _HEADERS.items() for spelling in spellings}
_ALT = "|".join(sorted((re.escape(s).replace(r"\ ", r"\s+") for s in _LOOKUP), key=len, reverse=True))
# A header: optional numbering/bullet, the word(s), then a colon or dash (or end of line when alone on a line).
_HEADER_RE = re.compile(
    rf"[ \t]*(?:\(?\d{{1,2}}[.)]\s*|[-*\u2022]\s*)?"  # "1. ", "2) ", "- ", "* ", "• "
    rf"\b(?P<name>{_ALT})"
    rf"(?:\s*(?::|-(?=\s)|\u2014)|[ \t]*(?=\n))",
    re.IGNORECASE,
)
#: An addendum's header where a line or sentence starts, with the number, date or author vendors add, ending in a
#: colon, a dash, its decoration or the line's end: "ADDENDUM:", "Addendum #1 (11/25/2026):", "***ADDENDUM***",
#: "ADDENDUM 2 - 11/25/2026 10:12:", "Addendum by Dr. Lee:". "An addendum will follow." is no header.
_ADDENDUM_RE = re.compile(
    r"(?:^|(?<=[.!?])[ \t]+)[ \t]*[*=\-\[#]*[ \t]*\b(?:addend(?:um|a)|addended\s+report)\b"
    r"(?:[ \t]*[,-]?[ \t]*(?:\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}|\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AP]M\b)?|\#\s*\d+"
    r"|no\.?\s*\d+|\d+\b|\([^()\n]{0,40}\)|(?:by|from)\s+[^:\n]{1,40}?(?=:)|begins|start|follows))*"
    r"[ \t]*(?::|-(?=\s)|\u2014|[*=\]]+|(?=[ \t]*$))",
    re.IGNORECASE | re.MULTILINE,
)
_BULLET_RE = re.compile(r"^[ \t]*(?:[-*\u2022\u25cf\u25aa]|\d{1,2}[.)])[ \t]+", re.MULTILINE)
_SPACE_RE = re.compile(r"[ \t\r\f\v]+")


@dataclass(frozen=True)
class Sections:
    """Parsed sections; absent ones are empty strings. `other` holds text before the first header."""

    findings: str = ""
    impression: str = ""
    indication: str = ""
    comparison: str = ""
    technique: str = ""
    exam: str = ""
    recommendation: str = ""
    addendum: str = ""
    other: str = ""


def clean_text(text: str) -> str:
    """Normalize whitespace and bullets, unwrap hard-wrapped lines, keep sentence content unchanged."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _BULLET_RE.sub("", text)
    lines = [_SPACE_RE.sub(" ", line).strip() for line in text.split("\n")]
    text = " ".join(line for line in lines if line)
    return text.strip(" ,;:").strip()


def _is_header(text: str, match: re.Match[str]) -> bool:
    """Reject matches that are ordinary words mid-sentence ("no report of pain: ...")."""
    before = text[: match.start()].rstrip(" \t")
    word = match.group("name")
    if not before or before[-1] in "\n.,;:!?)]":
        return True
    # Inline header after a plain space: accept only an all-caps header ("... normal. IMPRESSION: ...").
    return word.isupper() and text[match.end() - 1] == ":"


def _headers(text: str) -> list[tuple[str, re.Match[str]]]:
    """(section name, header match) of every header in `text`, in order; an addendum's header wins over a section
    header inside it ("Addendum (impression):")."""
    found = [("addendum", m) for m in _ADDENDUM_RE.finditer(text)]
    found += [
        (_LOOKUP[re.sub(r"\s+", " ", m.group("name").lower())], m)
        for m in _HEADER_RE.finditer(text)
        if _is_header(text, m)
    ]
    found.sort(key=lambda item: (item[1].start(), item[0] != "addendum"))
    kept: list[tuple[str, re.Match[str]]] = []
    for name, m in found:
        if not kept or m.start() >= kept[-1][1].end():
            kept.append((name, m))
    return kept


def parse_sections(text: str) -> Sections:
    """Split `text` into known sections, each without sign-offs and disclaimers. Repeated sections (several
    addenda) are concatenated in order."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    parts: dict[str, list[str]] = {}
    headers = _headers(text)
    preamble = text[: headers[0][1].start()] if headers else text
    for i, (name, m) in enumerate(headers):
        end = headers[i + 1][1].start() if i + 1 < len(headers) else len(text)
        body = clean_text(strip_signoffs(text[m.end() : end]))
        if body:
            parts.setdefault(name, []).append(body)
    joined = {name: " ".join(bodies) for name, bodies in parts.items()}
    return Sections(**joined, other=clean_text(strip_signoffs(preamble)))
