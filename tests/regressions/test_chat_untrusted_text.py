"""Issue 51 (low): report sources reached the chat's Markdown export unescaped (`<img onerror=...>`), and bidi
overrides and zero-width characters reached its cards and Markdown as they are. Every string the chat shows goes
through one of two escapes (assistant/chat/escape.py), which now also show invisible formatting characters."""

from __future__ import annotations

from report_fixtures import hit

from assistant.chat.export import answer_document
from assistant.chat.report_cards import report_cards_html
from assistant.rag.answer import Answer


def _answer(*hits) -> Answer:
    return Answer(
        "q", "effusion", [], "why", [], list(hits), None, "evidence", configuration={}, configuration_hash="h"
    )


def test_a_source_or_modality_with_markup_is_text_in_the_export() -> None:
    planted = hit("r-1", 1, 0.9, "impression", "Effusion.", source="<img src=x onerror=alert(1)>", modality="XR")
    linked = hit("r-2", 2, 0.8, "impression", "Effusion.", source="[site](javascript:alert(1))", modality="**CT**")
    document = answer_document(_answer(planted, linked))
    assert "<img" not in document and "&lt;img src=x onerror=alert(1)&gt;" in document
    assert "\\[site\\](javascript:" in document and "[site](" not in document  # a literal, never a link
    assert "**CT**" not in document


def test_bidi_and_zero_width_characters_are_shown_in_cards_and_markdown() -> None:
    reversed_text = hit("site:A1\u200b00", 1, 0.9, "impression", "\u202eeromun on\u202c. Pneumothorax.")
    cards = report_cards_html([reversed_text])
    document = answer_document(_answer(reversed_text))
    for shown in (cards, document):
        assert "\u202e" not in shown and "\u200b" not in shown
        assert "U+202E" in shown and "U+200B" in shown
