"""Terminal output in which data stays data: rich never reads report text, queries, paths, option values or
error messages as markup.

Rich parses every plain string it prints: `[LLL]` in a report vanishes as an unknown style, `[/bold]` raises
MarkupError (a traceback instead of the results) and `:pill:` turns into an emoji. A `Text` is printed as it is,
so everything that comes from outside the program is wrapped in one; only the program's own labels carry style.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text


def literal(value: object, style: str = "") -> Text:
    """`value` as it is: no markup, no emoji codes."""
    return Text(str(value), style=style)


def print_error(console: Console, message: object) -> None:
    """`error: MESSAGE`, the label in red and the message (often naming a path or a value) as it is."""
    console.print(Text.assemble(("error: ", "red"), str(message)))


def print_note(console: Console, message: object) -> None:
    """`note: MESSAGE` in yellow: something the user should know that did not stop the command."""
    console.print(Text.assemble(("note: ", "yellow"), str(message)))
