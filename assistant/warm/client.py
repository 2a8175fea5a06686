"""`ask`'s side of the warm server (assistant/warm/server.py): hand the question over when a server answers at the
socket under the same settings, else say so (None) and let `ask` answer in its own process. Imports stay light: this
runs before `ask` would load anything."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.rag.answer import Answer, Retrieval

#: How long a socket file may take to accept: a live server accepts at once (it queues while answering).
CONNECT_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class Start:
    """Who answers, and whether a model is asked at all (the evidence alone asks none)."""

    model_label: str
    evidence_only: bool


@dataclass(frozen=True)
class Note:
    """A notice about the index the server loaded (e.g. built under older negation rules)."""

    text: str


#: What `ask` prints, in order: who answers, notices, the reports, the model's text, the answer.
Event = Start | Note | Retrieval | str | Answer


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


def ask_warm(
    path: Path, key: str, options: dict[str, Any], query: str, *, stream: bool = True
) -> Iterator[Event] | None:
    """The server's answer as `RagPipeline.iter_answer` gives it (after a Start and any Notes; without `stream`, only
    the Answer after them), or None when no server answers at `path`, or one started under other settings (`key`,
    assistant.warm.address.settings_key)."""
    sock = _connect(path)
    if sock is None:
        return None
    try:
        request = {"settings": key, "options": options, "query": query, "stream": stream}
        sock.sendall(json.dumps(request).encode() + b"\n")
        lines = sock.makefile("r", encoding="utf-8")
        first = json.loads(lines.readline() or "{}")
    except (OSError, json.JSONDecodeError):
        sock.close()
        return None
    if first.get("kind") in (None, "refused"):
        sock.close()
        return None
    return _events(first, lines, sock)


def _events(first: dict[str, Any], lines: Any, sock: socket.socket) -> Iterator[Event]:
    try:
        event = first
        while event:
            kind = event.get("kind")
            if kind == "error":
                raise WarmError(event["message"])
            if kind == "start":
                yield Start(event["model_label"], event["evidence_only"])
            elif kind == "note":
                yield Note(event["text"])
            elif kind == "retrieval":
                yield Retrieval.from_dict(event["retrieval"])
            elif kind == "piece":
                yield event["text"]
            elif kind == "answer":
                yield Answer.from_dict(event["answer"])
                return
            line = lines.readline()
            event = json.loads(line) if line else {}
        raise ConnectionError("the warm server closed the connection before its answer was complete")
    finally:
        sock.close()
