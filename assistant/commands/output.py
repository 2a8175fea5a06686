"""Terminal output in which data stays data: rich never reads report text, queries, paths, option values or
error messages as markup.

Rich parses every plain string it prints: `[LLL]` in a report vanishes as an unknown style, `[/bold]` raises
MarkupError (a traceback instead of the results) and `:pill:` turns into an emoji. A `Text` is printed as it is,
so everything that comes from outside the program is wrapped in one; only the program's own labels carry style.
Control characters in it (ESC sequences that clear the screen or set the window title, BEL, C1 codes) are shown
as visible escapes (`\\x1b`): a report or an answer must not drive the terminal (issue 39).
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

#: C0 and C1 control characters except tab and line break, and DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(value: object) -> str:
    """`value` as text with every control character written as an escape (`\\x1b`), so none reaches the terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def literal(value: object, style: str = "") -> Text:
    """`value` as it is: no markup, no emoji codes, no control characters."""
    return Text(visible(value), style=style)


def print_error(console: Console, message: object) -> None:
    """`error: MESSAGE`, the label in red and the message (often naming a path or a value) as it is."""
    console.print(Text.assemble(("error: ", "red"), visible(message)))


def print_note(console: Console, message: object) -> None:
    """`note: MESSAGE` in yellow: something the user should know that did not stop the command."""
    console.print(Text.assemble(("note: ", "yellow"), visible(message)))
