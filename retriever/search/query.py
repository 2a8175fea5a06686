"""Query checks shared by every entry point: empty queries are refused, over-long ones truncated and reported."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters a renderer draws as nothing
# (zero-width spaces and joiners, bidi controls, variation selectors, Hangul fillers, tag characters).
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
_LINE_LAYOUT = "\t\n\r"


class EmptyQueryError(ValueError):
    """The query has no searchable text."""


@dataclass(frozen=True)
class PreparedQuery:
    """A cleaned query and whether the encoder will only see its beginning."""

    text: str
    tokens: int
    max_tokens: int

    @property
    def truncated(self) -> bool:
        return self.tokens > self.max_tokens

    def notice(self) -> str:
        """Human-readable truncation notice (empty when nothing is cut)."""
        if not self.truncated:
            return ""
        return (
            f"query is {self.tokens} tokens ({len(self.text)} characters); the encoder reads only the first "
            f"{self.max_tokens} tokens"
        )


def visible_text(text: str) -> str:
    """`text` without the characters nobody sees: format characters (Unicode category Cf) and other default-
    ignorable ones are dropped, control characters (Cc) become spaces, tabs and line breaks stay.

    Invisible characters make a query that looks empty non-empty, and hide words from filters that look for
    them (`refer\u200bence` is not `reference`)."""
    kept = []
    for char in _IGNORABLE.sub("", text):
        category = unicodedata.category(char)
        if char in _LINE_LAYOUT or category not in ("Cc", "Cf"):
            kept.append(char)
        elif category == "Cc":
            kept.append(" ")
    return "".join(kept)


def clean_query(text: str | None) -> str:
    """Drop invisible characters and surrounding whitespace; raise EmptyQueryError if nothing is left."""
    cleaned = visible_text(text or "").strip()
    if not cleaned:
        raise EmptyQueryError("the query is empty: type a finding, e.g. 'small left pleural effusion'")
    return cleaned
