"""`ask`'s side of the warm server (assistant/warm/server.py): offer the arguments when a server answers at the socket,
else say so (None) and let `ask` answer in its own process. Imports stay light: this runs before the `assistant`
script has loaded anything (assistant/commands/ask_warm.py)."""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.rag.events import Note, Start, decode

__all__ = ["Note", "Start", "WarmError", "answers", "offer"]

#: How long a socket file may take to accept: a live server accepts at once (it queues while answering).
CONNECT_TIMEOUT_S = 1.0
#: The only environment variables a client hands over (issue 49: not its whole environment, which holds whatever
#: else the user's shell keeps, tokens included); the server reads its settings from them alone.
FORWARDED_PREFIX = "RADSEARCH_"


if TYPE_CHECKING:
    from assistant.rag.events import Event


class WarmError(ValueError):
    """The server refused the question as bad input (an empty query, a missing index...): `ask` exits 2."""


def _connect(path: Path) -> socket.socket | None:
    """A connection to the server at `path`, or None: nothing there, a socket file left by a killed server, or a
    socket or folder that is not this user's own (another user could place a server there to read the questions)."""
    from assistant.warm.address import private_folder_problem

    try:
        info = os.lstat(path)
    except OSError:  # absent, or a folder this user cannot enter (another user's)
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid() or private_folder_problem(path.parent):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(str(path))
    except OSError:  # a socket file left by a killed server
        sock.close()
        return None
    sock.settimeout(None)  # the answer takes as long as the model does; the server keeps its own deadline
    return sock


def forwarded(env: Mapping[str, str], home: Path) -> dict[str, str]:
    """What a client hands over of its environment: the RADSEARCH_* variables, with RADSEARCH_HOME the data folder
    whose server it found (resolved: XDG_DATA_HOME and HOME, which may have named it, are not sent)."""
    chosen = {key: value for key, value in env.items() if key.startswith(FORWARDED_PREFIX)}
    return chosen | {"RADSEARCH_HOME": str(home.expanduser().resolve())}


def answers(path: Path) -> bool:
    """Whether a server accepts connections at `path`."""
    sock = _connect(path)
    if sock is None:
        return False
    sock.close()
    return True


def offer(path: Path, args: list[str], cwd: str, env: dict[str, str]) -> tuple[dict[str, Any], Iterator[Event]] | None:
    """Offer `ask`'s arguments as typed, with the working folder and the settings' variables (`forwarded`; nothing
    else of `env` is sent), to the server at `path` (assistant/warm/server.py): how it will print the answer
    (`output`, the cleaned `query`) and the answer's events as `RagPipeline.iter_answer` gives them (after a Start and
    any Notes; without streaming, only the Answer after them); None when no server answers there or it does not take
    them (other settings, --no-server, arguments the CLI should report)."""
    sock = _connect(path)
    if sock is None:
        return None
    try:
        settings = {key: value for key, value in env.items() if key.startswith(FORWARDED_PREFIX)}
        sock.sendall(json.dumps({"argv": args, "cwd": cwd, "env": settings}).encode() + b"\n")
        lines = sock.makefile("r", encoding="utf-8")
        first = json.loads(lines.readline() or "{}")
    except (OSError, json.JSONDecodeError):
        sock.close()
        return None
    if first.get("kind") != "accepted":
        sock.close()
        return None
    return first, _events(lines, sock)


def _events(lines: Any, sock: socket.socket) -> Iterator[Event]:
    """The events after `accepted`, one a line, until the answer; ConnectionError when the server stops first."""
    from assistant.rag.answer import Answer

    try:
        for line in lines:
            event = json.loads(line)
            if event.get("kind") == "error":
                raise WarmError(event["message"])
            item = decode(event)
            yield item
            if isinstance(item, Answer):
                return
        raise ConnectionError("the warm server closed the connection before its answer was complete")
    finally:
        sock.close()
