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
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from assistant.text import shown_invisible

if TYPE_CHECKING:
    from assistant.excerpt import Excerpt

#: The exit code of bad input (an empty query, a missing or mismatched index, a bad option value or environment
#: variable), whichever command printed its error.
EXIT_BAD_INPUT = 2
#: C0 and C1 control characters except tab and line break, and DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(value: object) -> str:
    """`value` as text with every control character written as an escape (`\\x1b`) and every invisible formatting
    character as its code point (`<U+202E>`, assistant.text.shown_invisible), so none reaches the terminal; Windows
    and old Mac line ends (CRLF, CR: RIS exports) as line breaks, not as escapes."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n")
    return shown_invisible(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


def literal(value: object, style: str = "") -> Text:
    """`value` as it is: no markup, no emoji codes, no control characters."""
    return Text(visible(value), style=style)


def print_error(console: Console, message: object) -> None:
    """`error: MESSAGE`, the label in red and the message (often naming a path or a value) as it is; kept for the
    JSON error object `--json` prints (assistant/commands/json_errors.py)."""
    from assistant.commands.json_errors import record

    console.print(Text.assemble(("error: ", "red"), visible(message)))
    record(visible(message))


def print_note(console: Console, message: object) -> None:
    """`note: MESSAGE` in yellow: something the user should know that did not stop the command."""
    console.print(Text.assemble(("note: ", "yellow"), visible(message)))


def marked(excerpt: Excerpt, console: Console) -> Text:
    """A matching sentence (assistant/excerpt.py) with the query's words highlighted and the ones the report negates
    struck through in red. Without colour (piped, NO_COLOR) the marks are written out, «word» and «word (negated)»,
    in quotes report text rarely holds (brackets it often does), so they survive in a log or a file."""
    plain = console.no_color or console.color_system is None
    text = Text()
    at = 0
    for mark in excerpt.marks:
        text.append(visible(excerpt.text[at : mark.start]))
        word = visible(excerpt.text[mark.start : mark.end])
        if plain:
            text.append(f"«{word} (negated)»" if mark.negated else f"«{word}»")
        else:
            text.append(word, style="bold red strike" if mark.negated else "bold yellow")
        at = mark.end
    text.append(visible(excerpt.text[at:]))
    return text


#: The table's mark on a hit that says the opposite of the query, and what it means (printed under the table).
CONTRADICTS_CELL = "YES"
CONTRADICTS_NOTE = (
    "rows with YES under contradicts say the opposite of the query: they rule out the finding it asks for (or affirm "
    "one it rules out), so they are ranked after the other hits."
)
#: The mark on a mixed hit (Hit.partly_contradicts), and its note.
PARTLY_CELL = "partly"
PARTLY_NOTE = (
    "rows with partly under contradicts rule out, somewhere in their text, a finding the query asserts (or assert one "
    "it rules out) while matching it elsewhere: read them before taking them as support."
)


def contradiction_marks(flags: list[tuple[bool, bool]]) -> tuple[list[str], list[str]]:
    """For (contradicts, partly) per row: each row's cell under `contradicts` and the notes to print under the
    table; no cells (no column) when no row is marked. Shared by `search` and `ask`."""
    cells = [CONTRADICTS_CELL if full else PARTLY_CELL if partly else "" for full, partly in flags]
    notes = [note for note, cell in ((CONTRADICTS_NOTE, CONTRADICTS_CELL), (PARTLY_NOTE, PARTLY_CELL)) if cell in cells]
    return (cells if notes else []), notes
