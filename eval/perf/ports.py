"""A free loopback port, for the servers the benchmarks (and tests) start: the chat, vLLM, a Ray head."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on at 127.0.0.1 right now (nothing here ever binds another address)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
