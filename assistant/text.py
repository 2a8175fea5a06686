"""Text for display: one rule for every preview, table cell and echoed query, and one for the characters a reader
cannot see."""

from __future__ import annotations

import re

#: Characters that change how the text around them is shown without being seen themselves: bidirectional embeddings,
#: overrides, isolates and marks (U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C) and zero-width ones (U+200B-200D,
#: U+2060, U+FEFF). A report holding U+202E prints its next words reversed; an id holding U+200B prints exactly like
#: another id (issue 51).
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def shown_invisible(text: str) -> str:
    """`text` with every invisible formatting character written as its code point (`<U+202E>`), so that what is
    printed reads in the order it was written and two different ids never print alike."""
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its first `limit - 1` (trailing space dropped) and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
