"""`--json` always prints one JSON object on stdout, errors included (issue 51).

`search`, `show` and `ask` with `--json` print their result as JSON for scripts; when they failed (exit 1: the warm
server stopped, an internal error; exit 2: bad input, a usage error) they printed nothing on stdout, so a script
parsing it got an empty string instead of a reason. Now every way such a command ends without its JSON ends with
`{"error": MESSAGE, "exit_code": CODE}` on stdout (the message is also on stderr, as without `--json`); exits 3-5
print the retrieval-only answer, with its `degraded_reason`, as before.

The messages are those the command printed with `print_error` (assistant/commands/output.py records them here) or
the usage error the CLI framework raised. Imports stay light: this wraps `ask`'s hand-over to a warm server too,
which runs before the CLI framework is loaded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

#: The commands whose `--json` makes this promise.
COMMANDS = ("search", "show", "ask")
#: Exit codes after which the command has printed its JSON itself (an answer, or a retrieval-only answer).
PRINTED = (0, 3, 4, 5)
#: The shell's code for a command ended by Ctrl-C.
INTERRUPTED = 130

_messages: list[str] = []


def record(message: str) -> None:
    """Keep an error message the command printed, for the JSON error object."""
    _messages.append(message)


def wanted(args: list[str]) -> bool:
    """Whether the command line (after `assistant`) is one of COMMANDS with `--json` among its options."""
    options = args[1 : args.index("--")] if "--" in args else args[1:]
    return bool(args) and args[0] in COMMANDS and "--json" in options


def run(command: Callable[[], int | None]) -> int:
    """Run `command` (its exit code, or None for 0) and print the JSON error object when it ends without its JSON:
    an exit code outside PRINTED, a usage error, an interruption or an exception (re-raised after)."""
    try:
        code = command() or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        code = INTERRUPTED
    except Exception as exc:
        kinds = {kind.__name__ for kind in type(exc).__mro__}  # the CLI framework's (Typer vendors click)
        if "Abort" in kinds:  # Ctrl-C inside the CLI
            code = INTERRUPTED
        elif "ClickException" in kinds:  # a usage error, shown as the CLI shows it
            exc.show()  # type: ignore[attr-defined]
            record(exc.format_message())  # type: ignore[attr-defined]
            code = exc.exit_code  # type: ignore[attr-defined]
        else:
            print_error_object(1, f"internal error: {type(exc).__name__}: {exc}")
            raise
    if code not in PRINTED:
        fallback = "interrupted" if code == INTERRUPTED else f"the command failed (exit {code})"
        print_error_object(code, "; ".join(_messages) or fallback)
    return code


def print_error_object(code: int, message: str) -> None:
    """`{"error": message, "exit_code": code}` on stdout, one line."""
    sys.stdout.write(json.dumps({"error": message, "exit_code": code}, ensure_ascii=False) + "\n")
    sys.stdout.flush()
