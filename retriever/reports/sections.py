"""Split free-text radiology reports into sections (FINDINGS, IMPRESSION, ...).

Real reports spell headers many ways: "FINDINGS:", "Findings -", "1. FINDINGS", "IMPRESSION/CONCLUSION",
"Opinion:", "Interpretation:"; headers may sit on their own line or inline ("...normal. IMPRESSION: ...").
MTSamples joins everything with commas (",FINDINGS: ,"). The parser recognizes a known vocabulary of header
words only, so ordinary capitalized words in the text are never mistaken for sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def parse_sections(text: str) -> Sections:
    """Split `text` into known sections. Repeated sections are concatenated in order."""
    parts: dict[str, list[str]] = {}
    matches = [m for m in _HEADER_RE.finditer(text) if _is_header(text, m)]
    preamble = text[: matches[0].start()] if matches else text
    for i, m in enumerate(matches):
        name = _LOOKUP[re.sub(r"\s+", " ", m.group("name").lower())]
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = clean_text(text[m.end() : end])
        if body:
            parts.setdefault(name, []).append(body)
    joined = {name: " ".join(bodies) for name, bodies in parts.items()}
    return Sections(**joined, other=clean_text(preamble))
