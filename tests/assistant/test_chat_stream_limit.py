"""Open heartbeat connections cannot stall the chat (issue 39, L4): about 20,000 of them, which need no sign-in,
used up the server's file descriptors (`ulimit -n` was 20,000), after which it accepted no connection at all.

Reproduced at a smaller scale: the chat is served by `assistant chat` in a child process whose descriptor limit is
lowered to FD_LIMIT, and one address opens more heartbeat streams than that. The chat must still answer a search from
another address; the streams beyond the per-client limit are refused with 429.
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from chat_fixtures import EFFUSION_QUERY, FIRST_INDEX, build_chat_index, free_port
from chat_process import wait_until_serving

from assistant.chat.service import MODE_SEARCH, ChatConfig
from models.paths import data_home

FD_LIMIT = 256  # the server's descriptor limit: what it has left after start-up, the heartbeats below exceed
HEARTBEATS = 300
ATTACKER, RESIDENT = "127.0.0.2", "127.0.0.3"


@pytest.fixture(scope="module")
def chat_port(tmp_path_factory: pytest.TempPathFactory, minilm) -> Iterator[int]:
    index = build_chat_index(tmp_path_factory.mktemp("streams") / "fixture-index", minilm)
    port = free_port()
    log = tmp_path_factory.mktemp("streams-log") / "chat.out"
    env = os.environ | {"RADSEARCH_HOME": str(data_home()), "PYTHONPATH": str(Path(__file__).parents[2])}

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    command = [sys.executable, "-m", "assistant.cli", "chat", "--port", str(port), "--index", str(index)]
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=env, stdout=sink, stderr=sink, preexec_fn=few_descriptors)
    try:
        wait_until_serving(server, f"http://127.0.0.1:{port}", log)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=60)


def _hold_heartbeats(port: int, count: int) -> list[socket.socket]:
    """`count` heartbeat streams from ATTACKER, as a page opens one (raw sockets: cheap to hold by the hundred)."""
    held = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(ATTACKER, 0))
        sock.sendall(f"GET /gradio_api/heartbeat/flood-{i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        held.append(sock)
    return held


def _statuses(socks: list[socket.socket], seconds: float) -> list[str]:
    """Each connection's status code (or "none" if the server sent nothing within `seconds`)."""
    found = {sock: "none" for sock in socks}
    with selectors.DefaultSelector() as waiting:
        for sock in socks:
            waiting.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while waiting.get_map() and time.monotonic() < deadline:
            for key, _ in waiting.select(timeout=max(0.0, deadline - time.monotonic())):
                head = key.fileobj.recv(64).split(b" ")  # type: ignore[union-attr]
                found[key.fileobj] = head[1].decode() if len(head) > 1 else "closed"  # type: ignore[index]
                waiting.unregister(key.fileobj)
    return [found[sock] for sock in socks]


def _search(port: int, query: str) -> str:
    """A search-only question through the chat's API (the page's `ask`), from RESIDENT: the report cards' HTML."""
    inputs = [query, [], MODE_SEARCH, "findings", 3, True, FIRST_INDEX, "bm25", "Any", "Any", "", ""]
    transport = httpx.HTTPTransport(local_address=RESIDENT)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", transport=transport, trust_env=False, timeout=60) as client:
        event = client.post("/gradio_api/call/ask", json={"data": inputs}).raise_for_status().json()["event_id"]
        stream = client.get(f"/gradio_api/call/ask/{event}").raise_for_status().text
    done = stream.split("event: complete\ndata: ", 1)
    assert len(done) == 2, stream[:500]
    _conversation, cards, *_ = json.loads(done[1].splitlines()[0])
    return cards


def test_open_heartbeats_of_one_address_do_not_stall_the_chat(chat_port: int) -> None:
    held = _hold_heartbeats(chat_port, HEARTBEATS)
    try:
        statuses = _statuses(held, seconds=10)
        started = time.monotonic()
        cards = _search(chat_port, EFFUSION_QUERY)
        assert 'data-report-id="cxr-001"' in cards and time.monotonic() - started < 30
        limit = ChatConfig().streams_per_client
        assert statuses.count("200") == limit and statuses.count("429") == HEARTBEATS - limit, statuses
    finally:
        for sock in held:
            sock.close()
