"""Escaping for the chat page: every piece of report or model text is untrusted (archived reports can contain markup, a
model can emit anything), so it goes through `md_escape` (chat messages) or `html_text` (HTML) and nowhere else
builds markup from it."""

from __future__ import annotations

import html
import re

from assistant.text import shown_invisible

# Markdown/HTML characters that would otherwise turn report or model text into formatting or markup.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def md_escape(text: str) -> str:
    """Text for a Markdown chat message shown literally: invisible formatting characters shown as their code points
    (assistant.text.shown_invisible), HTML-escaped, Markdown specials backslashed, and a leading list/heading marker
    neutralised."""
    escaped = _MD_SPECIAL.sub(r"\\\1", html.escape(shown_invisible(text), quote=False))
    return re.sub(r"^(\s*)([-+>]|\d+\.)(\s)", r"\1\\\2\3", escaped, flags=re.MULTILINE)


def html_text(text: object) -> str:
    """Text for HTML, attribute values included; invisible formatting characters (a bidi override that would
    reverse what follows, a zero-width space that makes two ids look alike) shown as their code points."""
    return html.escape(shown_invisible(str(text)), quote=True)


def md_unescape(text: str) -> str:
    """The text `md_escape` was given: every backslash it left escapes the next character (it doubles the text's own),
    and the HTML escapes are undone last, as they were done first."""
    return html.unescape(re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL))
