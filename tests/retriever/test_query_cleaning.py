"""Query cleaning: a query with nothing visible in it is empty, whatever invisible characters it is made of."""

from __future__ import annotations

import pytest

from retriever.search.query import EmptyQueryError, clean_query, visible_text

INVISIBLE = [
    "\u200b\u200b\u200b",  # zero-width spaces
    "\u200b \u200c\u200d \u2060\ufeff",  # zero-width (non-)joiners, word joiner, byte-order mark
    "\u200e\u200f\u202a\u202e\u2066\u2069",  # bidirectional marks, embeddings, overrides and isolates
    "\u00ad\u180e\u034f\u061c",  # soft hyphen, Mongolian vowel separator, grapheme joiner, Arabic mark
    "\u3164\u115f\u1160\uffa0\ufe0f\U000e0041",  # Hangul fillers, a variation selector, a tag character
    "\u3000\u00a0\u2003\u202f\n\t\r",  # ideographic, no-break, em and narrow spaces, line breaks
    "\x00\x1b\x7f\x85",  # C0 and C1 control characters
]


@pytest.mark.parametrize("query", INVISIBLE)
def test_a_query_of_invisible_characters_is_empty(query: str) -> None:
    with pytest.raises(EmptyQueryError, match="query is empty"):
        clean_query(query)


def test_invisible_characters_inside_a_query_are_dropped() -> None:
    assert clean_query("\ufeff\u200bpleural\u200b effu\u00adsion\u202e \x00 ") == "pleural effusion"
    assert clean_query("right\x1blower\tlobe\nopacity") == "right lower\tlobe\nopacity"


def test_visible_text_keeps_line_breaks_and_tabs_of_multi_line_text() -> None:
    assert visible_text("FINDINGS:\n\tsmall\u200b effusion\x07.") == "FINDINGS:\n\tsmall effusion ."
