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


def test_visible_text_of_every_character_is_the_character_by_character_reading() -> None:
    """A text with nothing invisible is returned whole, without reading each character; every character of the
    basic plane, inside a word, comes out as the rule says: default-ignorable and Cf dropped, Cc a space, layout
    kept."""
    import unicodedata

    from retriever.reports.judged_text import _IGNORABLE

    def by_rule(char: str) -> str:
        category = unicodedata.category(char)
        if _IGNORABLE.match(char) or category == "Cf":
            return ""
        return " " if category == "Cc" and char not in "\t\n\r" else char

    for code in range(0x10000):
        if not 0xD800 <= code <= 0xDFFF:  # surrogates are no characters
            assert visible_text(f"a{chr(code)}b") == f"a{by_rule(chr(code))}b", hex(code)
    assert visible_text("Small effusion.\nNo pneumothorax.\t") == "Small effusion.\nNo pneumothorax.\t"
