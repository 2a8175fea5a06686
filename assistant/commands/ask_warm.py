"""`assistant ask` handed to a warm server before the CLI loads: the `assistant` script's first step
(assistant/__main__.py).

A warm server (`assistant serve`) answers as fast as the chat; what was left between them was `ask`'s own start-up,
tenths of a second spent importing the CLI framework (and the libraries it pulls in) to read arguments the server can
read itself. So the arguments go over as typed, with the working folder and the RADSEARCH_* variables (nothing else
of the environment), and the server reads them with the CLI's own declaration (assistant/commands/ask_cmd.py
`parse_arguments`). Only printing the answer is imported here, and only once the server has taken the question.
"""

from __future__ import annotations

import os


def hand_over(args: list[str]) -> int | None:
    """`ask`'s exit code once a warm server has answered `args` (what follows `ask` on the command line), or None
    when none takes them: no server runs, it runs under other settings, `--no-server`, `--help`, or arguments the CLI
    should report. The CLI then runs as if this had not been tried."""
    if "--help" in args:
        return None
    from assistant.warm.address import socket_path
    from assistant.warm.client import forwarded, offer
    from models.paths import DataPaths

    try:
        paths = DataPaths.from_env(os.environ)
        path = socket_path(paths, os.environ)
        cwd = os.getcwd()
    except (OSError, ValueError):  # a data folder or working folder the CLI will report
        return None
    offered = offer(path, args, cwd, forwarded(os.environ, paths.home))
    if offered is None:
        return None
    accepted, events = offered
    from rich.console import Console

    from assistant.commands.ask_output import print_events

    return print_events(events, accepted["query"], accepted["output"], Console(stderr=True))
