"""The `assistant` console script (and `python -m assistant`).

`assistant ask` first offers its arguments to a running `assistant serve` (assistant/commands/ask_warm.py), before the
CLI framework is imported: with a warm server, that import was most of what an answer cost `ask` beyond what it costs
the chat. Every other command, and an `ask` no server takes, goes to the CLI (assistant/cli.py).
"""

from __future__ import annotations

import sys

#: The shell's code for a command ended by Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130


def main() -> None:
    """Run `assistant` with this process's arguments."""
    args = sys.argv[1:]
    if args[:1] == ["ask"]:
        from assistant.commands.ask_warm import hand_over

        try:
            code = hand_over(args[1:])
        except KeyboardInterrupt:  # Ctrl-C while the server answers: it stops when the socket closes
            raise SystemExit(EXIT_INTERRUPTED) from None
        if code is not None:
            raise SystemExit(code)
    from assistant.cli import app

    app(prog_name="assistant")


if __name__ == "__main__":
    main()
