"""Query checks shared by every entry point: empty queries are refused, over-long ones truncated and reported."""

from __future__ import annotations

from dataclasses import dataclass

from retriever.reports.judged_text import visible_text


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


def clean_query(text: str | None) -> str:
    """Drop invisible characters and surrounding whitespace; raise EmptyQueryError if nothing is left."""
    cleaned = visible_text(text or "").strip()
    if not cleaned:
        raise EmptyQueryError("the query is empty: type a finding, e.g. 'small left pleural effusion'")
    return cleaned
