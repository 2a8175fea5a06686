"""Escaping for the chat page: every piece of report or model text is untrusted (archived reports can contain markup, a
model can emit anything), so it goes through `md_escape` (chat messages) or `html_text` (HTML) and nowhere else
builds markup from it."""

from __future__ import annotations

import html
import re

# Markdown/HTML characters that would otherwise turn report or model text into formatting or markup.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def md_escape(text: str) -> str:
    """Text for a Markdown chat message shown literally: HTML-escaped, Markdown specials backslashed, and a
    leading list/heading marker neutralised."""
    escaped = _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))
    return re.sub(r"^(\s*)([-+>]|\d+\.)(\s)", r"\1\\\2\3", escaped, flags=re.MULTILINE)


def html_text(text: object) -> str:
    """Text for HTML, attribute values included."""
    return html.escape(str(text), quote=True)
