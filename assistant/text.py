"""Shortening text for display: one rule for every preview, table cell and echoed query."""

from __future__ import annotations


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its first `limit - 1` (trailing space dropped) and an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
