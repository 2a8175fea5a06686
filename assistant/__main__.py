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
    """Run `assistant` with this process's arguments; with `--json`, a failure prints a JSON error object too
    (assistant/commands/json_errors.py)."""
    from assistant.commands import json_errors

    args = sys.argv[1:]
    if json_errors.wanted(args):
        raise SystemExit(json_errors.run(lambda: _command(args, standalone=False)))
    raise SystemExit(_command(args, standalone=True))


def _command(args: list[str], *, standalone: bool) -> int | None:
    """The exit code of the command `args` (the CLI exits itself when `standalone`)."""
    if args[:1] == ["ask"]:
        from assistant.commands.ask_warm import hand_over

        try:
            code = hand_over(args[1:])
        except KeyboardInterrupt:  # Ctrl-C while the server answers: it stops when the socket closes
            raise SystemExit(EXIT_INTERRUPTED) from None
        if code is not None:
            return code
    from assistant.cli import app

    return app(prog_name="assistant", standalone_mode=standalone)


if __name__ == "__main__":
    main()
