"""Issue 51 (low): bidirectional overrides (U+202E) in a report reached the terminal, so its next words printed
reversed, and an id holding a zero-width space printed exactly like another id. Every string the CLI prints goes
through `visible`, which now writes such characters as their code points."""

from __future__ import annotations

import io

from rich.console import Console

from assistant.commands.output import literal, visible
from assistant.text import shown_invisible


def _printed(text: str) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(literal(text))
    return out.getvalue()


def test_a_bidi_override_in_report_text_is_shown_not_obeyed() -> None:
    report = "IMPRESSION: \u202eeromun on\u202c. Pneumothorax."
    printed = _printed(report)
    assert "\u202e" not in printed and "\u202c" not in printed
    assert "<U+202E>eromun on<U+202C>" in printed
    assert "\u2067" not in visible("isolate \u2067x\u2069") and "<U+2067>" in visible("isolate \u2067x\u2069")


def _seen(text: str) -> str:
    """What a reader sees of printed text: the invisible characters leave no mark on the screen."""
    return "".join(c for c in _printed(text) if c not in "\u200b\u200c\u200d\u2060\ufeff")


def test_two_ids_that_differ_by_an_invisible_character_print_differently() -> None:
    plain, zero_width, joiner = "site:A100", "site:A1\u200b00", "site:A1\u2060\ufeff00"
    assert len({_seen(plain), _seen(zero_width), _seen(joiner)}) == 3
    assert shown_invisible(zero_width) == "site:A1<U+200B>00"


def test_ordinary_text_is_unchanged() -> None:
    text = "Kleiner Pleuraerguss links; épanchement pleural; 胸水 — 3.5 cm"
    assert visible(text) == shown_invisible(text) == text
