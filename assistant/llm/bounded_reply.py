"""Reading an LLM server's reply within bounds: a JSON body, or a stream of server-sent events, never held or decoded
beyond what any answer needs (issue 51).

Why our own event reader and not the `openai` client's: the client keeps an event's data whole before decoding it,
so one 60 MB event cost 510 MB of memory before the answer's size was checked; and its decoder let the
RecursionError of a deeply nested event escape as a traceback. Here the raw bytes are counted as they arrive: an event
over MAX_EVENT_BYTES or a reply over MAX_REPLY_BYTES is refused at that point, and JSON nested deeper than the decoder
goes is a ValueError like any other malformed reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

#: Far above any answer (512 tokens of JSON are a few KB): a larger reply is refused, not held in memory whole.
MAX_REPLY_BYTES = 8 * 1024 * 1024
#: One streamed event carries a piece of text of a few tokens, with some hundred bytes around it.
MAX_EVENT_BYTES = 256 * 1024


class MalformedReply(ValueError):
    """The reply is not JSON, is nested too deep, or is larger than any answer; the message says which."""


def decode_json(body: bytes | str) -> Any:
    """`body` decoded; MalformedReply for anything that is not JSON, including JSON nested too deep to decode."""
    try:
        return json.loads(body)
    except RecursionError:
        raise MalformedReply("JSON nested deeper than any answer") from None
    except ValueError as exc:
        raise MalformedReply(str(exc)) from None


def event_data(chunks: Iterable[bytes]) -> Iterator[str]:
    """The data of each server-sent event in the byte stream `chunks` (its `data:` lines joined), in order;
    MalformedReply as soon as one event passes MAX_EVENT_BYTES or the stream MAX_REPLY_BYTES."""
    pending = bytearray()
    data: list[bytes] = []
    size = total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_REPLY_BYTES:
            raise MalformedReply(f"a stream of over {MAX_REPLY_BYTES // 2**20} MB, more than any answer")
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line = bytes(pending[:end]).rstrip(b"\r")
            del pending[: end + 1]
            if not line and data:
                yield b"\n".join(data).decode("utf-8", "replace")
                data, size = [], 0
            elif line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
            size += len(line)
        if size + len(pending) > MAX_EVENT_BYTES:
            raise MalformedReply(f"an event of over {MAX_EVENT_BYTES // 1024} KB, more than any piece of an answer")
    if data:
        yield b"\n".join(data).decode("utf-8", "replace")
