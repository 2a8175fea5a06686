"""Issue 51, low items of the HTTP LLM backend: a `/v1/models` listing nested too deep was reported as a timeout
(the completion call's, 30 s later) instead of a malformed reply (exit 5) at once, and one 60 MB streamed event cost
510 MB of memory before its size was checked. A real HTTP server on loopback that answers so; each in two forms.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assistant.llm.base import BackendMalformed
from assistant.llm.openai_backend import OpenAIBackend

MESSAGES = [{"role": "user", "content": "Blunting of the right costophrenic angle."}]
NESTED = b"[" * 100_000 + b"]" * 100_000
#: Twice the deadline the attacks were reported at is not needed: the backend's timeout here is this.
TIMEOUT_S = 8.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    models: bytes = b"{}"
    stream: bytes = b""
    closing: threading.Event


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._send("application/json", self.server.models)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        if not self.server.stream:  # a server that never answers a completion
            self.server.closing.wait()
            return
        self._send("text/event-stream", self.server.stream)

    def _send(self, content_type: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client refused it part-way
            self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.closing = threading.Event()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv
    finally:
        srv.closing.set()
        srv.shutdown()
        srv.server_close()


def _backend(server: _Server) -> OpenAIBackend:
    return OpenAIBackend(f"http://127.0.0.1:{server.server_address[1]}/v1", "m", timeout_s=TIMEOUT_S, max_retries=0)


def _event(chunk: dict) -> bytes:
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _delta(content: str, **extra: object) -> dict:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}], **extra}


# ------------------------------------------------------------------------ JSON nested deeper than any answer
def test_a_models_listing_nested_too_deep_is_malformed_at_once(server: _Server) -> None:
    """As the pipeline asks: the context size first, then the completion, from a server that never completes."""
    server.models = b'{"object": "list", "data": ' + NESTED + b"}"
    backend = _backend(server)
    start = time.monotonic()
    with pytest.raises(BackendMalformed, match="nested"):
        _ = backend.context_window
        backend.complete(MESSAGES)
    assert time.monotonic() - start < TIMEOUT_S / 2


def test_a_streamed_event_nested_too_deep_is_malformed(server: _Server) -> None:
    """Second form: the nesting inside one event of a streamed answer (it escaped as a RecursionError)."""
    server.stream = b'data: {"choices": [{"delta": {"content": "x"}, "x": ' + NESTED + b"}]}\n\ndata: [DONE]\n\n"
    with pytest.raises(BackendMalformed, match="nested"):
        list(_backend(server).stream(MESSAGES))


# ---------------------------------------------------------------------- one event larger than any answer
def _peak_while(work) -> int:
    """Peak bytes Python allocated (every thread) while `work()` ran."""
    tracemalloc.start()
    try:
        work()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def _consume(server: _Server) -> None:
    with pytest.raises(BackendMalformed, match="more than any"):
        list(_backend(server).stream(MESSAGES))


def test_one_huge_streamed_event_is_refused_before_it_is_held(server: _Server) -> None:
    server.stream = _event(_delta("x" * 60_000_000)) + b"data: [DONE]\n\n"
    assert _peak_while(lambda: _consume(server)) < 16 * 2**20


def test_one_huge_streamed_event_outside_its_text_is_refused_too(server: _Server) -> None:
    """Second form: the 60 MB in a field beside an empty piece of text (the size check counted the text only)."""
    server.stream = _event(_delta("", padding="y" * 60_000_000)) + _event(_delta("ok")) + b"data: [DONE]\n\n"
    assert _peak_while(lambda: _consume(server)) < 16 * 2**20
