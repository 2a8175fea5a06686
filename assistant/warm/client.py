"""`ask`'s side of the warm server (assistant/warm/server.py): offer the arguments when a server answers at the socket,
else say so (None) and let `ask` answer in its own process. Imports stay light: this runs before the `assistant`
script has loaded anything (assistant/commands/ask_warm.py)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.rag.events import Note, Start, decode

__all__ = ["Note", "Start", "WarmError", "answers", "offer"]

#: How long a socket file may take to accept: a live server accepts at once (it queues while answering).
CONNECT_TIMEOUT_S = 1.0


if TYPE_CHECKING:
    from assistant.rag.events import Event


class WarmError(ValueError):
    """The server refused the question as bad input (an empty query, a missing index...): `ask` exits 2."""


def _connect(path: Path) -> socket.socket | None:
    if not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(str(path))
    except OSError:  # a socket file left by a killed server, or not a socket
        sock.close()
        return None
    sock.settimeout(None)  # the answer takes as long as the model does; the server keeps its own deadline
    return sock


def answers(path: Path) -> bool:
    """Whether a server accepts connections at `path`."""
    sock = _connect(path)
    if sock is None:
        return False
    sock.close()
    return True


def offer(path: Path, args: list[str], cwd: str, env: dict[str, str]) -> tuple[dict[str, Any], Iterator[Event]] | None:
    """Offer `ask`'s arguments as typed, with the working folder and the environment they are read in, to the server
    at `path` (assistant/warm/server.py): how it will print the answer (`output`, the cleaned `query`) and the
    answer's events as `RagPipeline.iter_answer` gives them (after a Start and any Notes; without streaming, only the
    Answer after them); None when no server answers there or it does not take them (other settings, --no-server,
    arguments the CLI should report)."""
    sock = _connect(path)
    if sock is None:
        return None
    try:
        sock.sendall(json.dumps({"argv": args, "cwd": cwd, "env": env}).encode() + b"\n")
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
